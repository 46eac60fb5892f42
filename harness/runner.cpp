// The case runner (see runner.h).
#include "harness/runner.h"

#include <fmt/format.h>

#include <filesystem>

#include "harness/batches.h"
#include "harness/dist/data_parallel.h"
#include "harness/dist/launcher.h"
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

store::MetricList common_metric_list(const RunMetrics& m) {
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

store::MetricList metric_list(const RunMetrics& m) {
  store::MetricList list = common_metric_list(m);
  if (m.tokens_per_s || m.comm_share)  // data parallel only
    list.insert(list.end(), {{"tokens_per_s", m.tokens_per_s}, {"tflops_per_s", m.tflops_per_s}, {"comm_share", m.comm_share}});
  return list;
}

std::string device_name(const torch::Device& device) {
  return device.is_cuda() ? compat::cuda_device_name(device) : cpu_name();
}

// The metrics a finished run stored, back as RunMetrics (the inverse of metric_list).
RunMetrics metrics_from_store(const store::MetricMap& stored) {
  auto get = [&](const char* name) -> std::optional<double> {
    const auto it = stored.find(name);
    return it == stored.end() ? std::nullopt : it->second;
  };
  auto integer = [&](const char* name) -> std::optional<int64_t> {
    if (const auto v = get(name)) return static_cast<int64_t>(*v);
    return std::nullopt;
  };
  RunMetrics m;
  m.params = integer("params").value_or(0);
  m.first_loss = get("first_loss").value_or(0);
  m.final_loss = get("final_loss").value_or(0);
  m.eval_loss = get("eval_loss");
  m.tflops_per_step_per_device = get("tflops_per_step_per_device").value_or(0);
  m.tflops_per_s_per_device = get("tflops_per_s_per_device");
  m.tokens_per_s_per_device = get("tokens_per_s_per_device");
  m.step_time.count = integer("steady_steps").value_or(0);
  m.step_time.mean = get("step_time_mean_s").value_or(0);
  m.step_time.median = get("step_time_median_s").value_or(0);
  m.step_time.p10 = get("step_time_p10_s").value_or(0);
  m.step_time.p90 = get("step_time_p90_s").value_or(0);
  m.step_time.stddev = get("step_time_stddev_s").value_or(0);
  m.first_step_s = get("first_step_s").value_or(0);
  m.wall_s = get("wall_s").value_or(0);
  m.peak_memory_bytes = integer("peak_memory_bytes");
  m.memory_pct = get("memory_pct");
  m.peak_rss_bytes = integer("peak_rss_bytes");
  m.mfu = get("mfu");
  m.tokens_per_s = get("tokens_per_s");
  m.tflops_per_s = get("tflops_per_s");
  m.comm_share = get("comm_share");
  return m;
}

// What only a data-parallel run measures: the aggregate rates and the all-reduce's
// share of the step (into `m`), and as extra metrics the all-reduce time, peak
// memory per rank and whether the ranks ended in sync.
store::MetricList data_parallel_metrics(const TrainResult& result, RunMetrics& m, dist::World& world,
                                        dist::DataParallel& dp, Variant& variant) {
  const double n = static_cast<double>(world.size());
  if (m.tokens_per_s_per_device) m.tokens_per_s = *m.tokens_per_s_per_device * n;
  if (m.tflops_per_s_per_device) m.tflops_per_s = *m.tflops_per_s_per_device * n;
  store::MetricList out{{"world_size", n}, {"allreduce_buckets", static_cast<double>(dp.buckets())}};
  double comm = 0, total = 0;
  int64_t steady = 0;
  for (const auto& r : result.steps)
    if (!r.warmup && !r.eval && !r.checkpoint && r.step > 0) comm += r.comm_seconds, total += r.seconds, ++steady;
  if (steady > 0) {
    out.emplace_back("comm_time_mean_s", comm / static_cast<double>(steady));
    if (total > 0) m.comm_share = comm / total;
  }
  const auto peaks = world.gather(static_cast<double>(m.peak_memory_bytes.value_or(0)));
  for (size_t r = 0; r < peaks.size(); ++r) {
    out.emplace_back(fmt::format("peak_memory_bytes_rank{}", r), peaks[r]);
    m.peak_memory_bytes = std::max<int64_t>(m.peak_memory_bytes.value_or(0), static_cast<int64_t>(peaks[r]));
  }
  out.emplace_back("params_in_sync", dp.parameters_in_sync(variant.parameters()) ? 1.0 : 0.0);
  return out;
}

// The calibrated peak of the compute this process may use. On a CPU the peak was
// measured with the calibration's threads; a process with fewer (data-parallel
// workers share the cores out, TWINBENCH_THREADS) gets its share of it.
double device_peak(const store::Calibration& cal, const torch::Device& device) {
  double peak = cal.peak_tflops;
  if (!device.is_cpu()) return peak;
  const auto details = nlohmann::json::parse(cal.details_json, nullptr, false);
  const int calibrated_threads = details.is_object() ? details.value("threads", 0) : 0;
  if (calibrated_threads > 0) peak *= std::min(1.0, double(at::get_num_threads()) / calibrated_threads);
  return peak;
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

// dist.nproc > 1 outside a worker: this process launches the workers and owns the
// run row, so a worker that crashes (even rank 0) still ends as a failed run
// naming the rank. Without a store the row lives in a temporary one.
RunOutcome run_launched(const RunConfig& config, const store::RunRecord& record, RunOutcome out,
                        int threads_per_worker, const RunnerOptions& o) {
  namespace fs = std::filesystem;
  std::optional<store::Store> scratch;
  fs::path scratch_dir;
  store::Store* db = o.store;
  if (!db) {
    scratch_dir = fs::temp_directory_path() / ("twinbench-launch-db-" + store::new_uuid());
    fs::create_directories(scratch_dir);
    scratch.emplace((scratch_dir / "runs.db").string());
    db = &*scratch;
  }
  out.run_id = db->begin_run(record);
  const int nproc = static_cast<int>(config.dist.nproc);
  const int port = o.master_port > 0 ? o.master_port : dist::free_port();
  std::vector<std::string> args{"run"};
  if (!config.case_file.empty()) {
    args.insert(args.end(), {"--case", config.case_file});
    if (config.reduced) args.emplace_back("--reduced");
  } else {
    args.insert(args.end(), {"--preset", config.model.preset});
  }
  args.insert(args.end(), config.overrides.begin(), config.overrides.end());
  args.insert(args.end(), {"--variant", out.variant, "--repeats", "1", "--repeat-index", std::to_string(out.repeat),
                           "--db", db->path(), "--group", o.group_id, "--run-id", out.run_id, "--world-size",
                           std::to_string(nproc), "--master-addr", o.master_addr, "--master-port",
                           std::to_string(port)});
  if (!o.labels.branch.empty()) args.insert(args.end(), {"--branch", o.labels.branch});
  if (!o.labels.commit.empty()) args.insert(args.end(), {"--commit", o.labels.commit});
  if (!o.progress) args.emplace_back("--no-progress");

  dist::LaunchOptions launch;
  launch.nproc = nproc;
  launch.threads_per_worker = threads_per_worker;
  const dist::LaunchResult launched = dist::launch(args, launch);

  if (const auto row = db->run(out.run_id); row && row->status == store::Status::running) {
    if (launched.interrupted)
      db->finish_run(out.run_id, store::Status::interrupted, "stopped by request before rank 0 finished the run");
    else
      db->finish_run(out.run_id, store::Status::failed,
                     launched.ok ? "rank 0 exited without finishing the run" : launched.reason);
  }
  const auto row = db->run(out.run_id);
  out.status = std::string(store::to_string(row->status));
  out.reason = row->reason;
  const auto stored = db->metrics(out.run_id);
  if (!stored.empty()) out.metrics = metrics_from_store(stored);
  for (const auto& [name, value] : stored)
    if (name.rfind("int8_", 0) == 0) out.extra_metrics.emplace_back(name, value);
  if (!o.store) {
    out.run_id.clear();
    scratch.reset();
    std::error_code ec;
    fs::remove_all(scratch_dir, ec);
  }
  return out;
}

// Trains one run in this process: alone, or as one rank of `o.world`.
RunOutcome run_here(const RunConfig& config, const store::RunRecord& record, RunOutcome out, const RunnerOptions& o) {
  const bool supervised = !o.adopted_run_id.empty();  // a launcher records failures
  if (supervised) out.run_id = o.adopted_run_id;
  else if (o.store) out.run_id = o.store->begin_run(record);
  StepWriter writer(o.store, out.run_id);
  const std::string label = fmt::format("{} / {}{}", out.case_name, out.variant,
                                        out.repeat > 0 ? fmt::format(" #{}", out.repeat) : "");
  const bool rank0 = !o.world || o.world->rank() == 0;
  try {
    memory::reset_peak(o.device);
    auto variant = make_variant(out.variant, {config.model, static_cast<uint64_t>(config.train.seed), o.device});
    // Data parallel: the source yields global batches (batch rows per rank) and
    // each rank trains on its own rows.
    RunConfig data_config = config;
    if (o.world) data_config.train.batch *= o.world->size();
    auto data = make_batch_source(data_config, o.device);
    std::optional<dist::DataParallel> dp;
    if (o.world) {
      dp.emplace(*o.world, static_cast<int64_t>(config.dist.bucket_mb * double(1 << 20)));
      dp->broadcast_parameters(variant->parameters());
    }
    Progress progress(label, config.train.steps);
    TrainHooks hooks;
    hooks.on_step = [&](const StepRecord& r) {
      writer.add(r);
      if (o.progress && rank0) progress.step(r);
    };
    hooks.checkpoint_prefix =
        fmt::format("{}/{}", config.train.checkpoint_dir, out.run_id.empty() ? label : out.run_id);
    hooks.should_stop = [] { return stop_requested(); };
    if (dp) hooks.sync = &*dp;
    const TrainResult result = train(*variant, config, *data, hooks);
    writer.flush();
    const Plan plan = make_plan(config, static_cast<int>(config.dist.nproc));
    RunMetrics m = run_metrics(result, variant->param_count(), plan.flops.total());
    m.peak_memory_bytes = memory::peak_bytes(o.device);
    m.peak_rss_bytes = memory::peak_rss_bytes();
    const store::MetricList metrics_extra =
        dp ? data_parallel_metrics(result, m, *o.world, *dp, *variant) : store::MetricList{};
    m.memory_pct = 100.0 * static_cast<double>(*m.peak_memory_bytes) /
                   static_cast<double>(memory::device_capacity_bytes(o.device));
    if (o.store && config.model.quant_mode == "none" && m.tflops_per_s_per_device) {
      const auto cal = o.store->latest_calibration(host_name(), record.device_name, config.train.dtype);
      if (cal && cal->peak_tflops > 0) m.mfu = *m.tflops_per_s_per_device / device_peak(*cal, o.device);
    }
    out.status = result.status;
    out.reason = result.reason;
    out.metrics = m;
    if (o.progress && rank0) progress.finish(result.status);
    auto metrics = metric_list(m);
    metrics.insert(metrics.end(), metrics_extra.begin(), metrics_extra.end());
    if (result.status == "completed" && config.model.quant_mode == "int8" && rank0) {
      const auto extra = int8_export_metrics(*variant, config, out.variant,
                                             out.run_id.empty() ? fmt::format("{}-{}", out.variant, out.repeat) : out.run_id,
                                             o.device);
      metrics.insert(metrics.end(), extra.begin(), extra.end());
      for (const auto& [name, value] : extra) out.extra_metrics.emplace_back(name, value);
    }
    if (o.store) o.store->finish_run(out.run_id, to_status(out.status), out.reason, metrics);
  } catch (const std::exception& e) {
    out.status = "failed";
    out.reason = e.what();
    const bool peer_failure = dynamic_cast<const dist::PeerError*>(&e) != nullptr;
    if (o.store && !(supervised && peer_failure)) {  // the launcher knows which rank failed
      writer.flush();
      o.store->finish_run(out.run_id, store::Status::failed, out.reason, {});
    }
    if (o.world) throw;  // the ranks are out of step: this worker cannot go on
  }
  return out;
}

RunOutcome run_one(const RunConfig& config_in, const std::string& variant_name, int repeat, const RunnerOptions& o) {
  RunConfig config = config_in;
  if (o.world) config.dist.nproc = o.world->size();  // the job's size is the truth
  if (o.repeat_index >= 0) repeat = o.repeat_index;
  RunOutcome out{"", case_label(config), variant_name, repeat, "running", "", std::nullopt};
  Provenance prov = collect_provenance(o.labels);
  prov.libtorch_version = compat::torch_version();
  prov.device_name = device_name(o.device);
  const bool launches = config.dist.nproc > 1 && !o.world;
  // Launched workers share this process's cores out between them.
  const int threads = launches ? std::max(1, at::get_num_threads() / static_cast<int>(config.dist.nproc))
                               : at::get_num_threads();
  prov.threads = threads;
  prov.world_size = static_cast<int>(config.dist.nproc);
  if (config.dist.nproc > 1) prov.dist_backend = o.world ? o.world->backend() : (o.device.is_cuda() ? "nccl" : "gloo");
  if (config.model.quant_mode != "none") prov.quant_backend = "emulated";
  const store::RunRecord record = run_record(config, variant_name, repeat, prov, o);

  if (const auto reason = skip_reason(config); !reason.empty()) {
    out.status = "skipped";
    out.reason = reason;
    if (o.store) out.run_id = o.store->record_skipped(record, reason);
    return out;
  }
  if (launches) return run_launched(config, record, out, threads, o);
  return run_here(config, record, out, o);
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
