// base/env_number.h: the one parse of numeric TWINBENCH_* settings.
#include "harness/base/env_number.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace {

using twinbench::env_number;

constexpr const char* kName = "TWINBENCH_TEST_ENV_NUMBER";

std::string refusal(const char* value, double low, double high, bool low_open = false) {
  setenv(kName, value, 1);
  try {
    env_number(kName, 1, low, high, "seconds", low_open);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(EnvNumber, UnsetOrEmptyIsTheFallbackAndAValueInRangeIsRead) {
  unsetenv(kName);
  EXPECT_EQ(env_number(kName, 30, 0, 86400), 30);
  setenv(kName, "", 1);
  EXPECT_EQ(env_number(kName, 30, 0, 86400), 30);
  setenv(kName, "2.5", 1);
  EXPECT_EQ(env_number(kName, 30, 0, 86400), 2.5);
  setenv(kName, "0", 1);
  EXPECT_EQ(env_number(kName, 30, 0, 86400), 0);
  EXPECT_EQ(env_number(kName, 30, 0, 0), 0);
  unsetenv(kName);
}

TEST(EnvNumber, AnythingElseIsRefusedNamingTheSettingItsValueAndTheRange) {
  EXPECT_EQ(refusal("5s", 0, 86400), "TWINBENCH_TEST_ENV_NUMBER=5s: expected seconds in [0, 86400]");
  EXPECT_EQ(refusal("nan", 0, 86400), "TWINBENCH_TEST_ENV_NUMBER=nan: expected seconds in [0, 86400]");
  EXPECT_EQ(refusal("inf", 0, 86400), "TWINBENCH_TEST_ENV_NUMBER=inf: expected seconds in [0, 86400]");
  EXPECT_EQ(refusal("-1", 0, 86400), "TWINBENCH_TEST_ENV_NUMBER=-1: expected seconds in [0, 86400]");
  EXPECT_EQ(refusal("86401", 0, 86400), "TWINBENCH_TEST_ENV_NUMBER=86401: expected seconds in [0, 86400]");
  EXPECT_EQ(refusal("0", 0, 86400, /*low_open=*/true), "TWINBENCH_TEST_ENV_NUMBER=0: expected seconds in (0, 86400]");
  EXPECT_EQ(refusal("0.001", 0, 86400, /*low_open=*/true), "");
  unsetenv(kName);
}

}  // namespace
