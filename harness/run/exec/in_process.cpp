// The in-process executor: trains one run in this process, alone or as one
// rank of a data-parallel job, and stores its steps and metrics (executor.h).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "harness/base/interrupt.h"
#include "harness/metrics/catalogue.h"
#include "harness/run/train/batches.h"
#include "harness/run/dist/data_parallel.h"
#include "harness/run/dist/job_gate.h"
#include "harness/run/dist/launcher.h"
#include "harness/run/exec/executor.h"
#include "harness/run/exec/device_choice.h"
#include "harness/run/train/memory.h"
#include "harness/run/train/out_of_memory.h"
#include "harness/run/plan/plan.h"
#include "harness/run/exec/progress.h"
#include "harness/run/profile/run_profile.h"
#include "harness/run/train/trainer.h"
#include "models/device/runtime.h"
#include "models/torch_compat.h"
#include "models/weights/int8_export.h"
#include "variants/registry.h"

namespace twinbench {

namespace {

// Post-training int8 export of a trained int8 run (seed 004's format): the artifact
// is written next to the checkpoints, loaded back into an unquantized model of the
// same implementation, and both weight sets are evaluated on the same held-out batches.
store::MetricList int8_export_metrics(const Variant& trained, const RunConfig& config, const std::string& variant_name,
                                      const std::string& stem, const torch::Device& device) {
  std::filesystem::create_directories(config.train.checkpoint_dir);
  const std::string path = fmt::format("{}/{}-int8.ptz", config.train.checkpoint_dir, stem);
  const auto weights = trained.export_canonical();
  const auto stats = export_int8(weights, path);
  ModelConfig plain = config.model;
  plain.quant_mode = "none";
  auto before = make_variant(variant_name, {plain, static_cast<uint64_t>(config.train.seed), device});
  auto after = make_variant(variant_name, {plain, static_cast<uint64_t>(config.train.seed), device});
  before->import_canonical(weights);
  after->import_canonical(load_int8(path));
  auto data_before = make_batch_source(config, device);
  auto data_after = make_batch_source(config, device);
  const double loss_before = evaluate(*before, *data_before, config.train.eval_batches);
  const double loss_after = evaluate(*after, *data_after, config.train.eval_batches);
  return {{"int8_artifact_bytes", static_cast<double>(stats.artifact_bytes)},
          {"int8_compression_ratio", stats.compression_ratio},
          {"int8_eval_loss_before", loss_before},
          {"int8_eval_loss_after", loss_after},
          {"int8_roundtrip_loss_delta", loss_after - loss_before}};
}

// What only a data-parallel run measures: the aggregate rates and the all-reduce's
// share of the step (into `m`), and as extra metrics the all-reduce time, per
// rank the peak memory, the memory held between steps and the setup's peak, and
// whether the ranks ended in sync (replicated only: sharded ranks hold different slices).
store::MetricList data_parallel_metrics(const TrainResult& result, RunMetrics& m, dist::World& world,
                                        dist::DataParallel& dp, int64_t setup_peak) {
  const double n = static_cast<double>(world.size());
  if (m.tokens_per_s_per_device) m.tokens_per_s = *m.tokens_per_s_per_device * n;
  if (m.tflops_per_s_per_device) m.tflops_per_s = *m.tflops_per_s_per_device * n;
  store::MetricList out{{"world_size", n}};
  if (dp.buckets() > 0) out.emplace_back("allreduce_buckets", static_cast<double>(dp.buckets()));
  double comm = 0, total = 0;
  int64_t steady = 0;
  for (const auto& r : result.steps)
    if (is_steady(r)) comm += r.comm_seconds, total += r.seconds, ++steady;
  if (steady > 0) {
    out.emplace_back("comm_time_mean_s", comm / static_cast<double>(steady));
    if (total > 0) m.comm_share = comm / total;
  }
  const auto peaks = world.gather(static_cast<double>(m.peak_memory_bytes.value_or(0)));
  for (size_t r = 0; r < peaks.size(); ++r) {
    out.emplace_back(fmt::format("peak_memory_bytes_rank{}", r), peaks[r]);
    m.peak_memory_bytes = std::max<int64_t>(m.peak_memory_bytes.value_or(0), static_cast<int64_t>(peaks[r]));
  }
  const auto resident = world.gather(static_cast<double>(result.resident_bytes));
  const auto setup = world.gather(static_cast<double>(setup_peak));
  for (size_t r = 0; r < resident.size(); ++r) {
    out.emplace_back(fmt::format("resident_memory_bytes_rank{}", r), resident[r]);
    out.emplace_back(fmt::format("setup_peak_memory_bytes_rank{}", r), setup[r]);
  }
  if (const auto in_sync = dp.parameters_in_sync()) out.emplace_back("params_in_sync", *in_sync ? 1.0 : 0.0);
  return out;
}

// The calibrated peak of the compute this process may use. On the host (not an
// accelerator) the peak was measured with the calibration's threads; a process
// with fewer (data-parallel workers share the cores out, TWINBENCH_THREADS) gets
// its share of it.
double device_peak(const store::Calibration& cal, const torch::Device& device) {
  double peak = cal.peak_tflops;
  if (device::runtime_for(device).accelerator()) return peak;
  const auto details = nlohmann::json::parse(cal.details_json, nullptr, false);
  const int calibrated_threads = details.is_object() ? details.value("threads", 0) : 0;
  if (calibrated_threads > 0) peak *= std::min(1.0, double(at::get_num_threads()) / calibrated_threads);
  return peak;
}

// A failed run's stored reason is the error's first line: c10 errors carry a
// C++ backtrace ("Exception raised from ...") that means nothing to a user.
std::string error_text(const std::exception& e) {
  const auto* c10 = dynamic_cast<const c10::Error*>(&e);
  const std::string text = c10 ? c10->what_without_backtrace() : e.what();
  return text.substr(0, text.find('\n'));
}

// Trains one run in this process: alone, or as one rank of `o.world`.
class InProcessExecutor : public Executor {
 public:
  RunOutcome execute(const RunRequest& request, const RunnerOptions& o) const override {
    const RunConfig& config = request.config;
    const store::RunRecord& record = request.record;
    RunOutcome out = request.outcome;
    return train_here(config, record, std::move(out), o);
  }

