// Loading and grouping stored runs for reports (see runs.h).
#include "harness/compare/runs.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

#include "harness/base/git.h"
#include "harness/compare/profile_record.h"
#include "harness/metrics/run_metrics.h"
#include "harness/stats/summary.h"

namespace twinbench::compare {

std::vector<RunView> load_runs(const store::Store& db, const store::RunFilter& filter) {
  return load_runs(db, filter, LoadOptions{});
}

std::vector<RunView> load_runs(const store::Store& db, const store::RunFilter& filter, const LoadOptions& options) {
  auto records = db.runs(filter);  // newest first
  std::reverse(records.begin(), records.end());
  std::vector<RunView> out;
  out.reserve(records.size());
  for (auto& r : records) {
    if (is_profile_run(r) != options.profiles) continue;
    RunView v;
    v.metrics = db.metrics(r.run_id);
    if (options.steps && !options.profiles) v.steps = db.steps(r.run_id);
    v.run = std::move(r);
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<RunView> load_profile_runs(const store::Store& db, const std::vector<RunView>& runs) {
  std::vector<std::string> groups;
  for (const auto& v : runs)
    if (std::find(groups.begin(), groups.end(), v.run.group_id) == groups.end()) groups.push_back(v.run.group_id);
  LoadOptions load;
  load.profiles = true;
  std::vector<RunView> out;
  for (const auto& g : groups) {
    store::RunFilter f;
    f.group_id = g;
    for (auto& v : load_runs(db, f, load)) out.push_back(std::move(v));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const RunView& x, const RunView& y) { return x.run.started_at < y.run.started_at; });
  return out;
}

std::vector<RunView> load_nightly_runs(const store::Store& db, int days, const std::string& now_utc) {
  const std::string now = now_utc.empty() ? store::now_utc() : now_utc;
  store::RunFilter filter;
  if (now.size() >= 10 && now[4] == '-' && now[7] == '-') {
    std::tm tm{};
    tm.tm_year = std::atoi(now.substr(0, 4).c_str()) - 1900;
    tm.tm_mon = std::atoi(now.substr(5, 2).c_str()) - 1;
    tm.tm_mday = std::atoi(now.substr(8, 2).c_str());
    const std::time_t since = timegm(&tm) - static_cast<std::time_t>(days + 1) * 86400;
    std::tm day{};
    gmtime_r(&since, &day);
    filter.started_since = fmt::format("{:04}-{:02}-{:02}", day.tm_year + 1900, day.tm_mon + 1, day.tm_mday);
  }
  LoadOptions load;
  load.steps = false;  // the trends chart per-run metrics only
  return load_runs(db, filter, load);
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

std::string groups_with_variant(const store::Store& db, const std::string& variant, size_t limit) {
  store::RunFilter f;
  f.variant = variant;
  std::vector<std::string> order;  // newest first
  std::map<std::string, std::pair<std::string, size_t>> groups;  // id -> (earliest start, runs)
  for (const auto& r : db.runs(f)) {
    auto [it, added] = groups.try_emplace(r.group_id, r.started_at, 0);
    if (added) order.push_back(r.group_id);
    it->second.first = std::min(it->second.first, r.started_at);
    ++it->second.second;
  }
  std::string out;
  for (size_t i = 0; i < order.size() && i < limit; ++i) {
    const auto& [start, runs] = groups.at(order[i]);
    out += fmt::format("{}{} (started {}, {} run{} of {})", out.empty() ? "" : ", ", order[i], start.substr(0, 16),
                       runs, runs == 1 ? "" : "s", variant);
  }
  if (order.size() > limit) out += fmt::format(" and {} older", order.size() - limit);
  return out.empty() ? "none" : out;
}

bool matches_ref(const store::RunRecord& run, const std::string& ref) {
  if (ref.empty()) return false;
  if (run.git_branch == ref) return true;
  return ref.size() >= 4 && run.git_commit.rfind(ref, 0) == 0;
}

std::string resolve_ref(const std::vector<RunView>& all, const std::string& ref, const std::string& what) {
  auto known = [&](const std::string& r) {
    return std::any_of(all.begin(), all.end(), [&](const RunView& v) { return matches_ref(v.run, r); });
  };
  if (known(ref)) return ref;
  if (const auto commit = git_commit_of(ref); commit && known(*commit)) return *commit;
  std::vector<std::string> refs;  // newest last
  for (const auto& v : all) {
    for (const std::string& r : {v.run.git_branch, v.run.git_commit.substr(0, 9)})
      if (!r.empty() && std::find(refs.begin(), refs.end(), r) == refs.end()) refs.push_back(r);
  }
  std::string list;
  for (size_t i = refs.size() > 20 ? refs.size() - 20 : 0; i < refs.size(); ++i) list += (list.empty() ? "" : ", ") + refs[i];
  throw std::invalid_argument(fmt::format("no runs of {} ref '{}' in the store (not a branch label or commit prefix of "
                                          "any run{}); the store holds: {}",
                                          what, ref, git_commit_of(ref) ? ", nor the commit git resolves it to" : "",
                                          list.empty() ? "no runs" : list));
}

std::vector<RunView> latest_runs_of_ref(const std::vector<RunView>& all, const std::string& ref) {
  // The newest group per (case, variant, hardware) among the runs of `ref` (runs
  // are oldest first): each machine type of a fleet keeps its own newest runs.
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, std::string> newest_group;
  for (const auto& v : all)
    if (matches_ref(v.run, ref))
      newest_group[{v.run.case_name, v.run.variant, v.run.hardware_fingerprint}] = v.run.group_id;
  std::vector<RunView> out;
  for (const auto& v : all) {
    const auto it = newest_group.find({v.run.case_name, v.run.variant, v.run.hardware_fingerprint});
    if (it != newest_group.end() && it->second == v.run.group_id && matches_ref(v.run, ref)) out.push_back(v);
  }
  return out;
}

PairSelection select_pair_runs(const store::Store& db, const std::string& group, const std::string& a,
                               const std::string& b) {
  PairSelection out;
  out.group_id = resolve_group(db, group);
  store::RunFilter f;
  f.group_id = out.group_id;
  out.runs = load_runs(db, f);
  const auto has = [&](const std::string& variant) {
    return std::any_of(out.runs.begin(), out.runs.end(), [&](const RunView& v) { return v.run.variant == variant; });
  };
  if (!group.empty() || (has(a) && has(b))) return out;

  // The newest group per (case, variant) of A and B, from the run rows alone
  // (newest first), so that only the chosen groups' steps are read.
  std::map<std::pair<std::string, std::string>, std::string> newest_group;
  std::vector<std::string> groups;
  for (const auto& r : db.runs()) {
    if (r.variant != a && r.variant != b) continue;
    if (!newest_group.try_emplace({r.case_name, r.variant}, r.group_id).second) continue;
    if (std::find(groups.begin(), groups.end(), r.group_id) == groups.end()) groups.push_back(r.group_id);
  }
  if (newest_group.empty()) return out;  // neither anywhere: the newest group shows them missing
  out.runs.clear();
  for (const auto& g : groups) {
    store::RunFilter in_group;
    in_group.group_id = g;
    for (auto& v : load_runs(db, in_group)) {
      const auto it = newest_group.find({v.run.case_name, v.run.variant});
      if (it != newest_group.end() && it->second == g) out.runs.push_back(std::move(v));
    }
  }
  std::stable_sort(out.runs.begin(), out.runs.end(),
                   [](const RunView& x, const RunView& y) { return x.run.started_at < y.run.started_at; });
  std::reverse(groups.begin(), groups.end());  // oldest first, like the runs
  if (groups.size() == 1) {
    out.group_id = groups.front();
  } else if (!groups.empty()) {
    constexpr size_t kNamed = 4;
    out.group_id = "newest per case: ";
    for (size_t i = 0; i < groups.size() && i < kNamed; ++i) out.group_id += (i ? ", " : "") + groups[i];
    if (groups.size() > kNamed) out.group_id += fmt::format(" and {} more", groups.size() - kNamed);
  }
  return out;
}

}  // namespace twinbench::compare
