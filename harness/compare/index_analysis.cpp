// The index analysis (see index_analysis.h).
#include "harness/compare/index_analysis.h"

#include <algorithm>
#include <set>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

namespace twinbench::compare {

namespace {

Verdict verdict_named(const std::string& name) {
  for (const Verdict v : {Verdict::kRegressed, Verdict::kImproved, Verdict::kNoChange, Verdict::kInconclusive,
                          Verdict::kChanged, Verdict::kMissing, Verdict::kNotComparable, Verdict::kNewFailure,
                          Verdict::kNotJudged})
    if (to_string(v) == name) return v;
  throw std::invalid_argument("not a verdict: " + name);
}

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

PairDigest digest_of(const PairAnalysis& pair) {
  PairDigest d;
  d.summary = summarize_pair(pair);
  for (const auto& c : pair.cases) d.cases.push_back({c.case_name, c.worst, c.pairs});
  return d;
}

std::string to_json(const PairDigest& d) {
  nlohmann::ordered_json j;
  j["twinbench_pair_digest"] = 1;
  j["group_id"] = d.summary.group_id;
  j["a"] = d.summary.variant_a;
  j["b"] = d.summary.variant_b;
  j["cases_total"] = d.summary.cases;
  nlohmann::ordered_json worst = nlohmann::ordered_json::object();
  for (const auto& [v, n] : d.summary.by_worst) worst[to_string(v)] = n;
  j["by_worst"] = worst;
  j["other"] = d.summary.other;
  j["timed"] = d.summary.timed;
  j["decisive"] = d.summary.decisive;
  j["cases"] = nlohmann::ordered_json::array();
  for (const auto& c : d.cases) j["cases"].push_back({{"case", c.case_name}, {"worst", to_string(c.worst)}, {"pairs", c.pairs}});
  return j.dump(2);
}

std::optional<PairDigest> pair_digest_from_json(const std::string& text) {
  try {
    const auto j = nlohmann::json::parse(text);
    if (!j.is_object() || j.value("twinbench_pair_digest", 0) != 1) return std::nullopt;
    PairDigest d;
    d.summary.group_id = j.at("group_id").get<std::string>();
    d.summary.variant_a = j.at("a").get<std::string>();
    d.summary.variant_b = j.at("b").get<std::string>();
    d.summary.cases = j.at("cases_total").get<size_t>();
    for (const auto& [name, n] : j.at("by_worst").items()) d.summary.by_worst[verdict_named(name)] = n.get<size_t>();
    d.summary.other = j.at("other").get<size_t>();
    d.summary.timed = j.at("timed").get<size_t>();
    d.summary.decisive = j.at("decisive").get<size_t>();
    for (const auto& c : j.at("cases"))
      d.cases.push_back({c.at("case").get<std::string>(), verdict_named(c.at("worst").get<std::string>()),
                         c.at("pairs").get<size_t>()});
    return d;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

IndexAnalysis analyze_index(const std::vector<RunView>& all, const std::optional<PairDigest>& pair) {
  return analyze_index(all, all.size(), pair);
}

IndexAnalysis analyze_index(const std::vector<RunView>& all, size_t stored, const std::optional<PairDigest>& pair) {
  IndexAnalysis out;
  out.runs = stored;
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
    row.run_id = v.run.run_id;
    row.hardware_id = std::get<2>(key);
    if (machines.size() > 1) row.machine = machines[std::get<2>(key)];
    row.status = to_string(v.run.status);
    row.reason = v.run.reason;
    row.final_loss = v.metric("final_loss");
    row.step_time_mean_s = v.metric("step_time_mean_s");
    row.history = history[key];
    row.started_at = v.run.started_at;
    row.test_hooks = test_hooks(v.run);
    if (pair)
      for (const auto& c : pair->cases)
        if (c.case_name == row.case_name &&
            (row.variant == pair->summary.variant_a || row.variant == pair->summary.variant_b)) {
          row.pair_verdict = c.worst;
          row.pairs = c.pairs;
        }
    out.rows.push_back(std::move(row));
  }
  out.pair = pair;
  return out;
}

SiteIndex site_index(const std::vector<store::RunRecord>& newest, size_t groups, size_t branches) {
  SiteIndex out;
  std::map<std::string, size_t> group_at;  // group id -> index in out.groups
  std::set<std::string> branch_seen;
  const auto add = [](std::vector<std::string>& list, const std::string& x) {
    if (std::find(list.begin(), list.end(), x) == list.end()) list.push_back(x);
  };
  for (const auto& r : newest) {  // newest first
    auto at = group_at.find(r.group_id);
    if (at == group_at.end() && out.groups.size() < groups) {
      at = group_at.emplace(r.group_id, out.groups.size()).first;
      out.groups.push_back({r.group_id, r.started_at, r.git_branch, r.git_commit, 0, {}, {}, {}});
    }
    if (at != group_at.end()) {
      GroupRow& g = out.groups[at->second];
      ++g.runs;
      g.started_at = std::min(g.started_at, r.started_at);
      add(g.cases, r.case_name);
      add(g.variants, r.variant);
      add(g.labels, r.git_branch);
    }
    if (!r.git_branch.empty() && out.branches.size() < branches && branch_seen.insert(r.git_branch).second)
      out.branches.push_back({r.git_branch, r.started_at, r.git_commit});
  }
  return out;
}

}  // namespace twinbench::compare
