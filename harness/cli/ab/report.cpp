// Console table and JSON of an ab result (see report.h).
#include "harness/cli/ab/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <array>
#include <tuple>

#include "harness/compare/comparison.h"
#include "reports/hook_marks.h"
#include "reports/why_section.h"

namespace twinbench::ab {

namespace {

std::string order_text(const AbResult& r) {
  std::string s;
  if (r.pairing == Pairing::kLockstep) return "lockstep: one step of each build a round of steps, in a random order";
  if (r.pairing == Pairing::kSimultaneous) return "simultaneous: A and B at the same time, one core each";
  for (const Round& round : r.rounds) s += (s.empty() ? "" : ", ") + std::string(round.a_first ? "A B" : "B A");
  return s;
}

nlohmann::ordered_json opt(const std::optional<double>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}

}  // namespace

std::string format_table(const AbResult& r) {
  std::string out;
  out += fmt::format("twinbench ab: {} / {}, {} rounds ({}), {}; alpha {:g}, {} look{} ({} intervals)\n",
                     r.case_label, r.variant, r.rounds.size(), order_text(r), r.stopped_because, r.alpha, r.looks,
                     r.looks == 1 ? "" : "s", stats::format_level(r.confidence));
  out += fmt::format("  intervals: {}\n", r.levels);
  if (!r.what_decides.empty()) out += fmt::format("  undecided: {}\n", r.what_decides);
  if (!r.pairing_note.empty()) out += fmt::format("  pairing: {}\n", r.pairing_note);
  out += fmt::format("  A = {}  commit {}  label {}\n", r.a.binary, r.commit_a, r.label_a);
  out += fmt::format("  B = {}  commit {}  label {}\n", r.b.binary, r.commit_b, r.label_b);
  out += fmt::format("  stored in {} under group {}\n", r.db, r.group_id);
  if (const auto hooks = reports::hooks_text({{"A", r.test_hooks_a}, {"B", r.test_hooks_b}}); !hooks.empty())
    out += "  ! " + hooks + "\n";
  out += "\n";

  std::vector<std::array<std::string, 6>> rows = {{"metric", "A (median)", "B (median)", "B/A - 1 [CI]", "verdict", "why"}};
  for (const auto& m : r.metrics) {
    const auto& c = m.comparison;
    rows.push_back({c.spec.label, metrics::format_value(c.spec, c.baseline), metrics::format_value(c.spec, c.candidate),
                    c.change.empty() ? "-" : c.change, compare::to_string(c.verdict), c.explanation});
  }
  std::array<size_t, 6> width{};
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  for (const auto& row : rows) {
    std::string line;
    for (size_t i = 0; i < row.size(); ++i)
      line += i + 1 == row.size() ? row[i] : fmt::format("{:<{}}  ", row[i], width[i]);
    out += line + "\n";
  }

  std::string worst;
  for (const auto& m : r.metrics)
    if (m.comparison.verdict == r.worst && r.worst != compare::Verdict::kNoChange)
      worst += (worst.empty() ? "" : ", ") + m.comparison.spec.label;
  out += fmt::format("\nverdict: {}{}\n", compare::to_string(r.worst), worst.empty() ? "" : " (" + worst + ")");
  if (r.why) {  // the why of a decisive session (compare/explain_analysis.h): the line, then the table
    std::string change;
    for (const auto& m : r.metrics)
      if (m.comparison.spec.name == "step_time_median_s") change = m.comparison.change;
    out += reports::why_console(*r.why, change) + reports::why_markdown(*r.why);
  }
  return out;
}

nlohmann::ordered_json to_json(const AbResult& r) {
  nlohmann::ordered_json j;
  j["case"] = r.case_label;
  j["variant"] = r.variant;
  j["group_id"] = r.group_id;
  j["db"] = r.db;
  j["alpha"] = r.alpha;
  j["confidence"] = r.confidence;
  j["looks"] = r.looks;
  j["plan"] = r.plan.looks;
  j["levels"] = r.levels;
  if (!r.what_decides.empty()) j["what_decides"] = r.what_decides;
  j["stopped_because"] = r.stopped_because;
  j["seconds"] = r.seconds;
  j["pairing"] = to_string(r.pairing);
  if (!r.pairing_note.empty()) j["pairing_note"] = r.pairing_note;
  j["verdict"] = compare::to_string(r.worst);
  for (const auto& [key, build, commit, label] :
       {std::tuple{"a", &r.a, &r.commit_a, &r.label_a}, std::tuple{"b", &r.b, &r.commit_b, &r.label_b}}) {
    j[key] = {{"path", build->given}, {"binary", build->binary}, {"commit", *commit}, {"label", *label}};
  }
  j["a"]["test_hooks"] = r.test_hooks_a;  // "" for real runs
  j["b"]["test_hooks"] = r.test_hooks_b;
  nlohmann::ordered_json rounds = nlohmann::ordered_json::array();
  for (const Round& round : r.rounds)
    rounds.push_back({{"round", round.index + 1}, {"order", r.pairing == Pairing::kRuns ? (round.a_first ? "AB" : "BA") : to_string(r.pairing)}, {"run_a", round.run_a},
                      {"run_b", round.run_b}});
  j["rounds"] = rounds;
  nlohmann::ordered_json metrics = nlohmann::ordered_json::array();
  for (const auto& m : r.metrics) {
    const auto& c = m.comparison;
    nlohmann::ordered_json x;
    x["metric"] = c.spec.name;
    x["label"] = c.spec.label;
    x["a"] = opt(c.baseline);
    x["b"] = opt(c.candidate);
    const auto& e = c.estimate;
    x["change"] = c.change;
    x["ratio"] = e && std::isfinite(e->ratio) ? nlohmann::json(e->ratio) : nlohmann::json(nullptr);
    x["ratio_ci_low"] = e && e->interval ? nlohmann::json(e->interval->low) : nlohmann::json(nullptr);
    x["ratio_ci_high"] = e && e->interval ? nlohmann::json(e->interval->high) : nlohmann::json(nullptr);
    x["verdict"] = compare::to_string(c.verdict);
    x["explanation"] = c.explanation;
    nlohmann::ordered_json a = nlohmann::ordered_json::array(), b = nlohmann::ordered_json::array();
    for (const auto& v : m.a) a.push_back(opt(v));
    for (const auto& v : m.b) b.push_back(opt(v));
    x["rounds_a"] = a;
    x["rounds_b"] = b;
    metrics.push_back(x);
  }
  j["metrics"] = metrics;
  if (r.why) j["why"] = reports::why_json(*r.why);
  return j;
}

}  // namespace twinbench::ab
