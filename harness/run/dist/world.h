// The data-parallel world one process belongs to: rank, size and the collectives
// the training loop needs, on PyTorch's own c10d process groups (Gloo on CPU, NCCL
// for CUDA devices in CUDA builds), rendezvoused through c10d's TCPStore.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace twinbench::dist {

struct WorldOptions {
  int rank = 0;
  int size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::chrono::seconds timeout{300};  // rendezvous and every collective
  torch::Device device = torch::kCPU;  // its runtime names the backend: CPU -> Gloo, CUDA -> NCCL
};

// A collective or the rendezvous failed: a peer died, hung or never came. The
// process cannot continue training; its launcher (if any) reports which rank failed.
class PeerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The rendezvous could not start: bad address or the master port is taken.
class RendezvousError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A collective in flight. wait() returns when it has completed (on a device:
// when the device's current stream may use its result) and throws PeerError
// when it failed.
class Pending {
 public:
  virtual ~Pending() = default;
  virtual void wait() = 0;
};

class World {
 public:
  // Joins the world: rank 0 hosts the TCPStore on master_addr:master_port. Blocks
  // until all `size` ranks have joined or `timeout` passes (RendezvousError / PeerError).
  explicit World(const WorldOptions& options);
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  int rank() const { return options_.rank; }
  int size() const { return options_.size; }
  const std::string& backend() const { return backend_; }
  const torch::Device& device() const { return options_.device; }

  // In place, over all ranks. Every rank must call them in the same order.
  void sum(std::vector<torch::Tensor>& tensors);
  void max(std::vector<torch::Tensor>& tensors);
  void min(std::vector<torch::Tensor>& tensors);
  void broadcast_from_rank0(std::vector<torch::Tensor>& tensors);
  void barrier();

  // Convenience for host values: one value per rank, indexed by rank.
  std::vector<double> gather(double value);

  // What sharded data parallel is made of (collectives.h composes them), started
  // and returned in flight. Every backend: `input` of every rank into
  // outputs[rank] (all the same size as `input`), and a sum in place.
  std::unique_ptr<Pending> start_all_gather(std::vector<torch::Tensor>& outputs, torch::Tensor& input);
  std::unique_ptr<Pending> start_sum(std::vector<torch::Tensor>& tensors);
  // Native flat collectives (NCCL; Gloo in recent LibTorch, not 1.13's):
  // output [size * n] <- every rank's input [n] in rank order, and output [n] <-
  // the SUM over ranks of their input [size * n]'s piece for this rank.
  std::unique_ptr<Pending> start_all_gather_into(torch::Tensor& output, torch::Tensor& input);
  std::unique_ptr<Pending> start_reduce_scatter_into(torch::Tensor& output, torch::Tensor& input);

 private:
  struct Impl;
  WorldOptions options_;
  std::string backend_;
  std::unique_ptr<Impl> impl_;
};

// Joins the job's world (one worker's side of a launch, launcher.h) on a helper
// thread while this one watches for a stop request: a rendezvous can wait
// minutes for missing ranks, and a signal only interrupts the system call of
// whichever thread it lands on. A stop during the rendezvous is the user's,
// not a failed rendezvous: the worker exits at once with kInterruptedExitCode
// (nothing of its own is stored yet; its launcher stores the run as
// interrupted) — _Exit, since the joining thread cannot be cancelled and must
// not meet static destructors.
std::unique_ptr<World> join_world(const WorldOptions& options);

}  // namespace twinbench::dist
