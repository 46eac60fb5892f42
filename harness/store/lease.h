// Leases of a server store's running runs, and watching the server under them
// (docs/fleet.md). A runner on one host cannot see whether the process of a
// run started on another host is alive, so a run on a server holds a lease:
// begin_run sets runs.lease_expires_at to the server's clock plus the lease
// length, and a LeaseKeeper thread of the writing Store renews it every
// quarter of that length, over its own connection, until the run is finished.
// A run whose lease lapsed is stale: recover_stale_runs finishes it as
// interrupted. Between renewals the keeper probes the server every few
// seconds, so that its Store learns within seconds that the server went away
// (and spills, spill.h) — not at its next batch of steps — and connects again
// with backoff until it is back.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace twinbench::store {

namespace backend {
class Connection;
}

// The lease length in seconds: $TWINBENCH_LEASE_S (a positive number; tests
// use a few seconds), else 60. std::invalid_argument for a value that is not one.
double lease_seconds();
// How often the keeper probes the server while it holds leases:
// $TWINBENCH_PROBE_S, else 2 s (never longer than a quarter of the lease).
double probe_seconds();

class LeaseKeeper {
 public:
  // Renews over its own connection to `location`, every lease_s / 4 seconds;
  // `notice` (may be empty) hears when the server is lost and when it is back.
  LeaseKeeper(std::string location, double lease_s, std::function<void(const std::string&)> notice = {});
  ~LeaseKeeper();  // stops renewing (the leases then lapse)
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  // Renew this run's lease from now on, until it is released.
  void hold(const std::string& run_id);
  void release(const std::string& run_id);
  // Whether the server answered the last probe or renewal.
  bool online() const { return online_; }
  // How long the server has been away (zero while online).
  std::chrono::milliseconds offline_for() const;
  // How many times the server came back after the keeper lost it: a
  // connection older than the latest return talks to a server process that
  // is gone, and its Store connects again before using it.
  uint64_t returns() const { return returns_; }

 private:
  void loop();
  // Renews every held lease once.
  void renew(backend::Connection& db);
  void set_online(bool online);

  std::string location_;
  double lease_s_, probe_s_;
  std::function<void(const std::string&)> notice_;
  std::atomic<bool> online_{true};
  std::atomic<int64_t> lost_at_ms_{0};  // steady clock, when the server was found gone
  std::atomic<uint64_t> returns_{0};
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::set<std::string> runs_;
  std::thread thread_;
};

}  // namespace twinbench::store
