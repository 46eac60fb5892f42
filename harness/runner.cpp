// The case runner (see runner.h).
#include "harness/runner.h"

#include <fmt/format.h>

#include <filesystem>

#include "harness/batches.h"
#include "harness/int8_export.h"
#include "harness/interrupt.h"
#include "harness/memory.h"
#include "harness/plan.h"
#include "harness/progress.h"
#include "harness/step_rows.h"
#include "harness/store/store.h"
#include "harness/trainer.h"
#include "models/torch_compat.h"
#include "variants/registry.h"

namespace twinbench {

namespace {

store::Status to_status(const std::string& s) { return store::status_from_string(s); }

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

store::MetricList metric_list(const RunMetrics& m) {
  auto opt = [](const auto& v) -> std::optional<double> {
    if (v) return static_cast<double>(*v);
    return std::nullopt;
  };
  return {{"params", static_cast<double>(m.params)},
          {"first_loss", m.first_loss},
          {"final_loss", m.final_loss},
          {"eval_loss", m.eval_loss},
          {"tflops_per_step_per_device", m.tflops_per_step_per_device},
          {"tflops_per_s_per_device", m.tflops_per_s_per_device},
          {"tokens_per_s_per_device", m.tokens_per_s_per_device},
          {"steady_steps", static_cast<double>(m.step_time.count)},
          {"step_time_mean_s", m.step_time.count ? opt(std::optional<double>(m.step_time.mean)) : std::nullopt},
          {"step_time_median_s", m.step_time.count ? opt(std::optional<double>(m.step_time.median)) : std::nullopt},
          {"step_time_p10_s", m.step_time.count ? opt(std::optional<double>(m.step_time.p10)) : std::nullopt},
          {"step_time_p90_s", m.step_time.count ? opt(std::optional<double>(m.step_time.p90)) : std::nullopt},
          {"step_time_stddev_s", m.step_time.count ? opt(std::optional<double>(m.step_time.stddev)) : std::nullopt},
          {"first_step_s", m.first_step_s},
          {"wall_s", m.wall_s},
          {"peak_memory_bytes", opt(m.peak_memory_bytes)},
          {"memory_pct", m.memory_pct},
          {"peak_rss_bytes", opt(m.peak_rss_bytes)},
          {"mfu", m.mfu}};
}

std::string device_name(const torch::Device& device) {
  return device.is_cuda() ? compat::cuda_device_name(device) : cpu_name();
}

RunOutcome run_one(const RunConfig& config, const std::string& variant_name, int repeat, const RunnerOptions& o) {
  RunOutcome out{"", case_label(config), variant_name, repeat, "running", "", std::nullopt};
  Provenance prov = collect_provenance(o.labels);
  prov.libtorch_version = compat::torch_version();
  prov.device_name = device_name(o.device);
  prov.threads = at::get_num_threads();
  prov.world_size = static_cast<int>(config.dist.nproc);
  if (config.model.quant_mode != "none") prov.quant_backend = "emulated";

  store::RunRecord record;
  record.group_id = o.group_id;
  record.case_name = out.case_name;
  record.variant = variant_name;
  record.repeat_index = repeat;
  record.config_json = config_json(config);
  record.provenance_json = provenance_json(prov);
  record.git_commit = prov.git_commit;
  record.git_branch = prov.git_branch;
  record.device_name = prov.device_name;
  record.world_size = prov.world_size;

  if (const auto reason = skip_reason(config); !reason.empty()) {
    out.status = "skipped";
    out.reason = reason;
    if (o.store) out.run_id = o.store->record_skipped(record, reason);
    return out;
  }
  if (o.store) out.run_id = o.store->begin_run(record);
  StepWriter writer(o.store, out.run_id);
  const std::string label = fmt::format("{} / {}{}", out.case_name, variant_name,
                                        repeat > 0 ? fmt::format(" #{}", repeat) : "");
  try {
    memory::reset_peak(o.device);
    auto variant = make_variant(variant_name, {config.model, static_cast<uint64_t>(config.train.seed), o.device});
    auto data = make_batch_source(config, o.device);
    Progress progress(label, config.train.steps);
    TrainHooks hooks;
    hooks.on_step = [&](const StepRecord& r) {
      writer.add(r);
      if (o.progress) progress.step(r);
    };
    hooks.checkpoint_prefix =
        fmt::format("{}/{}", config.train.checkpoint_dir, out.run_id.empty() ? label : out.run_id);
    hooks.should_stop = [] { return stop_requested(); };
    const TrainResult result = train(*variant, config, *data, hooks);
    writer.flush();
    const Plan plan = make_plan(config, 1);
    RunMetrics m = run_metrics(result, variant->param_count(), plan.flops.total());
    m.peak_memory_bytes = memory::peak_bytes(o.device);
    m.memory_pct = 100.0 * static_cast<double>(*m.peak_memory_bytes) /
                   static_cast<double>(memory::device_capacity_bytes(o.device));
    m.peak_rss_bytes = memory::peak_rss_bytes();
    if (o.store && config.model.quant_mode == "none" && m.tflops_per_s_per_device) {
      const auto cal = o.store->latest_calibration(prov.host, prov.device_name, config.train.dtype);
      if (cal && cal->peak_tflops > 0) m.mfu = *m.tflops_per_s_per_device / cal->peak_tflops;
    }
    out.status = result.status;
    out.reason = result.reason;
    out.metrics = m;
    if (o.progress) progress.finish(result.status);
    auto metrics = metric_list(m);
    if (result.status == "completed" && config.model.quant_mode == "int8") {
      const auto extra = int8_export_metrics(*variant, config, variant_name,
                                             out.run_id.empty() ? fmt::format("{}-{}", variant_name, repeat) : out.run_id,
                                             o.device);
      metrics.insert(metrics.end(), extra.begin(), extra.end());
      for (const auto& [name, value] : extra) out.extra_metrics.emplace_back(name, value);
    }
    if (o.store) o.store->finish_run(out.run_id, to_status(out.status), out.reason, metrics);
  } catch (const std::exception& e) {
    out.status = "failed";
    out.reason = e.what();
    if (o.store) {
      writer.flush();
      o.store->finish_run(out.run_id, store::Status::failed, out.reason, {});
    }
  }
  return out;
}

}  // namespace

StepWriter::StepWriter(store::Store* db, std::string run_id) : db_(db), run_id_(std::move(run_id)) {}

void StepWriter::add(const StepRecord& r) {
  if (!db_) return;
  pending_.push_back(to_store_row(r, run_id_));
  if (pending_.size() >= kFlushBatch) flush();
}

void StepWriter::flush() {
  if (!db_ || pending_.empty()) return;
  db_->append_steps(pending_);
  pending_.clear();
}

std::string case_label(const RunConfig& c) { return c.case_name.empty() ? "preset:" + c.model.preset : c.case_name; }

std::string skip_reason(const RunConfig& c) {
  if (c.dist.nproc > 1)
    return fmt::format("data-parallel training (dist.nproc={}) is not implemented yet", c.dist.nproc);
  if (c.needs.device == "cuda" && !torch::cuda::is_available()) return "requires a CUDA device; none is available";
  const Plan plan = make_plan(c, 1);
  if (!plan.fits)
    return fmt::format("needs an estimated {:.1f} GiB (plan: weights {:.1f}, grads {:.1f}, optimizer {:.1f}, "
                       "activations {:.1f}), this host has {:.1f} GiB",
                       plan.required_bytes / double(1LL << 30), plan.memory.weights / double(1LL << 30),
                       plan.memory.gradients / double(1LL << 30), plan.memory.optimizer / double(1LL << 30),
                       plan.memory.activations / double(1LL << 30), plan.device_capacity_bytes / double(1LL << 30));
  return "";
}

std::vector<RunOutcome> run_all(const std::vector<RunConfig>& configs, const std::vector<std::string>& variants,
                                const RunnerOptions& options) {
  std::vector<RunOutcome> outcomes;
  for (const auto& config : configs)
    for (int repeat = 0; repeat < config.measure.repeats; ++repeat)
      for (const auto& variant : variants) {
        if (stop_requested()) return outcomes;
        outcomes.push_back(run_one(config, variant, repeat, options));
      }
  return outcomes;
}

}  // namespace twinbench
