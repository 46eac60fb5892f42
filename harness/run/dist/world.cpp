// c10d process groups behind World (see world.h). Which backend, and how its
// process group is made, is the device runtime's (DeviceRuntime::process_group):
// this file only holds the rendezvous and runs collectives on what it gets.
#include "harness/run/dist/world.h"
#include "models/device/runtime.h"
#include "models/torch_compat.h"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <thread>

#include "harness/base/interrupt.h"
#include "harness/run/dist/launcher.h"

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

namespace twinbench::dist {

namespace {

bool contains(const std::string& text, const char* needle) { return text.find(needle) != std::string::npos; }

// c10 errors carry a C++ backtrace in what(); users need the first line.
std::string brief(const std::exception& e) {
  if (const auto* c10 = dynamic_cast<const c10::Error*>(&e)) return c10->what_without_backtrace();
  return e.what();
}

PeerError peer_error(const char* what, const std::exception& e) {
  return PeerError(fmt::format("{} across ranks failed (a peer rank probably died or hung): {}", what, brief(e)));
}

// Until the backend's worker thread lets go of a finished collective, the tensors
// it names stay allocated, whoever else dropped them: a rank read its resident state
// up to two gathered units high (Collectives::worker_releases_late). The wait is
// bounded: a backend that keeps its works longer costs at most this once a process.
constexpr auto kReleaseWait = std::chrono::milliseconds(200);
std::atomic<bool> g_release_waits{true};  // false once a wait ran out

void await_release(const c10::intrusive_ptr<::c10d::Work>& work) {
  if (!g_release_waits.load(std::memory_order_relaxed)) return;
  const auto until = std::chrono::steady_clock::now() + kReleaseWait;
  while (work.use_count() > 1) {
    if (std::chrono::steady_clock::now() > until) {
      g_release_waits = false;
      return;
    }
    std::this_thread::yield();
  }
}

// A c10d Work behind Pending.
class InFlight final : public Pending {
 public:
  InFlight(const char* what, c10::intrusive_ptr<::c10d::Work> work, bool releases_late)
      : what_(what), work_(std::move(work)), releases_late_(releases_late) {}
  void wait() override {
    if (!work_) return;
    try {
      work_->wait();
    } catch (const std::exception& e) {
      work_.reset();
      throw peer_error(what_, e);
    }
    if (releases_late_) await_release(work_);
    work_.reset();
  }
  ~InFlight() override {
    // A collective must not outlive its tensors: one never waited for (an error
    // unwound past it) is waited for here, its failure already reported.
    try {
      if (work_) work_->wait();
    } catch (const std::exception&) {
    }
  }

 private:
  const char* what_;
  c10::intrusive_ptr<::c10d::Work> work_;
  bool releases_late_;
};

}  // namespace

struct World::Impl {
  c10::intrusive_ptr<::c10d::Store> store;
  c10::intrusive_ptr<compat::CollectiveBackend> group;
  bool releases_late = false;  // Collectives::worker_releases_late of the device's backend

