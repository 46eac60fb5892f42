// The branch analysis (see branch_analysis.h).
#include "harness/compare/branch_analysis.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "harness/compare/drift.h"

namespace twinbench::compare {

namespace {

// Largest relative change among the metrics that carry the worst verdict.
double worst_change(const Comparison& c) {
  double m = 0;
  for (const auto& x : c.metrics)
    if (x.verdict == c.worst && x.rel_diff) m = std::max(m, std::abs(*x.rel_diff));
  return m;
}

}  // namespace

BranchAnalysis analyze_branch(BranchSides sides, const std::string& baseline_ref, const std::string& candidate_ref,
                              const std::vector<std::string>& variants, const CompareOptions& options,
                              std::vector<RunView> profiles) {
  BranchAnalysis r;
  r.baseline_ref = baseline_ref;
  r.candidate_ref = candidate_ref;
  r.baseline_how = sides.how;
  r.baseline_commit = sides.baseline_commit;
  // Keep both sides in one vector; remember where the candidate's start.
  const size_t split = sides.baseline.size();
  r.runs = std::move(sides.baseline);
  r.runs.insert(r.runs.end(), std::make_move_iterator(sides.candidate.begin()), std::make_move_iterator(sides.candidate.end()));
  CompareOptions o = options;
  o.parity = false;  // same implementation: curves may differ legitimately across refs
  // Runs made apart are not pairs (Welch); one interleaved session (ab, the
  // branch gate) is, and its looks are paid for.
  o.paired = sides.session;
  // The series both sides ran; those only one side ran are named apart.
  std::vector<std::pair<std::string, std::vector<std::string>>> keys;  // case -> variants
  for (const auto& name : case_names(r.runs)) {
    std::vector<std::string> vs;
    for (size_t i = 0; i < r.runs.size(); ++i) {
      const RunView& run = r.runs[i];
      if (run.run.case_name != name || std::find(vs.begin(), vs.end(), run.run.variant) != vs.end()) continue;
      if (!variants.empty() && std::find(variants.begin(), variants.end(), run.run.variant) == variants.end()) continue;
      bool in_a = false, in_b = false;
      for (size_t k = 0; k < r.runs.size(); ++k)
        if (r.runs[k].run.case_name == name && r.runs[k].run.variant == run.run.variant) (k < split ? in_a : in_b) = true;
      if (in_a && in_b) {
        vs.push_back(run.run.variant);
      } else {
        auto& only = in_a ? r.only_baseline : r.only_candidate;
        const std::string series = name + " / " + run.run.variant;
        if (std::find(only.begin(), only.end(), series) == only.end()) only.push_back(series);
      }
    }
    if (!vs.empty()) keys.emplace_back(name, std::move(vs));
  }
  // Like with like: per (case, implementation), the runs of each hardware both
  // refs ran on; no hardware in common, all of them (then not comparable).
  struct Pending {
    std::string name, variant;
    std::vector<const RunView*> a, b;
  };
  std::vector<Pending> pending;
  for (const auto& [name, vs] : keys) {
    for (const auto& v : vs) {
      std::vector<const RunView*> a, b;
      std::vector<std::string> order;  // hardware, first-seen
      std::map<std::string, std::pair<std::vector<const RunView*>, std::vector<const RunView*>>> by_hardware;
      for (size_t i = 0; i < r.runs.size(); ++i) {
        const RunView& run = r.runs[i];
        if (run.run.case_name != name || run.run.variant != v) continue;
        (i < split ? a : b).push_back(&run);
        auto [it, added] = by_hardware.try_emplace(run.run.hardware_fingerprint);
        if (added) order.push_back(run.run.hardware_fingerprint);
        (i < split ? it->second.first : it->second.second).push_back(&run);
      }
      std::vector<Pending> shared;
      for (const auto& hw : order) {
        const auto& [ha, hb] = by_hardware.at(hw);
        if (!ha.empty() && !hb.empty()) shared.push_back({name, v, ha, hb});
      }
      if (shared.empty()) shared.push_back({name, v, a, b});
      pending.insert(pending.end(), shared.begin(), shared.end());
    }
  }
  // One family of every comparison's step time, one of the other times.
  std::map<std::pair<std::string, std::string>, int> per_key;
  for (const auto& p : pending) ++per_key[{p.name, p.variant}];
  std::vector<ComparisonInput> inputs;
  for (const auto& p : pending) inputs.push_back({p.name, baseline_ref, candidate_ref, p.a, p.b});
  std::vector<Comparison> judged = compare_family(inputs, o);
  for (size_t k = 0; k < pending.size(); ++k) {
    const Pending& p = pending[k];
    Comparison c = std::move(judged[k]);
    c.variant = p.variant;
    // A fleet's machine types side by side: which one this comparison is.
    if (per_key[{p.name, p.variant}] > 1) c.variant += " @ " + c.hardware_a;
    r.comparisons.push_back(std::move(c));
  }
  std::stable_sort(r.comparisons.begin(), r.comparisons.end(), [](const Comparison& x, const Comparison& y) {
    if (severity(x.worst) != severity(y.worst)) return severity(x.worst) > severity(y.worst);
    return worst_change(x) > worst_change(y);
  });
  for (const auto& c : r.comparisons) {
    if (is_bad(c.worst)) ++r.regressions;
    if (!o.paired) r.drift.push_back(host_drift(c.runs_a, c.runs_b).text);
  }
  r.profiles = std::move(profiles);
  r.why = explain_all(r.comparisons, r.profiles, options.family.confidence);
  return r;
}

}  // namespace twinbench::compare