 private:
  static RunOutcome train_here(const RunConfig& config, const store::RunRecord& record, RunOutcome out,
                               const RunnerOptions& o);
};

RunOutcome InProcessExecutor::train_here(const RunConfig& config, const store::RunRecord& record, RunOutcome out,
                                         const RunnerOptions& o) {
  const bool supervised = !o.adopted_run_id.empty();  // a launcher records failures
  if (supervised) out.run_id = o.adopted_run_id;
  else if (o.store) out.run_id = o.store->begin_run(record);
  if (supervised && o.store) o.store->adopt_run(out.run_id);  // its writes, also while the server is away
  StepWriter writer(o.store, out.run_id);
  const std::string label = fmt::format("{} / {}{}", out.case_name, out.variant,
                                        out.repeat > 0 ? fmt::format(" #{}", out.repeat) : "");
  const bool rank0 = !o.world || o.world->rank() == 0;
  try {
    const device::DeviceRuntime& runtime = device::runtime_for(o.device);
    runtime.reset_peak(o.device);
    // A profiled run (executor.h): attribution from before the model exists, ops from the first steady step.
    std::optional<RunProfiler> why;
    if (o.profile_run) why.emplace(o.device, std::max<int64_t>(1, config.measure.warmup_steps));
    auto variant = make_variant(out.variant, {config.model, static_cast<uint64_t>(config.train.seed), o.device});
    if (config.train.remat == "full") variant->enable_recompute();
    // Data parallel: the source yields global batches (batch rows per rank) and
    // each rank trains on its own rows. Sharding needs a world even of one
    // process (its collectives are then trivial): it gets one of its own here.
    dist::World* world = o.world;
    std::optional<dist::World> own_world;
    if (!world && config.dist.shard != "none") {
      own_world.emplace(dist::WorldOptions{0, 1, "127.0.0.1", dist::free_port(),
                                           std::chrono::seconds(static_cast<int64_t>(config.dist.timeout_s)), o.device});
      world = &*own_world;
    }
    RunConfig data_config = config;
    if (world) data_config.train.batch *= world->size();
    auto data = make_batch_source(data_config, o.device);
    std::unique_ptr<dist::DataParallel> dp;
    if (world) dp = dist::make_data_parallel(*world, *variant, config);
    Variant& trained = dp ? dp->trained() : *variant;
    // The setup (the whole model initialised, then sharded) has its own peak; the
    // run's peak is its training's.
    const int64_t setup_peak = runtime.memory(o.device).peak_allocated;
    runtime.reset_peak(o.device);
    Progress progress(label, config.train.steps);
    TrainHooks hooks;
    OpProfiler profiler;
    OpProfile profiled;  // steps and their time; the ops come from profiler.stop()
    hooks.on_step = [&](const StepRecord& r) {
      writer.add(r);
      if (o.progress && rank0) progress.step(r);
      if (why) why->on_step(r);
      if (!o.profile) return;
      if (r.step >= o.profile->from_step) {
        ++profiled.steps;
        profiled.step_seconds += r.seconds;
      }
      if (r.step + 1 == o.profile->from_step) profiler.start();
    };
    hooks.checkpoint_prefix =
        fmt::format("{}/{}", config.train.checkpoint_dir, out.run_id.empty() ? label : out.run_id);
    hooks.should_stop = [] { return stop_requested(); };
    if (dp) hooks.sync = dp.get();
    // A duet's side (docs/verdicts.md §1): every step waits for its turn.
    std::unique_ptr<StepGate> gate;
    if (o.lockstep_fd >= 0) gate = dist::make_job_gate(o.lockstep_fd, world, o.lockstep_times);
    hooks.gate = gate.get();
    const TrainResult result = train(trained, config, *data, hooks);
    if (o.profile) {
      OpProfile ops = profiler.stop();
      ops.variant = out.variant;
      ops.steps = profiled.steps;
      ops.step_seconds = profiled.step_seconds;
      o.profile->results.push_back(std::move(ops));
    }
    std::optional<compare::RunProfile> profiled_run;
    if (why) profiled_run = why->finish(*variant);
    writer.flush();
    const Plan plan = make_plan(config, static_cast<int>(config.dist.nproc));
    RunMetrics m = run_metrics(result, trained.param_count(), plan.flops.total());
    const device::MemoryStats memory_stats = runtime.memory(o.device);
    m.peak_memory_bytes = memory_stats.peak_allocated;
    m.peak_reserved_bytes = memory_stats.peak_reserved;
    m.peak_rss_bytes = memory::peak_rss_bytes();
    const store::MetricList metrics_extra =
        dp ? data_parallel_metrics(result, m, *world, *dp, setup_peak) : store::MetricList{};
    m.memory_pct = 100.0 * static_cast<double>(*m.peak_memory_bytes) /
                   static_cast<double>(memory_stats.capacity);
    if (o.store && config.model.quant_mode == "none" && m.tflops_per_s_per_device) {
      const auto cal = o.store->latest_calibration(host_name(), record.device_name, config.train.dtype);
      if (cal && cal->peak_tflops > 0) {
        const double peak = device_peak(*cal, o.device);
        if (!set_mfu(m, *m.tflops_per_s_per_device, peak) && rank0)
          std::cerr << fmt::format(
              "twinbench: {}: {:.4g} TFLOP/s is {:.0f}% of the calibrated {} peak of {:.4g} TFLOP/s: a measurement "
              "error (recalibrate with `twinbench calibrate`); MFU is not reported for this run\n",
              label, *m.tflops_per_s_per_device, 100 * *m.mfu_over_peak, config.train.dtype, peak);
      }
    }
    out.status = result.status;
    out.reason = result.reason;
    out.metrics = m;
    if (o.progress && rank0) progress.finish(std::string(to_string(result.status)));
    auto metrics = metrics::to_list(m);
    metrics.insert(metrics.end(), metrics_extra.begin(), metrics_extra.end());
    if (profiled_run) {
      out.profile_rows = compare::profile_rows(*profiled_run);
      metrics.insert(metrics.end(), out.profile_rows.begin(), out.profile_rows.end());
    }
    if (result.status == RunStatus::completed && config.model.quant_mode == "int8" && rank0) {
      const auto extra = int8_export_metrics(trained, config, out.variant,
                                             out.run_id.empty() ? fmt::format("{}-{}", out.variant, out.repeat) : out.run_id,
                                             o.device);
      metrics.insert(metrics.end(), extra.begin(), extra.end());
      for (const auto& [name, value] : extra) out.extra_metrics.emplace_back(name, value);
    }
    if (o.store) o.store->finish_run(out.run_id, out.status, out.reason, metrics);
  } catch (const std::exception& e) {
    out.status = RunStatus::failed;
    out.reason = error_text(e);
    // Out of memory is an outcome: say what was asked for and what the plan
    // expected, and give a GPU's cached blocks back for the next case.
    if (const auto oom = out_of_memory(e)) {
      out.reason = out_of_memory_reason(*oom, o.device.str(), make_plan(config, 1, plan_target(o.device)));
      device::runtime_for(o.device).release_cached(o.device);
    }
    const bool peer_failure = dynamic_cast<const dist::PeerError*>(&e) != nullptr;
    if (o.store && !(supervised && peer_failure)) {  // the launcher knows which rank failed
      // The store itself may be what failed (disk full, read-only, locked): the
      // pending steps are worth one more try, but that must not hide the cause,
      // which is stored now or kept for the next open (store/causes.h).
      try {
        writer.flush();
      } catch (const std::exception&) {
      }
      if (!o.store->finish_run_or_keep_cause(out.run_id, RunStatus::failed, out.reason))
        std::cerr << fmt::format("twinbench: run {} could not be finished in {}; its cause is kept beside it and "
                                 "stored when the store is next opened: {}\n",
                                 out.run_id, o.store->path(), out.reason);
    }
    if (o.world) throw;  // the ranks are out of step: this worker cannot go on
  }
  return out;
}

}  // namespace

std::unique_ptr<Executor> make_in_process_executor() { return std::make_unique<InProcessExecutor>(); }

}  // namespace twinbench
