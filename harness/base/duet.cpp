// A lockstep duet of processes (see duet.h).
#include "harness/base/duet.h"

#include <fmt/format.h>
#include <signal.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

namespace twinbench {

namespace {

using Clock = std::chrono::steady_clock;

struct Child {
  pid_t pid = -1;
  bool running = true;
  int status = 0;
};

void reap(std::vector<Child>& children) {
  for (auto& c : children) {
    if (!c.running) continue;
    int status = 0;
    if (waitpid(c.pid, &status, WNOHANG) == c.pid) c.running = false, c.status = status;
  }
}

bool any_running(const std::vector<Child>& children) {
  for (const auto& c : children)
    if (c.running) return true;
  return false;
}

// The side and whatever it started (a launcher's workers): its process group.
void kill_group(const Child& c) {
  if (c.running) kill(-c.pid, SIGKILL), kill(c.pid, SIGKILL);
}

void wait_until(std::vector<Child>& children, Clock::time_point deadline) {
  for (reap(children); any_running(children) && Clock::now() < deadline; reap(children))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

// `width` of the CPUs this process may use, drawn from `order`; empty when that is all of them.
std::vector<int> shared_cpus(int width, std::mt19937_64& order) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (width <= 0 || sched_getaffinity(0, sizeof(set), &set) != 0) return {};
  std::vector<int> allowed;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) allowed.push_back(c);
  if (width >= static_cast<int>(allowed.size())) return {};
  std::shuffle(allowed.begin(), allowed.end(), order);
  allowed.resize(static_cast<size_t>(width));
  std::sort(allowed.begin(), allowed.end());
  return allowed;
}

}  // namespace

DuetResult run_duet(std::vector<SpawnOptions> sides, std::mt19937_64& order, const DuetOptions& o) {
  const auto start = Clock::now();
  DuetResult result;
  result.cpus = shared_cpus(o.cpus_per_side, order);
  std::vector<Child> children;
  std::vector<int> ends;  // the conductor's
  const auto abandon = [&] {
    for (const auto& c : children) kill_group(c);
    wait_until(children, Clock::now() + std::chrono::seconds(5));
    for (const int fd : ends) close(fd);
  };
  for (auto& side : sides) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
      abandon();
      throw std::runtime_error(fmt::format("lockstep: socketpair(): {}", std::strerror(errno)));
    }
    side.argv.insert(side.argv.end(), {"--lockstep-fd", std::to_string(pair[1])});
    side.inherit_fds.push_back(pair[1]);
    side.new_process_group = true;  // a hung side is killed with its workers
    side.die_with_parent = true;
    side.cpus = result.cpus;
    Child child;
    try {
      child.pid = spawn(side);
    } catch (...) {
      close(pair[0]);
      close(pair[1]);
      abandon();
      throw;
    }
    close(pair[1]);  // the child's now: its death closes the last copy, which the conductor sees
    children.push_back(child);
    ends.push_back(pair[0]);
  }

  result.conducted = lockstep::conduct(ends, order, o.conduct);
  result.sides.resize(children.size());
  for (size_t i = 0; i < children.size(); ++i) {
    result.sides[i].report = result.conducted.sides[i];
    if (result.sides[i].report.end == lockstep::SideEnd::kHung) {
      kill_group(children[i]);
      result.sides[i].killed = true;
    }
  }
  wait_until(children, Clock::now() + std::chrono::duration_cast<Clock::duration>(o.exit_timeout));
  for (size_t i = 0; i < children.size(); ++i)
    if (children[i].running) {
      kill_group(children[i]);
      result.sides[i].killed = true;
    }
  wait_until(children, Clock::now() + std::chrono::seconds(5));
  for (size_t i = 0; i < children.size(); ++i) result.sides[i].exit = exit_status_of(children[i].status);
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace twinbench
