// One expectation for the store suites: an action throws StoreError whose
// message names every expected part.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "harness/store/store.h"

namespace twinbench::testing {

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Expects `action` to throw store::StoreError with every one of `parts` in its message.
inline void expect_store_error(const std::function<void()>& action, const std::vector<std::string>& parts) {
  try {
    action();
    ADD_FAILURE() << "no StoreError";
  } catch (const store::StoreError& e) {
    for (const auto& part : parts) EXPECT_TRUE(contains(e.what(), part)) << e.what();
  }
}

}  // namespace twinbench::testing
