// The delivery suites' real parts (tests/integration/alerts_test.cpp,
// pr_delivery_test.cpp): the local servers twinbench sends to — an HTTP server
// for webhooks and the GitHub and GitLab APIs that checks every request against
// the forges' published contracts (tests/tools/fake_http.py), and a real SMTP
// server with STARTTLS and AUTH (tests/tools/fake_smtp.py, Debian's aiosmtpd) —
// run as child processes; and stored run histories written straight into a
// store (a night per group, its runs' metrics as the nightly reads them).
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_harness.h"
#include "harness/store/store.h"

namespace twinbench::testing {

// Debian's interpreter: python3-aiosmtpd is installed for it (ci/setup.sh).
inline const char* kSystemPython = "/usr/bin/python3";

// One server process, stopped (SIGTERM, then reaped) when destroyed.
class ServerProcess {
 public:
  // Starts `script` with `args` and waits for it to write its port.
  ServerProcess(const std::string& dir, const std::string& name, const std::string& script,
                std::vector<std::string> args)
      : port_file_(dir + "/" + name + ".port"), log_(dir + "/" + name + ".log") {
    std::filesystem::remove(port_file_);
    std::vector<std::string> argv = {kSystemPython, std::string(TWINBENCH_SOURCE_DIR) + "/tests/tools/" + script,
                                     "--port-file", port_file_};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c;
    for (auto& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    posix_spawn_file_actions_t files;
    posix_spawn_file_actions_init(&files);
    posix_spawn_file_actions_addopen(&files, 1, log_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&files, 1, 2);
    if (posix_spawn(&pid_, kSystemPython, &files, nullptr, c.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&files);
    for (int i = 0; i < 200 && pid_ > 0 && !std::filesystem::exists(port_file_); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (!std::filesystem::exists(port_file_)) ADD_FAILURE() << script << " did not start: " << slurp(log_);
    else port_ = std::stoi(slurp(port_file_));
  }
  ~ServerProcess() { stop(); }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  void stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  int port() const { return port_; }

 private:
  std::string port_file_, log_;
  pid_t pid_ = -1;
  int port_ = 0;
};

// tests/tools/fake_http.py: webhooks at /hook/..., GitHub at /github, GitLab at /gitlab/api/v4.
class FakeHttp {
 public:
  FakeHttp(const CliHarness& h, const std::string& name, int port = 0)
      : state_(h.path(name + ".state.json")),
        server_(h.dir().string(), name, "fake_http.py",
                {"--state-file", state_, "--contracts", std::string(TWINBENCH_SOURCE_DIR) + "/tests/data/delivery",
                 "--port", std::to_string(port)}) {}
  int port() const { return server_.port(); }
  std::string url(const std::string& path) const { return fmt::format("http://127.0.0.1:{}{}", port(), path); }
  nlohmann::json state() const { return nlohmann::json::parse(slurp(state_)); }
  // POST /_control/<what> with `body`.
  void control(const std::string& what, const nlohmann::json& body) const {
    const std::string file = state_ + ".control.json";
    std::ofstream(file) << body.dump();
    EXPECT_EQ(shell(fmt::format("curl -sf -o /dev/null -X POST --data-binary @{} {}", file, url("/_control/" + what))), 0);
  }
  void stop() { server_.stop(); }

 private:
  std::string state_;
  ServerProcess server_;
};

// tests/tools/fake_smtp.py with STARTTLS (a certificate made for 127.0.0.1) and AUTH as bot / s3cret-pw.
class FakeSmtp {
 public:
  explicit FakeSmtp(const CliHarness& h)
      : dir_(h.path("mail")), cert_(h.path("smtp-cert.pem")), server_(start(h)) {}
  int port() const { return server_.port(); }
  const std::string& ca() const { return cert_; }
  // The messages received, oldest first.
  std::vector<nlohmann::json> messages() const {
    std::vector<std::string> files;
    for (const auto& e : std::filesystem::directory_iterator(dir_))
      if (e.path().extension() == ".json") files.push_back(e.path().string());
    std::sort(files.begin(), files.end());
    std::vector<nlohmann::json> out;
    for (const auto& f : files) out.push_back(nlohmann::json::parse(slurp(f)));
    return out;
  }

 private:
  ServerProcess start(const CliHarness& h) {
    const std::string key = h.path("smtp-key.pem");
    EXPECT_EQ(shell("openssl req -x509 -newkey rsa:2048 -nodes -keyout " + key + " -out " + cert_ +
                    " -days 1 -subj /CN=localhost -addext subjectAltName=IP:127.0.0.1,DNS:localhost 2>/dev/null"),
              0);
    return ServerProcess(h.dir().string(), "smtp", "fake_smtp.py",
                         {"--maildir", dir_, "--cert", cert_, "--key", key, "--user", "bot", "--password", "s3cret-pw"});
  }
  std::string dir_, cert_;
  ServerProcess server_;
};

// `args` run by `harness` with `env` ("A=x B=y") exported first.
inline Result run_with_env(const CliHarness& harness, const std::string& env, const std::string& args) {
  const auto out = harness.path("cmd.out"), err = harness.path("cmd.err");
  const int code = shell((env.empty() ? "" : "export " + env + "; ") + harness.command(args) + " >" + out + " 2>" + err);
  return {code, slurp(out), slurp(err)};
}

// YYYY-MM-DD of today minus `days_ago` days (UTC).
inline std::string day_before_today(int days_ago) {
  const std::time_t t = std::time(nullptr) - static_cast<std::time_t>(days_ago) * 86400;
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday);
}

// A 40-hex commit of night (or ref) k.
inline std::string commit_of(int k) { return fmt::format("{:08x}", 0xc0de0000 + k) + std::string(32, 'a'); }

// One stored run as the nightly and branch analyses read it: its row and the metrics they judge.
struct HistoryRun {
  std::string case_name, variant, group, started_at, commit, branch = "main";
  int repeat = 0;
  double step_time = 0.1;
  double loss = 2.5;
  double peak = 1048576;
  RunStatus status = RunStatus::completed;
};

inline void store_runs(const std::string& location, const std::vector<HistoryRun>& runs) {
  store::Store db(location);
  std::vector<store::RunBundle> bundles;
  for (const auto& h : runs) {
    store::RunBundle b;
    b.run.run_id = store::new_uuid();
    b.run.group_id = h.group;
    b.run.case_name = h.case_name;
    b.run.variant = h.variant;
    b.run.repeat_index = h.repeat;
    b.run.status = h.status;
    b.run.reason = h.status == RunStatus::completed ? "" : "planted failure";
    b.run.started_at = h.started_at;
    b.run.git_commit = h.commit;
    b.run.git_branch = h.branch;
    b.run.provenance_json = nlohmann::json({{"git_commit", h.commit}, {"git_branch", h.branch}, {"device_name", "cpu"},
                                            {"host_cores", 2}, {"cpu_model", "test cpu"}})
                                .dump();
    if (h.status == RunStatus::completed)
      b.metrics = {{"step_time_median_s", h.step_time}, {"final_loss", h.loss}, {"peak_memory_bytes", h.peak}};
    bundles.push_back(std::move(b));
  }
  db.import_runs(bundles);
}

}  // namespace twinbench::testing