  template <typename MakeWork>
  void run(const char* what, MakeWork make_work) {
    start(what, make_work)->wait();
  }
  // A collective started; a failure to start is a PeerError like a failure to finish.
  template <typename MakeWork>
  std::unique_ptr<Pending> start(const char* what, MakeWork make_work) {
    try {
      return std::make_unique<InFlight>(what, make_work(), releases_late);
    } catch (const PeerError&) {
      throw;
    } catch (const std::exception& e) {
      throw peer_error(what, e);
    }
  }
};

World::World(const WorldOptions& o) : options_(o), impl_(std::make_unique<Impl>()) {
  if (o.size < 1 || o.rank < 0 || o.rank >= o.size)
    throw std::invalid_argument(fmt::format("rank {} is not in a world of size {}", o.rank, o.size));
  if (o.master_port < 1 || o.master_port > 65535)
    throw std::invalid_argument(fmt::format("master port {} is not a TCP port (1-65535)", o.master_port));
  const auto timeout = std::chrono::duration_cast<std::chrono::milliseconds>(o.timeout);
  ::c10d::TCPStoreOptions store_options;
  store_options.port = static_cast<std::uint16_t>(o.master_port);
  store_options.isServer = o.rank == 0;
  store_options.numWorkers = static_cast<std::size_t>(o.size);
  store_options.waitWorkers = true;
  store_options.timeout = timeout;
  const std::string where = fmt::format("{}:{}", o.master_addr, o.master_port);
  try {
    impl_->store = c10::make_intrusive<::c10d::TCPStore>(o.master_addr, store_options);
  } catch (const std::exception& e) {
    const std::string message = brief(e);
    if (contains(message, "already in use") || contains(message, "EADDRINUSE"))
      throw RendezvousError(fmt::format("master port {} on {} is already in use; pick another with --master-port",
                                        o.master_port, o.master_addr));
    if (contains(message, "imed out") || contains(message, "timeout"))
      throw PeerError(fmt::format("rendezvous at {} did not complete within {} s: not all {} ranks joined (rank {} waited)",
                                  where, o.timeout.count(), o.size, o.rank));
    throw RendezvousError(fmt::format("rendezvous at {} failed: {}", where, message));
  }
  // The device kind's collectives (DeviceRuntime::process_group): Gloo on the CPU, NCCL on CUDA.
  const device::DeviceRuntime& runtime = device::runtime_for(o.device);
  try {
    impl_->group = runtime.process_group(impl_->store, device::GroupOptions{o.rank, o.size, timeout, o.master_addr});
    backend_ = runtime.collectives().backend;
    impl_->releases_late = runtime.collectives().worker_releases_late;
  } catch (const std::invalid_argument&) {
    throw;
  } catch (const std::exception& e) {
    throw PeerError(fmt::format("rendezvous at {} did not complete within {} s (rank {} of {}): {}", where,
                                o.timeout.count(), o.rank, o.size, brief(e)));
  }
}

World::~World() = default;

void World::sum(std::vector<torch::Tensor>& tensors) {
  impl_->run("all-reduce (sum)", [&] { return impl_->group->allreduce(tensors); });
}

void World::max(std::vector<torch::Tensor>& tensors) {
  ::c10d::AllreduceOptions opts;
  opts.reduceOp = ::c10d::ReduceOp::MAX;
  impl_->run("all-reduce (max)", [&] { return impl_->group->allreduce(tensors, opts); });
}

void World::min(std::vector<torch::Tensor>& tensors) {
  ::c10d::AllreduceOptions opts;
  opts.reduceOp = ::c10d::ReduceOp::MIN;
  impl_->run("all-reduce (min)", [&] { return impl_->group->allreduce(tensors, opts); });
}

void World::broadcast_from_rank0(std::vector<torch::Tensor>& tensors) {
  impl_->run("broadcast", [&] { return impl_->group->broadcast(tensors); });
}

void World::barrier() {
  impl_->run("barrier", [&] { return impl_->group->barrier(); });
}

std::unique_ptr<Pending> World::start_all_gather(std::vector<torch::Tensor>& outputs, torch::Tensor& input) {
  std::vector<std::vector<torch::Tensor>> out{outputs};
  std::vector<torch::Tensor> in{input};
  return impl_->start("all-gather", [&] { return impl_->group->allgather(out, in); });
}

std::unique_ptr<Pending> World::start_sum(std::vector<torch::Tensor>& tensors) {
  return impl_->start("all-reduce (sum)", [&] { return impl_->group->allreduce(tensors); });
}

std::unique_ptr<Pending> World::start_all_gather_into(torch::Tensor& output, torch::Tensor& input) {
  return impl_->start("all-gather into a tensor", [&] { return impl_->group->_allgather_base(output, input); });
}

std::unique_ptr<Pending> World::start_reduce_scatter_into(torch::Tensor& output, torch::Tensor& input) {
  ::c10d::ReduceScatterOptions opts;
  opts.reduceOp = ::c10d::ReduceOp::SUM;
  return impl_->start("reduce-scatter (sum)",
                      [&] { return impl_->group->_reduce_scatter_base(output, input, opts); });
}

std::vector<double> World::gather(double value) {
  // Each rank fills its own slot; a sum over ranks assembles the vector.
  auto host = torch::zeros({size()}, torch::kFloat64);
  host[rank()] = value;
  std::vector<torch::Tensor> slots{host.to(options_.device)};
  sum(slots);
  host = slots[0].cpu();
  const auto* data = host.data_ptr<double>();
  return {data, data + size()};
}

std::unique_ptr<World> join_world(const WorldOptions& w) {
  // Silent: the launcher reports the stop once, not once per rank.
  const auto interrupted = [] { std::_Exit(kInterruptedExitCode); };
  auto joining = std::async(std::launch::async, [w] { return std::make_unique<World>(w); });
  while (joining.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready)
    if (stop_requested()) interrupted();
  try {
    return joining.get();
  } catch (const std::exception&) {
    if (stop_requested()) interrupted();
    throw;
  }
}

}  // namespace twinbench::dist
