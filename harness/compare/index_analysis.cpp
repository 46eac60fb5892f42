// The index analysis (see index_analysis.h).
#include "harness/compare/index_analysis.h"

#include <algorithm>
#include <iterator>
#include <tuple>

namespace twinbench::compare {

namespace {

PairSummary summarize_pair(const PairAnalysis& pair) {
  const Verdict headline[] = {Verdict::kRegressed, Verdict::kImproved, Verdict::kNoChange, Verdict::kInconclusive,
                              Verdict::kNewFailure};
  PairSummary s;
  s.group_id = pair.group_id;
  s.variant_a = pair.variant_a;
  s.variant_b = pair.variant_b;
  s.cases = pair.cases.size();
  for (const Verdict v : headline) s.by_worst[v] = 0;
  for (const auto& c : pair.cases) {
    if (std::find(std::begin(headline), std::end(headline), c.worst) == std::end(headline))
      ++s.other;
    else
      ++s.by_worst[c.worst];
    for (const auto& m : c.metrics)
      if (m.spec.name == "step_time_median_s" && m.estimate) {
        ++s.timed;
        if (m.verdict == Verdict::kRegressed || m.verdict == Verdict::kImproved || m.verdict == Verdict::kNoChange)
          ++s.decisive;
      }
  }
  return s;
}

}  // namespace

IndexAnalysis analyze_index(const std::vector<RunView>& all, const PairAnalysis* pair) {
  IndexAnalysis out;
  out.runs = all.size();
  // Newest run and the step-time history per (case, variant, hardware); runs
  // are oldest first.
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, const RunView*> latest;
  std::map<Key, std::vector<double>> history;
  std::vector<Key> order;
  for (const auto& v : all) {
    const Key key{v.run.case_name, v.run.variant, v.run.hardware_fingerprint};
    if (!latest.count(key)) order.push_back(key);
    latest[key] = &v;
    if (const auto t = v.metric("step_time_mean_s")) history[key].push_back(*t);
  }
  std::sort(order.begin(), order.end());
  std::map<std::string, std::string> machines;  // fingerprint -> description
  for (const auto& key : order) machines[std::get<2>(key)] = latest[key]->hardware();
  for (const auto& [fingerprint, description] : machines) out.machines.push_back(description);
  for (const auto& key : order) {
    const RunView& v = *latest[key];
    IndexRow row;
    row.case_name = std::get<0>(key);
    row.variant = std::get<1>(key);
    if (machines.size() > 1) row.machine = machines[std::get<2>(key)];
    row.status = to_string(v.run.status);
    row.reason = v.run.reason;
    row.final_loss = v.metric("final_loss");
    row.step_time_mean_s = v.metric("step_time_mean_s");
    row.history = history[key];
    row.started_at = v.run.started_at;
    if (pair)
      for (const auto& c : pair->cases)
        if (c.case_name == row.case_name && (row.variant == pair->variant_a || row.variant == pair->variant_b)) {
          row.pair_verdict = c.worst;
          row.pairs = c.pairs;
        }
    out.rows.push_back(std::move(row));
  }
  if (pair) {
    out.pair = summarize_pair(*pair);
    for (const auto& c : pair->cases) out.pair_cases.push_back(c.case_name);
  }
  return out;
}

}  // namespace twinbench::compare
