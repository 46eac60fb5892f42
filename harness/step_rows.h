// A training step as the trainer records it and as the store keeps it: the one
// place where the two field sets are mapped onto each other.
#pragma once

#include <string>

#include "harness/records.h"
#include "harness/store/store.h"

namespace twinbench {

inline store::StepRecord to_store_row(const StepRecord& r, const std::string& run_id) {
  store::StepRecord s;
  s.run_id = run_id;
  s.step = r.step;
  s.loss = r.loss;
  s.step_time_s = r.seconds;
  s.tokens = r.tokens;
  s.is_warmup = r.warmup;
  s.is_eval = r.eval;
  s.is_checkpoint = r.checkpoint;
  s.eval_loss = r.eval_loss;
  return s;
}

inline StepRecord from_store_row(const store::StepRecord& s) {
  StepRecord r;
  r.step = s.step;
  r.loss = s.loss;
  r.seconds = s.step_time_s;
  r.tokens = s.tokens;
  r.warmup = s.is_warmup;
  r.eval = s.is_eval;
  r.checkpoint = s.is_checkpoint;
  r.eval_loss = s.eval_loss;
  return r;
}

}  // namespace twinbench
