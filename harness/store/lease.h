// Leases of a server store's running runs (docs/fleet.md). A runner on one
// host cannot see whether the process of a run started on another host is
// alive, so a run on a server holds a lease: begin_run sets
// runs.lease_expires_at to the server's clock plus the lease length, and a
// LeaseKeeper thread of the writing Store renews it every quarter of that
// length, over its own connection, until the run is no longer running. A run
// whose lease lapsed is stale: recover_stale_runs finishes it as interrupted.
#pragma once

#include <condition_variable>
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

class LeaseKeeper {
 public:
  // Renews over its own connection to `location`, every lease_s / 4 seconds.
  LeaseKeeper(std::string location, double lease_s);
  ~LeaseKeeper();  // stops renewing (the leases then lapse)
  LeaseKeeper(const LeaseKeeper&) = delete;
  LeaseKeeper& operator=(const LeaseKeeper&) = delete;

  // Renew this run's lease from now on, until it is released or finished.
  void hold(const std::string& run_id);
  void release(const std::string& run_id);

 private:
  void loop();
  // Renews every held lease once; drops the runs that are no longer running.
  void renew(backend::Connection& db);

  std::string location_;
  double lease_s_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::set<std::string> runs_;
  std::thread thread_;
};

}  // namespace twinbench::store
