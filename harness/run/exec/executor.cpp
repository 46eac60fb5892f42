// Choosing an executor, and the step writer every executor uses (see executor.h).
#include "harness/run/exec/executor.h"

#include <tuple>

#include "harness/metrics/catalogue.h"
#include "harness/run/dist/world.h"
#include "models/device/runtime.h"

namespace twinbench {

std::unique_ptr<Executor> executor_for(const RunConfig& config, const RunnerOptions& options) {
  if (config.dist.nproc > 1 && !options.world) return make_launched_executor();
  return make_in_process_executor();
}

bool is_external_variant(const RunConfig& config, const std::string& variant) {
  return config.externals.count(variant) > 0;
}

std::unique_ptr<Executor> executor_for(const RunConfig& config, const std::string& variant,
                                       const RunnerOptions& options) {
  // An external trainer owns its own processes: dist.nproc is the trainer's to honour.
  if (is_external_variant(config, variant) && !options.world) return make_external_executor();
  return executor_for(config, options);
}

std::vector<std::string> run_command(const RunConfig& config, const RunOutcome& out, const std::string& db_location,
                                     const RunnerOptions& o) {
  std::vector<std::string> args{"run"};
  if (!config.case_file.empty()) {
    args.insert(args.end(), {"--case", config.case_file});
    if (config.reduced) args.emplace_back("--reduced");
  } else {
    args.insert(args.end(), {"--preset", config.model.preset});
  }
  args.insert(args.end(), config.overrides.begin(), config.overrides.end());
  args.insert(args.end(), {"--variant", out.variant, "--repeats", "1", "--repeat-index", std::to_string(out.repeat),
                           "--db", db_location, "--group", o.group_id, "--run-id", out.run_id});
  if (!o.labels.branch.empty()) args.insert(args.end(), {"--branch", o.labels.branch});
  if (!o.labels.commit.empty()) args.insert(args.end(), {"--commit", o.labels.commit});
  if (!o.progress) args.emplace_back("--no-progress");
  // The kind alone: each worker takes its own device of it (DeviceRuntime::worker_device).
  args.insert(args.end(), {"--device", device::runtime_for(o.device).name()});
  return args;
}

void collect_outcome(store::Store& db, RunOutcome& out, const std::pair<RunStatus, std::string>& unfinished) {
  store::MetricMap stored;
  if (const auto run = db.collect_run(out.run_id); run && run->run.status != RunStatus::running) {
    out.status = run->run.status;
    out.reason = run->run.reason;
    stored.insert(run->metrics.begin(), run->metrics.end());
  } else {
    std::tie(out.status, out.reason) = unfinished;
    db.finish_run_or_keep_cause(out.run_id, out.status, out.reason);
  }
  if (!stored.empty()) out.metrics = metrics::from_map(stored);
  for (const auto& [name, value] : stored)
    if (name.rfind("int8_", 0) == 0) out.extra_metrics.emplace_back(name, value);
}

StepWriter::StepWriter(store::Store* db, std::string run_id) : db_(db), run_id_(std::move(run_id)) {}

void StepWriter::add(const StepRecord& r) {
  if (!db_) return;
  pending_.push_back(r);
  if (pending_.size() >= kFlushBatch) flush();
}

void StepWriter::flush() {
  if (!db_ || pending_.empty()) return;
  db_->append_steps(run_id_, pending_);
  pending_.clear();
}

}  // namespace twinbench
