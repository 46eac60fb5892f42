// The analysis of one interleaved session (see session_analysis.h).
#include "harness/compare/session_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <stdexcept>

#include "harness/compare/sessions.h"

namespace twinbench::compare {

SessionAnalysis analyze_session(std::vector<RunView> runs, const std::vector<std::pair<std::string, std::string>>& rounds,
                                const std::string& label_a, const std::string& label_b,
                                const std::map<std::string, double>& thresholds, double confidence,
                                std::optional<LookSchedule> schedule, std::vector<RunView> profiles) {
  SessionAnalysis s;
  s.runs = std::move(runs);
  auto find = [&](const std::string& id) -> RunView& {
    for (auto& v : s.runs)
      if (v.run.run_id == id) return v;
    throw std::invalid_argument(fmt::format("run {} of the session is not among its stored runs", id));
  };
  std::vector<const RunView*> runs_a, runs_b;
  for (size_t k = 0; k < rounds.size(); ++k) {
    // Each side ran `--repeats 1`: the round is what pairs A's run with B's.
    RunView& a = find(rounds[k].first);
    RunView& b = find(rounds[k].second);
    a.run.repeat_index = b.run.repeat_index = static_cast<int>(k);
    runs_a.push_back(&a);
    runs_b.push_back(&b);
  }
  CompareOptions o;
  o.thresholds = thresholds;
  o.family.confidence = confidence;
  o.schedule = std::move(schedule);
  o.paired = true;
  o.parity = false;
  const std::string case_name = runs_b.empty() ? "" : runs_b.front()->run.case_name;
  s.comparison = compare_runs(case_name, label_a, label_b, runs_a, runs_b, o);
  s.confidence = s.comparison.confidence;
  for (const auto& m : s.comparison.metrics) {
    if (!m.baseline && !m.candidate) continue;  // e.g. MFU without a calibration
    SessionMetric row;
    row.comparison = m;
    for (size_t k = 0; k < runs_a.size(); ++k) {
      row.a.push_back(runs_a[k]->metric(m.spec.name));
      row.b.push_back(runs_b[k]->metric(m.spec.name));
    }
    s.metrics.push_back(std::move(row));
  }
  s.profiles = std::move(profiles);
  auto why = explain_all({s.comparison}, s.profiles, confidence);
  s.why = std::move(why.front());
  return s;
}

SessionAnalysis analyze_stored_session(std::vector<RunView> runs, const std::string& label_a, const std::string& label_b,
                                       double confidence, std::vector<RunView> profiles) {
  std::vector<const RunView*> a, b;
  for (const auto& v : runs) {
    if (v.run.git_branch == label_a) a.push_back(&v);
    if (v.run.git_branch == label_b) b.push_back(&v);
  }
  for (const auto& [side, label] : {std::pair{&a, &label_a}, std::pair{&b, &label_b}})
    if (side->empty()) throw std::invalid_argument(fmt::format("no run labelled '{}' in the session", *label));
  const auto by_start = [](const RunView* x, const RunView* y) { return x->run.started_at < y->run.started_at; };
  std::stable_sort(a.begin(), a.end(), by_start);
  std::stable_sort(b.begin(), b.end(), by_start);
  std::vector<std::pair<std::string, std::string>> rounds;
  for (size_t k = 0; k < std::min(a.size(), b.size()); ++k) rounds.emplace_back(a[k]->run.run_id, b[k]->run.run_id);
  // Judged at the levels its looks spent, as its runs recorded them.
  return analyze_session(std::move(runs), rounds, label_a, label_b, {}, confidence, std::nullopt, std::move(profiles));
}

std::vector<std::string> session_labels(const std::vector<RunView>& runs) {
  std::set<std::string> labels;
  for (const auto& v : runs) labels.insert(v.run.git_branch);
  return {labels.begin(), labels.end()};
}

}  // namespace twinbench::compare
