// The vocabulary of op profiles: the step phases the trainer marks around its
// work (RecordFunction user scopes) and the categories an op's time falls in
// (GEMM, attention, element-wise, copies and layout, allocation, optimizer,
// autograd, harness bookkeeping). `twinbench profile` tables them and the
// "why" of a verdict (compare/explain_analysis.h) groups ops by them, so both
// say the same thing of one op.
#pragma once

#include <string>
#include <vector>

namespace twinbench {

// The step phases the trainer marks with RECORD_USER_SCOPE (run/train/trainer.cpp);
// an op belongs to the innermost phase it ran in, "" when none.
inline constexpr const char* kPhaseForward = "twinbench::forward";
inline constexpr const char* kPhaseBackward = "twinbench::backward";
inline constexpr const char* kPhaseClip = "twinbench::clip";
inline constexpr const char* kPhaseOptimizer = "twinbench::optimizer";
inline constexpr const char* kPhaseBookkeeping = "twinbench::bookkeeping";
inline constexpr const char* kPhaseEval = "twinbench::eval";  // not part of a training step

// "backward" for "twinbench::backward"; "-" for no phase; any other text as it is.
std::string short_phase(const std::string& phase);

// The category of an op's self time: by phase for the optimizer, clipping, the
// harness's bookkeeping and evaluation (kEvalCategory), else by op name.
std::string op_category(const std::string& phase, const std::string& op);
inline constexpr const char* kEvalCategory = "evaluation (not part of a step)";
// The categories of a training step, in the order tables show them.
const std::vector<std::string>& op_categories();

}  // namespace twinbench
