// Worker processes of a data-parallel job (see launcher.h).
#include "harness/run/dist/launcher.h"

#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "harness/base/interrupt.h"
#include "harness/base/spawn.h"
#include "harness/base/temp_dir.h"

namespace twinbench::dist {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Worker {
  int rank = 0;
  pid_t pid = -1;
  bool running = true;
  bool stopped = false;  // signalled by the launcher after another rank failed
  int status = 0;        // from waitpid
  fs::path error_file;
};

std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string describe(const Worker& w) {
  if (WIFSIGNALED(w.status)) {
    const int sig = WTERMSIG(w.status);
    const char* abbrev = sigabbrev_np(sig);
    return fmt::format("rank {} was killed by signal {} (SIG{})", w.rank, sig, abbrev ? abbrev : "?");
  }
  const int code = WEXITSTATUS(w.status);
  const std::string error = first_line(w.error_file);
  if (code == kPeerLostExitCode)
    return fmt::format("rank {} lost its peers{}", w.rank, error.empty() ? "" : ": " + error);
  return fmt::format("rank {} exited with code {}{}", w.rank, code, error.empty() ? "" : ": " + error);
}

// A failure's own cause ranks above "a peer went away", which is its echo.
bool is_cause(const Worker& w) { return !(WIFEXITED(w.status) && WEXITSTATUS(w.status) == kPeerLostExitCode); }

// Exit code 3: the worker stopped after an agreed step because a stop was requested.
// A worker still starting up when the interrupt came dies of it instead.
bool interrupted(const Worker& w) {
  return (WIFEXITED(w.status) && WEXITSTATUS(w.status) == kInterruptedExitCode) ||
         (WIFSIGNALED(w.status) && WTERMSIG(w.status) == SIGINT);
}

bool failed(const Worker& w) { return !(WIFEXITED(w.status) && WEXITSTATUS(w.status) == 0); }

void reap(std::vector<Worker>& workers) {
  for (auto& w : workers) {
    if (!w.running) continue;
    int status = 0;
    if (waitpid(w.pid, &status, WNOHANG) == w.pid) {
      w.running = false;
      w.status = status;
    }
  }
}

bool any_running(const std::vector<Worker>& workers) {
  for (const auto& w : workers)
    if (w.running) return true;
  return false;
}

void signal_all(const std::vector<Worker>& workers, int sig) {
  for (const auto& w : workers)
    if (w.running) kill(w.pid, sig);
}

// Polls until no worker runs or `deadline` passes.
void wait_until(std::vector<Worker>& workers, Clock::time_point deadline) {
  while (any_running(workers) && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    reap(workers);
  }
}

}  // namespace

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error(fmt::format("socket(): {}", std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  close(fd);
  if (!ok) throw std::runtime_error(fmt::format("cannot find a free TCP port: {}", std::strerror(errno)));
  return ntohs(addr.sin_port);
}

namespace {

std::vector<std::string> worker_argv(const std::string& program, const std::vector<std::string>& args, int rank) {
  std::vector<std::string> argv{program};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--rank", std::to_string(rank)});
  return argv;
}

// A worker that ended on its own with an error (not by obeying a stop).
bool failed_on_its_own(const Worker& w) { return !w.running && failed(w) && !interrupted(w); }

// Sleeps until `until` in short slices, reaping as it goes; returns early when
// a stop is requested or a worker failed.
void watch_until(std::vector<Worker>& workers, Clock::time_point until) {
  while (Clock::now() < until) {
    std::this_thread::sleep_for(std::min<Clock::duration>(std::chrono::milliseconds(5), until - Clock::now()));
    reap(workers);
    if (stop_requested() || std::any_of(workers.begin(), workers.end(), failed_on_its_own)) return;
  }
}

}  // namespace

LaunchResult launch(const std::vector<std::string>& args, const LaunchOptions& o) {
  const auto start = Clock::now();
  const std::string program = self_path();
  const TempDir scratch("twinbench-launch");  // the workers' error files
  const fs::path& dir = scratch.path();

  // Starting: one worker per interval, reaping and watching in between, so that
  // a stop request or a failed worker ends the spawning at once.
  std::vector<Worker> workers;
  workers.reserve(static_cast<size_t>(std::max(0, o.nproc)));
  const auto interval = std::chrono::microseconds(1'000'000 / kMaxSpawnsPerSecond);
  for (int rank = 0; rank < o.nproc; ++rank) {
    if (rank > 0) watch_until(workers, Clock::now() + interval);
    if (stop_requested() || std::any_of(workers.begin(), workers.end(), failed_on_its_own)) break;
    Worker w;
    w.rank = rank;
    w.error_file = dir / fmt::format("rank{}.err", rank);
    SpawnOptions spawn_options;
    spawn_options.argv = worker_argv(program, args, rank);
    spawn_options.env = {{"TWINBENCH_THREADS", std::to_string(o.threads_per_worker)},
                         {"TWINBENCH_ERROR_FILE", w.error_file.string()}};
    spawn_options.stdout_path = "/dev/null";  // rank 0's results go to the store, not the terminal
    spawn_options.die_with_parent = true;     // a killed launcher leaves no orphans
    if (rank == 0 && o.rank0_fd >= 0) spawn_options.inherit_fds.push_back(o.rank0_fd);
    try {
      w.pid = spawn(spawn_options);
    } catch (const std::exception&) {  // fork failed (process limit): leave nothing behind
      signal_all(workers, SIGKILL);
      wait_until(workers, Clock::now() + std::chrono::seconds(5));
      throw;
    }
    workers.push_back(w);
  }

  // Watching. A stop request seen before any failure makes the run interrupted,
  // whatever the workers then do (one killed mid-rendezvous exits with an error).
  bool stopping = false, failing = false;
  while (any_running(workers)) {
    if (!stopping && !failing && stop_requested()) {
      stopping = true;
      signal_all(workers, SIGINT);  // workers agree to stop after the same step
      wait_until(workers, Clock::now() + o.stop_grace);
      signal_all(workers, SIGKILL);  // a worker that cannot stop in time (a long step, a stuck call)
      wait_until(workers, Clock::now() + std::chrono::seconds(1));
      break;
    }
    if (!stopping && std::any_of(workers.begin(), workers.end(), failed_on_its_own)) {
      failing = true;
      // Give the real cause a moment to surface before stopping the rest.
      wait_until(workers, Clock::now() + std::chrono::milliseconds(500));
      for (auto& w : workers) w.stopped = w.running;
      signal_all(workers, SIGTERM);
      wait_until(workers, Clock::now() + o.grace);
      signal_all(workers, SIGKILL);
      wait_until(workers, Clock::now() + std::chrono::seconds(5));
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    reap(workers);
  }
  // A failure found before the stop, or one that ended the spawning, stands.
  if (!stopping && !failing && std::any_of(workers.begin(), workers.end(), failed_on_its_own)) failing = true;
  if (!failing && stop_requested()) stopping = true;

  LaunchResult result;
  // Blame the lowest rank that failed on its own, else one that lost its peers;
  // never one the launcher stopped, nor one that obeyed a forwarded interrupt.
  const auto candidate = [&](const Worker& w, bool cause_only) {
    return !w.running && !w.stopped && failed(w) && !interrupted(w) && (!cause_only || is_cause(w));
  };
  const Worker* blamed = nullptr;
  if (!stopping)
    for (const bool cause_only : {true, false})
      for (const auto& w : workers)
        if (!blamed && candidate(w, cause_only)) blamed = &w;
  if (blamed) {
    result.failed_rank = blamed->rank;
    result.reason = describe(*blamed);
  } else if (stopping || std::any_of(workers.begin(), workers.end(), interrupted)) {
    result.interrupted = true;
    result.reason = static_cast<int>(workers.size()) < o.nproc
                        ? fmt::format("stopped by request while starting workers ({} of {} started)",
                                      workers.size(), o.nproc)
                        : "stopped by request";
  } else {
    result.ok = true;
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace twinbench::dist
