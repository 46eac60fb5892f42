// Choosing an executor, and the step writer every executor uses (see executor.h).
#include "harness/run/executor.h"

#include "harness/run/dist/world.h"

namespace twinbench {

std::unique_ptr<Executor> executor_for(const RunConfig& config, const RunnerOptions& options) {
  if (config.dist.nproc > 1 && !options.world) return make_launched_executor();
  return make_in_process_executor();
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
