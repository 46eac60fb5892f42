// Choosing an executor, and the step writer every executor uses (see executor.h).
#include "harness/run/exec/executor.h"

#include "harness/run/dist/world.h"

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
