// Loading and grouping stored runs for reports (see runs.h).
#include "harness/compare/runs.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "harness/metrics/run_metrics.h"
#include "harness/stats/summary.h"

namespace twinbench::compare {

std::optional<double> RunView::metric(const std::string& name) const {
  const auto it = metrics.find(name);
  return it == metrics.end() ? std::nullopt : it->second;
}

std::vector<double> RunView::steady_times() const { return steady_step_times(steps); }

std::vector<double> RunView::losses() const {
  std::vector<double> out;
  out.reserve(steps.size());
  for (const auto& s : steps) out.push_back(s.loss);
  return out;
}

std::string RunView::config_value(const std::string& key) const {
  const auto j = nlohmann::json::parse(run.config_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains(key)) return "";
  const auto& v = j.at(key);
  return v.is_string() ? v.get<std::string>() : v.dump();
}

std::vector<RunView> load_runs(const store::Store& db, const store::RunFilter& filter) {
  auto records = db.runs(filter);  // newest first
  std::reverse(records.begin(), records.end());
  std::vector<RunView> out;
  out.reserve(records.size());
  for (auto& r : records) {
    RunView v;
    v.metrics = db.metrics(r.run_id);
    v.steps = db.steps(r.run_id);
    v.run = std::move(r);
    out.push_back(std::move(v));
  }
  return out;
}

std::string resolve_group(const store::Store& db, const std::string& group) {
  if (!group.empty()) {
    store::RunFilter f;
    f.group_id = group;
    f.limit = 1;
    if (db.runs(f).empty()) throw std::invalid_argument(fmt::format("{}: no runs in group '{}'", db.path(), group));
    return group;
  }
  store::RunFilter f;
  f.limit = 1;
  const auto newest = db.runs(f);
  if (newest.empty()) throw std::invalid_argument(fmt::format("{}: the store holds no runs", db.path()));
  return newest.front().group_id;
}

bool matches_ref(const store::RunRecord& run, const std::string& ref) {
  if (ref.empty()) return false;
  if (run.git_branch == ref) return true;
  return ref.size() >= 4 && run.git_commit.rfind(ref, 0) == 0;
}

std::vector<RunView> latest_runs_of_ref(const std::vector<RunView>& all, const std::string& ref) {
  // The newest group per (case, variant) among the runs of `ref` (runs are oldest first).
  std::map<std::pair<std::string, std::string>, std::string> newest_group;
  for (const auto& v : all)
    if (matches_ref(v.run, ref)) newest_group[{v.run.case_name, v.run.variant}] = v.run.group_id;
  std::vector<RunView> out;
  for (const auto& v : all) {
    const auto it = newest_group.find({v.run.case_name, v.run.variant});
    if (it != newest_group.end() && it->second == v.run.group_id && matches_ref(v.run, ref)) out.push_back(v);
  }
  return out;
}

namespace {

int status_rank(const std::string& s) {
  if (s == "completed") return 0;
  if (s == "skipped") return 1;
  if (s == "interrupted") return 2;
  if (s == "diverged") return 3;
  if (s == "failed") return 4;
  return 5;  // running
}

}  // namespace

Side side_of(const std::vector<const RunView*>& runs, const metrics::Metric& spec, bool pooled_steps) {
  Side side;
  if (runs.empty()) {
    side.status = "missing";
    return side;
  }
  side.status = "completed";
  for (const auto* r : runs) {
    const std::string s(to_string(r->run.status));
    if (status_rank(s) > status_rank(side.status)) side.status = s;
  }
  std::vector<double> values;
  for (const auto* r : runs)
    if (const auto v = r->metric(spec.name)) values.push_back(*v);
  if (!values.empty()) side.value = stats::median(values);
  if (!pooled_steps) {
    side.samples = values;
    return side;
  }
  // Per-step samples: step times as they are, rates as work / step time.
  for (const auto* r : runs) {
    const auto times = r->steady_times();
    const auto mean = r->metric("step_time_mean_s");
    const auto value = r->metric(spec.name);
    for (double t : times) {
      if (spec.name == "step_time_mean_s" || spec.name == "step_time_median_s") {
        side.samples.push_back(t);
      } else if (value && mean && t > 0) {
        side.samples.push_back(*value * *mean / t);  // rate metrics are work / mean time
      }
    }
  }
  return side;
}

std::vector<metrics::Metric> specs_for(const RunView& run, const std::map<std::string, double>& cli_thresholds) {
  std::map<std::string, double> thresholds;
  const auto j = nlohmann::json::parse(run.run.config_json, nullptr, false);
  if (j.is_object() && j.contains("thresholds") && j["thresholds"].is_object())
    for (const auto& [k, v] : j["thresholds"].items())
      if (v.is_number()) thresholds[k] = v.get<double>();
  for (const auto& [k, v] : cli_thresholds) thresholds[k] = v;
  return metrics::with_thresholds(metrics::shown_in(metrics::kVerdict), thresholds);
}

std::vector<std::string> case_names(const std::vector<RunView>& runs) {
  std::vector<std::string> out;
  for (const auto& r : runs)
    if (std::find(out.begin(), out.end(), r.run.case_name) == out.end()) out.push_back(r.run.case_name);
  return out;
}

}  // namespace twinbench::compare
