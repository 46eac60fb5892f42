// The base layer's child processes and temporary directories: argv without a
// shell, extra environment, redirection, exit codes and signals, cleanup.
#include <sys/wait.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "harness/base/spawn.h"
#include "harness/base/temp_dir.h"

namespace twinbench {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

ExitStatus wait_for(pid_t pid) {
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return exit_status_of(status);
}

TEST(TempDir, IsPrivateAndRemovedUnlessKept) {
  std::filesystem::path gone, kept;
  {
    TempDir t("twinbench-test");
    gone = t.path();
    EXPECT_TRUE(std::filesystem::is_directory(gone));
    std::ofstream(t.file("x")) << "data";
  }
  EXPECT_FALSE(std::filesystem::exists(gone));
  {
    TempDir t("twinbench-test");
    kept = t.path();
    t.keep();
  }
  EXPECT_TRUE(std::filesystem::exists(kept));
  std::filesystem::remove_all(kept);
}

TEST(Spawn, ArgumentsNeedNoQuotingAndOutputIsRedirected) {
  TempDir t("twinbench-spawn");
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "printf '%s|%s' \"$1\" \"$SPAWN_TEST\"; echo oops >&2; exit 3", "sh", "a b; $(x)"};
  o.env = {{"SPAWN_TEST", "value with spaces"}};
  o.stdout_path = t.file("out");
  o.stderr_path = t.file("err");
  const ExitStatus s = wait_for(spawn(o));
  EXPECT_EQ(s.exit_code, 3);
  EXPECT_EQ(s.term_signal, 0);
  EXPECT_EQ(slurp(t.file("out")), "a b; $(x)|value with spaces");
  EXPECT_EQ(slurp(t.file("err")), "oops\n");
}

TEST(Spawn, MissingProgramExits127WithTheReason) {
  TempDir t("twinbench-spawn");
  SpawnOptions o;
  o.argv = {"/no/such/trainer"};
  o.stderr_path = t.file("err");
  EXPECT_EQ(wait_for(spawn(o)).exit_code, 127);
  EXPECT_NE(slurp(t.file("err")).find("/no/such/trainer: cannot start"), std::string::npos);
}

TEST(Spawn, SignalAndWorkingDirectory) {
  TempDir t("twinbench-spawn");
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c", "pwd; kill -TERM $$"};
  o.working_dir = t.path().string();
  o.stdout_path = t.file("out");
  const ExitStatus s = wait_for(spawn(o));
  EXPECT_EQ(s.exit_code, -1);
  EXPECT_EQ(s.term_signal, SIGTERM);
  EXPECT_EQ(slurp(t.file("out")), std::filesystem::canonical(t.path()).string() + "\n");
}

}  // namespace
}  // namespace twinbench
