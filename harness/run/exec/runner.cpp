// The case runner (see runner.h).
#include "harness/run/exec/runner.h"

#include <fmt/format.h>

#include <chrono>
#include <ostream>
#include <random>

#include "harness/base/interrupt.h"
#include "harness/run/exec/duet_round.h"
#include "harness/run/exec/device_choice.h"
#include "harness/run/dist/world.h"
#include "harness/run/exec/host_guard.h"
#include "harness/run/train/memory.h"
#include "harness/run/hooks/hooks.h"
#include "harness/run/hooks/numerics_bug.h"
#include "harness/run/plan/plan.h"
#include "models/device/runtime.h"
#include "models/onednn_gemm.h"
#include "models/quant.h"
#include "models/torch_compat.h"

namespace twinbench {

namespace {

// What the run records of its device: its name (the CPU's model, a GPU's name)
// and an accelerator's facts (its part of the hardware fingerprint).
void describe_device(const torch::Device& device, Provenance& prov) {
  const device::Facts facts = device::runtime_for(device).facts(device);
  prov.device_name = facts.name;
  if (!facts.accelerator) return;
  const device::AcceleratorFacts& f = *facts.accelerator;
  prov.gpu_name = f.name;
  prov.gpu_compute_capability = f.compute_capability;
  prov.gpu_sm_count = f.sm_count;
  prov.gpu_memory_bytes = f.memory_bytes;
  prov.gpu_driver = f.driver;
  prov.cuda_runtime = f.runtime;
  prov.cudnn_version = f.cudnn;
  prov.nccl_version = f.nccl;
}

store::RunRecord run_record(const RunConfig& config, const std::string& variant_name, int repeat,
                            const Provenance& prov, const RunnerOptions& o) {
  store::RunRecord record;
  record.group_id = o.group_id;
  record.case_name = case_label(config);
  record.variant = variant_name;
  record.repeat_index = repeat;
  record.config_json = config_json(config);
  record.provenance_json = provenance_json(prov);
  record.git_commit = prov.git_commit;
  record.git_branch = prov.git_branch;
  record.device_name = prov.device_name;
  record.world_size = prov.world_size;
  return record;
}

}  // namespace

PreparedRun prepare_run(const RunConfig& config_in, const std::string& variant_name, int repeat,
                        const RunnerOptions& options, const std::string& pairing) {
  PreparedRun p{config_in, options, {}, {}, 1, 1, ""};
  RunConfig& config = p.config;
  // The device of this case: --device against requires.device (device_choice.h).
  // A launcher's worker was handed its own device already.
  RunnerOptions& o = p.options;
  const DeviceChoice choice = o.world ? DeviceChoice{o.device, ""} : choose_device(o.device_request, config);
  o.device = choice.device;
  if (o.world) config.dist.nproc = o.world->size();  // the job's size is the truth
  if (o.repeat_index >= 0) repeat = o.repeat_index;
  p.outcome = RunOutcome{"", case_label(config), variant_name, repeat, RunStatus::running, "", std::nullopt, {}, "{}", "{}", {}, {}};
  Provenance prov = collect_provenance(o.labels);
  prov.libtorch_version = compat::torch_version();
  describe_device(o.device, prov);
  // Launched workers share this process's cores out between them (host_guard.h).
  const HostLoad load = host_load(config, at::get_num_threads(), o.world != nullptr);
  p.threads = load.threads_per_process;
  p.processes = load.processes;
  prov.threads = p.threads;
  prov.host_cores = load.cores;
  prov.oversubscribed = load.oversubscribed();  // allowed by --oversubscribe, else refused before
  prov.world_size = static_cast<int>(config.dist.nproc);
  const device::DeviceRuntime& runtime = device::runtime_for(o.device);
  if (config.dist.nproc > 1) prov.dist_backend = o.world ? o.world->backend() : runtime.collectives().backend;
  prov.quant_backend = quant::backend_name(config.model.quant_mode, o.device);
  prov.gemm_backend = gemm::backend();
  prov.device_kind = runtime.name();
  if (!o.sequential_plan.empty()) {
    prov.sequential_plan = o.sequential_plan;
    prov.sequential_looks = static_cast<int>(o.sequential_plan.size());
  } else if (o.sequential_looks > 0) {
    prov.sequential_looks = o.sequential_looks;
  }
  if (o.profile_run) prov.run_role = "profile";
  prov.pairing = o.lockstep_fd >= 0 ? "lockstep" : pairing;
  for (const auto& hook : hooks::in_environment()) prov.test_hooks.emplace_back(hook.variable, hook.value);
  p.record = run_record(config, variant_name, repeat, prov, o);
  p.outcome.config_json = p.record.config_json;
  p.outcome.provenance_json = p.record.provenance_json;

  std::string& reason = p.skip_reason;
  reason = choice.skip_reason.empty() ? skip_reason(config, load.processes, o.device) : choice.skip_reason;
  // A profiled run observes the ops of this process (run/profile/run_profile.h).
  if (reason.empty() && o.profile_run && (is_external_variant(config, variant_name) || config.dist.nproc > 1))
    reason = is_external_variant(config, variant_name)
                 ? "a profiled run observes ops in this process; an external trainer runs as its own"
                 : "a profiled run observes ops in this process; a data-parallel run is launched as workers";
  return p;
}

RunOutcome record_skipped(const PreparedRun& p) {
  RunOutcome out = p.outcome;
  out.status = RunStatus::skipped;
  out.reason = p.skip_reason;
  if (p.options.store) out.run_id = p.options.store->record_skipped(p.record, p.skip_reason);
  return out;
}

RunOutcome run_one(const RunConfig& config, const std::string& variant_name, int repeat, const RunnerOptions& options) {
  const PreparedRun p = prepare_run(config, variant_name, repeat, options);
  if (!p.skip_reason.empty()) return record_skipped(p);
  // TWINBENCH_TEST_NUMERICS_BUG (tests only): train with a planted bug, record the configured model.
  return executor_for(p.config, variant_name, p.options)
      ->execute({numerics_bug::plant(p.config), p.record, p.outcome, p.threads}, p.options);
}

std::string case_label(const RunConfig& c) { return c.case_name.empty() ? "preset:" + c.model.preset : c.case_name; }

double resident_estimate_bytes(const Plan& plan) {
  // The runtime: this process's peak RSS before it trains (LibTorch and its pools),
  // at least the 250 MiB a side holds before its first tensor.
  const double runtime = std::max(static_cast<double>(memory::peak_rss_bytes()), double(250LL << 20));
  return kResidentFactor * static_cast<double>(plan.required_bytes) + runtime;
}

std::string skip_reason(const RunConfig& c, int processes, const torch::Device& device) {
  // Per device, over the job's ranks (what each holds when sharded).
  const Plan plan = make_plan(c, static_cast<int>(c.dist.nproc), plan_target(device));
  const auto gib = [](double bytes) { return bytes / double(1LL << 30); };
  const std::string breakdown = fmt::format(
      "plan: weights {:.1f}, grads {:.1f}, optimizer {:.1f}{}, activations {:.1f}", gib(plan.memory.weights),
      gib(plan.memory.gradients), gib(plan.memory.optimizer),
      plan.memory.gathered > 0 ? fmt::format(", gathered unit {:.1f}", gib(plan.memory.gathered)) : std::string(),
      gib(plan.memory.activations));
  const bool accelerator = device::runtime_for(device).accelerator();
  if (processes <= 1 || accelerator) {  // accelerator workers each hold their own device
    if (!plan.fits)
      return fmt::format("needs an estimated {:.1f} GiB ({}), {} has {:.1f} GiB", gib(plan.required_bytes), breakdown,
                         accelerator ? device.str() : "this host", gib(plan.device_capacity_bytes));
    return "";
  }
  // Launched workers all live in this host's memory: each needs the plan's
  // estimate plus the runtime a twinbench process holds before it trains
  // (LibTorch and its pools), measured here as this process's peak RSS.
  const double runtime = static_cast<double>(memory::peak_rss_bytes());
  const double each = static_cast<double>(plan.required_bytes) + runtime;
  const double total = each * processes;
  if (total > static_cast<double>(plan.device_capacity_bytes))
    return fmt::format("needs an estimated {:.1f} GiB for {} processes (each {:.1f} GiB: {}, runtime {:.2f}), "
                       "this host has {:.1f} GiB",
                       gib(total), processes, gib(each), breakdown, gib(runtime), gib(plan.device_capacity_bytes));
  return "";
}

std::vector<RunOutcome> run_all(const std::vector<RunConfig>& configs, const std::vector<std::string>& variants,
                                const RunnerOptions& options, std::ostream& log) {
  std::vector<RunOutcome> outcomes;
  std::mt19937_64 order(static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  for (const auto& config : configs)
    for (int repeat = 0; repeat < config.measure.repeats; ++repeat) {
      if (stop_requested()) return outcomes;
      std::string refusal;
      // Several implementations: a repeat is one round of all of them, a lockstep duet where it can be.
      for (auto& r : run_round(config, variants, repeat, options, order, log, &refusal))
        outcomes.push_back(std::move(r));
      if (repeat == 0 && !refusal.empty() && options.lockstep && variants.size() > 1)
        log << fmt::format("{}: run-level pairs, not a lockstep duet: {}\n", case_label(config), refusal);
    }
  return outcomes;
}

}  // namespace twinbench
