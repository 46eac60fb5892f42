// `twinbench profile`: where one training step of each implementation spends its
// time, by category (GEMM, attention, element-wise, copies, allocation, optimizer,
// autograd, harness bookkeeping), by phase and by op (harness/run/profile/op_profile.h).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness/base/temp_dir.h"
#include "harness/cli/common.h"
#include "harness/run/exec/runner.h"
#include "harness/store/store.h"
#include "variants/registry.h"

namespace twinbench::cli {

namespace {

// One variant's profile, per step.
struct StepBreakdown {
  std::string variant;
  int64_t steps = 0;
  double step_seconds = 0;                         // mean measured step time
  std::map<std::string, double> category_seconds;  // per step; "outside ops" = step minus the ops in it
  std::map<std::string, double> phase_seconds;     // per step
  double eval_seconds = 0;                         // in total, not per step
  struct Op {
    std::string phase, name;
    double seconds = 0;  // self time per step
    double calls = 0;    // per step
  };
  std::vector<Op> ops;  // largest first
};

constexpr const char* kOutsideOps = "outside ops (trainer glue, waits)";

StepBreakdown breakdown(const OpProfile& p) {
  StepBreakdown b;
  b.variant = p.variant;
  b.steps = p.steps;
  const double n = static_cast<double>(std::max<int64_t>(1, p.steps));
  b.step_seconds = p.step_seconds / n;
  double in_ops = 0;  // op time inside the measured step
  for (const auto& [key, total] : p.ops) {
    const auto& [phase, op] = key;
    const std::string category = op_category(phase, op);
    if (category == kEvalCategory) {
      b.eval_seconds += total.self_seconds;
      continue;
    }
    b.category_seconds[category] += total.self_seconds / n;
    if (phase != kPhaseBookkeeping) in_ops += total.self_seconds / n;
    b.ops.push_back({phase, op, total.self_seconds / n, static_cast<double>(total.calls) / n});
  }
  b.category_seconds[kOutsideOps] = std::max(0.0, b.step_seconds - in_ops);
  for (const auto& [phase, seconds] : p.phase_seconds)
    if (phase != kPhaseEval) b.phase_seconds[short_phase(phase)] = seconds / n;
  std::sort(b.ops.begin(), b.ops.end(), [](const auto& x, const auto& y) { return x.seconds > y.seconds; });
  return b;
}

std::vector<std::string> row_order() {
  auto rows = op_categories();
  rows.insert(rows.end() - 1, kOutsideOps);  // bookkeeping last: it is after the measured step
  return rows;
}

std::string text(const RunConfig& c, const std::vector<StepBreakdown>& all, int64_t from_step, size_t top) {
  std::ostringstream os;
  os << fmt::format("{}: batch {} x {}, {}, {} threads; steps {}..{} observed ({} each), one run per "
                    "implementation\n",
                    case_label(c), c.train.batch, c.train.seq_len, c.train.dtype, at::get_num_threads(), from_step,
                    c.train.steps - 1, all.front().steps);
  os << fmt::format("{:<38}", "ms per step (self time)");
  for (const auto& b : all) os << fmt::format(" {:>11} {:>6}", b.variant, "share");
  os << "\n";
  for (const auto& row : row_order()) {
    os << fmt::format("{:<38}", row);
    for (const auto& b : all) {
      const auto it = b.category_seconds.find(row);
      const double s = it == b.category_seconds.end() ? 0.0 : it->second;
      os << fmt::format(" {:>11.1f} {:>5.1f}%", 1e3 * s, 100.0 * s / b.step_seconds);
    }
    os << "\n";
  }
  os << fmt::format("{:<38}", "measured step");
  for (const auto& b : all) os << fmt::format(" {:>11.1f} {:>6}", 1e3 * b.step_seconds, "");
  os << "\n(harness bookkeeping runs after the step's clock stops; its share is of a step.)\n";
  os << fmt::format("\n{:<38}", "phase (inclusive, ms per step)");
  for (const auto& b : all) os << fmt::format(" {:>11} {:>6}", b.variant, "");
  os << "\n";
  for (const char* phase : {"forward", "backward", "clip", "optimizer", "bookkeeping"}) {
    os << fmt::format("{:<38}", phase);
    for (const auto& b : all) {
      const auto it = b.phase_seconds.find(phase);
      os << fmt::format(" {:>11.2f} {:>6}", it == b.phase_seconds.end() ? 0.0 : 1e3 * it->second, "");
    }
    os << "\n";
  }
  for (const auto& b : all) {
    os << fmt::format("\ntop {} ops of {} by self time\n{:<42} {:<12} {:>9} {:>10} {:>6}\n", top, b.variant, "op",
                      "phase", "calls", "ms/step", "share");
    for (size_t i = 0; i < std::min(top, b.ops.size()); ++i) {
      const auto& op = b.ops[i];
      os << fmt::format("{:<42} {:<12} {:>9.1f} {:>10.2f} {:>5.1f}%\n", op.name, short_phase(op.phase), op.calls,
                        1e3 * op.seconds, 100.0 * op.seconds / b.step_seconds);
    }
  }
  return os.str();
}

nlohmann::ordered_json json(const std::vector<StepBreakdown>& all, int64_t from_step) {
  auto list = nlohmann::ordered_json::array();
  for (const auto& b : all) {
    nlohmann::ordered_json j;
    j["variant"] = b.variant;
    j["from_step"] = from_step;
    j["steps"] = b.steps;
    j["step_seconds"] = b.step_seconds;
    for (const auto& row : row_order()) {
      const auto it = b.category_seconds.find(row);
      j["category_seconds_per_step"][row] = it == b.category_seconds.end() ? 0.0 : it->second;
    }
    j["phase_seconds_per_step"] = b.phase_seconds;
    j["eval_seconds"] = b.eval_seconds;
    auto ops = nlohmann::ordered_json::array();
    for (const auto& op : b.ops)
      ops.push_back({{"op", op.name}, {"phase", short_phase(op.phase)}, {"calls_per_step", op.calls},
                     {"seconds_per_step", op.seconds}});
    j["ops"] = ops;
    list.push_back(j);
  }
  return list;
}

}  // namespace

void add_profile_command(CLI::App& app, int& exit_code) {
  struct Opts {
    ModelSelection selection;
    std::string variants = "functional,module";
    size_t top = 12;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand(
      "profile", "per-op breakdown of a training step of each implementation (GEMM, attention, element-wise, ...)");
  add_model_selection(cmd, o->selection);
  cmd->add_option("--variant,--variants", o->variants, "built-in implementations, comma-separated")->capture_default_str();
  cmd->add_option("--top", o->top, "ops listed per implementation")->capture_default_str();
  cmd->add_flag("--json", o->json, "print JSON on stdout");
  cmd->callback([o, &exit_code] {
    RunConfig config = resolve(o->selection);
    config.measure.repeats = 1;
    config.train.checkpoint_every = 0;
    std::vector<std::string> variants;
    std::stringstream ss(o->variants);
    for (std::string v; std::getline(ss, v, ',');)
      if (!v.empty()) variants.push_back(v);
    if (variants.empty()) throw ConfigError("command line", "--variants", "no implementation given");
    for (const auto& v : variants) {
      if (is_external_variant(config, v))
        throw ConfigError("command line", "--variants", fmt::format("'{}' runs as its own process: profile it with "
                                                                    "its own tools (docs/external.md)", v));
      make_variant(v, {preset_config("tiny"), 0, torch::kCPU});  // unknown names fail now
    }
    if (config.dist.nproc > 1)
      throw ConfigError("command line", "dist.nproc", "profile runs in this process: use dist.nproc=1");
    ProfileRequest request;
    request.from_step = std::max<int64_t>(1, config.measure.warmup_steps);
    if (config.train.steps < request.from_step + 1)
      throw ConfigError("command line", "train.steps",
                        fmt::format("profile observes the steps after the {} warm-up step(s): give train.steps > {}",
                                    request.from_step, request.from_step));
    // A store of its own, so bookkeeping is measured with real store writes while the
    // profiled (slower) runs stay out of the user's history.
    TempDir scratch("twinbench-profile");
    store::Store db(scratch.file("profile.db"));
    RunnerOptions options;
    options.store = &db;
    options.group_id = store::new_uuid();
    options.profile = &request;
    options.progress = !o->json;
    const auto outcomes = run_all({config}, variants, options, std::cerr);
    for (const auto& r : outcomes)
      if (r.status != RunStatus::completed) {
        std::cerr << fmt::format("twinbench profile: {} did not complete: {}: {}\n", r.variant, to_string(r.status),
                                 r.reason);
        exit_code = kExitFailure;
        return;
      }
    std::vector<StepBreakdown> all;
    for (const auto& p : request.results) all.push_back(breakdown(p));
    if (o->json)
      std::cout << json(all, request.from_step).dump(2) << "\n";
    else
      std::cout << text(config, all, request.from_step, o->top);
    exit_code = kExitOk;
  });
}

}  // namespace twinbench::cli
