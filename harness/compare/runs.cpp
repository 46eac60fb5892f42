// Selecting and loading stored runs for reports (see runs.h). Each function
// asks the store for the runs it shows — a group, a series' newest runs, a
// ref's newest group per series, a window of nights — and reads their metrics
// (and steps, where they are drawn) a batch of runs per statement.
#include "harness/compare/runs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <tuple>

#include "harness/base/git.h"
#include "harness/compare/baseline.h"
#include "harness/compare/profile_record.h"
#include "harness/metrics/run_metrics.h"
#include "harness/stats/summary.h"

namespace twinbench::compare {

namespace {

using SeriesKey = std::tuple<std::string, std::string, std::string>;

SeriesKey series_of(const store::RunRecord& r) { return {r.case_name, r.variant, r.hardware_fingerprint}; }

// Whether `a` is newer than `b` as the store orders runs (start, then stored order).
bool newer(const store::RunRecord& a, const store::RunRecord& b) {
  return std::tie(a.started_at, a.stored_order) > std::tie(b.started_at, b.stored_order);
}

// "2026-11-26" -> "2026-11-27".
std::string day_after(const std::string& day) {
  std::tm tm{};
  tm.tm_year = std::atoi(day.substr(0, 4).c_str()) - 1900;
  tm.tm_mon = std::atoi(day.substr(5, 2).c_str()) - 1;
  tm.tm_mday = std::atoi(day.substr(8, 2).c_str()) + 1;
  const std::time_t t = timegm(&tm);
  std::tm out{};
  gmtime_r(&t, &out);
  return fmt::format("{:04}-{:02}-{:02}", out.tm_year + 1900, out.tm_mon + 1, out.tm_mday);
}

void oldest_first(std::vector<RunView>& runs) {
  std::sort(runs.begin(), runs.end(), [](const RunView& x, const RunView& y) { return newer(y.run, x.run); });
}

}  // namespace

std::vector<RunView> views_of(const store::Store& db, std::vector<store::RunRecord> records, const LoadOptions& options) {
  // Profiled runs (profile_record.h) are never timed runs, and the reverse.
  records.erase(std::remove_if(records.begin(), records.end(),
                               [&](const store::RunRecord& r) { return is_profile_run(r) != options.profiles; }),
                records.end());
  std::reverse(records.begin(), records.end());  // oldest first
  std::vector<std::string> ids;
  ids.reserve(records.size());
  for (const auto& r : records) ids.push_back(r.run_id);
  auto metrics = db.metrics_of(ids);
  std::map<std::string, std::vector<StepRecord>> steps;
  if (options.steps && !options.profiles) steps = db.steps_of(ids);
  std::vector<RunView> out;
  out.reserve(records.size());
  for (auto& r : records) {
    RunView v;
    if (const auto it = metrics.find(r.run_id); it != metrics.end()) v.metrics = it->second;
    if (const auto it = steps.find(r.run_id); it != steps.end()) v.steps = it->second;
    v.run = std::move(r);
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<RunView> load_runs(const store::Store& db, const store::RunFilter& filter) {
  return load_runs(db, filter, LoadOptions{});
}

std::vector<RunView> load_runs(const store::Store& db, const store::RunFilter& filter, const LoadOptions& options) {
  return views_of(db, db.runs(filter), options);
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

NightlyInput load_nightly_runs(const store::Store& db, int days, const std::string& now_utc,
                               const std::optional<store::Series>& only) {
  const std::string now = now_utc.empty() ? store::now_utc() : now_utc;
  std::string since;
  if (now.size() >= 10 && now[4] == '-' && now[7] == '-') {
    std::tm tm{};
    tm.tm_year = std::atoi(now.substr(0, 4).c_str()) - 1900;
    tm.tm_mon = std::atoi(now.substr(5, 2).c_str()) - 1;
    tm.tm_mday = std::atoi(now.substr(8, 2).c_str());
    const std::time_t start = timegm(&tm) - static_cast<std::time_t>(days + 1) * 86400;
    std::tm day{};
    gmtime_r(&start, &day);
    since = fmt::format("{:04}-{:02}-{:02}", day.tm_year + 1900, day.tm_mon + 1, day.tm_mday);
  }
  NightlyInput in;
  // The groups of the days (run_groups: one row a group), each night's newest first.
  const auto starts = db.group_starts(since);
  std::map<std::string, std::vector<const store::GroupStart*>> nights;
  for (const auto& g : starts) {
    in.groups[g.group_id] = {g.started_at, g.matrix, static_cast<size_t>(g.runs)};
    nights[g.started_at.substr(0, 10)].push_back(&g);
  }
  for (auto& [night, groups] : nights) std::reverse(groups.begin(), groups.end());
  // The series a night may hold: `only`, else each with a completed run in the days.
  std::vector<store::Series> series;
  if (only) {
    series.push_back(*only);
  } else {
    for (const auto& s : db.series()) {
      store::RunFilter f;
      f.case_name = s.case_name;
      f.variant = s.variant;
      f.hardware_fingerprint = s.hardware_fingerprint;
      f.status = RunStatus::completed;
      f.started_since = since;
      if (db.has_runs(f)) series.push_back(s);
    }
  }
  // Per night and series, the completed runs of the newest group that has
  // some: rounds of one statement, each asking every night still missing a
  // series for its next groups, twice as many each round (one round, where a
  // night's newest group ran the whole matrix; a few, however many groups a
  // night has, for a series that did not run that night).
  std::vector<store::RunRecord> chosen;
  std::map<std::string, std::set<SeriesKey>> missing;
  std::map<std::string, size_t> next;
  for (const auto& [night, groups] : nights)
    for (const auto& s : series) missing[night].insert({s.case_name, s.variant, s.hardware_fingerprint});
  for (size_t per_night = 1;; per_night *= 2) {
    std::vector<std::string> asked;
    std::map<std::string, std::string> night_of;
    for (auto& [night, wanted] : missing) {
      const auto& groups = nights.at(night);
      for (size_t k = 0; k < per_night && !wanted.empty() && next[night] < groups.size(); ++k) {
        const std::string& g = groups[next[night]++]->group_id;
        asked.push_back(g);
        night_of[g] = night;
      }
    }
    if (asked.empty()) break;
    std::map<std::pair<std::string, SeriesKey>, std::vector<store::RunRecord>> found;
    for (auto& r : db.completed_runs_of_groups(asked, only)) found[{r.group_id, series_of(r)}].push_back(std::move(r));
    // The groups of a night newest first: the first that has a series takes it.
    std::map<std::string, size_t> rank;
    for (size_t i = 0; i < asked.size(); ++i) rank[asked[i]] = i;
    std::vector<std::pair<std::string, SeriesKey>> order;
    for (const auto& [key, runs] : found) order.push_back(key);
    std::sort(order.begin(), order.end(), [&](const auto& x, const auto& y) { return rank[x.first] < rank[y.first]; });
    for (const auto& key : order)
      if (missing[night_of.at(key.first)].erase(key.second))
        for (auto& r : found[key]) chosen.push_back(std::move(r));
    if (per_night == 1) {
      // A series its night's newest group did not complete is looked for in
      // that night's other groups only when it completed a run that night (or
      // the day after, when a late group's runs may start): a series that
      // did not run would make every group of the night be read.
      for (auto& [night, wanted] : missing)
        for (auto it = wanted.begin(); it != wanted.end();) {
          store::RunFilter f;
          f.case_name = std::get<0>(*it);
          f.variant = std::get<1>(*it);
          f.hardware_fingerprint = std::get<2>(*it);
          f.status = RunStatus::completed;
          f.started_since = night;
          f.started_before = day_after(day_after(night));
          it = db.has_runs(f) ? std::next(it) : wanted.erase(it);
        }
    }
  }
  // Each case and implementation's newest run (whatever its status): what the
  // missing-data finding says a stopped series does now.
  std::set<std::pair<std::string, std::string>> keys;
  for (const auto& s : series) keys.emplace(s.case_name, s.variant);
  std::set<std::string> have;
  for (const auto& r : chosen) have.insert(r.run_id);
  for (const auto& [c, v] : keys) {
    store::RunFilter f;
    f.case_name = c;
    f.variant = v;
    f.started_since = since;
    f.limit = 1;
    for (auto& r : db.runs(f))
      if (have.insert(r.run_id).second) chosen.push_back(std::move(r));
  }
  std::sort(chosen.begin(), chosen.end(), [](const auto& x, const auto& y) { return newer(x, y); });
  in.runs = views_of(db, std::move(chosen), LoadOptions{/*steps=*/false});  // oldest first
  return in;
}

IndexRuns load_index_runs(const store::Store& db, const IndexWindow& window) {
  IndexRuns out;
  out.stored = db.count_runs();
  std::vector<store::RunRecord> shown;
  for (const store::Series& s : db.series()) {
    store::RunFilter f;
    f.case_name = s.case_name;
    f.variant = s.variant;
    f.hardware_fingerprint = s.hardware_fingerprint;
    f.limit = static_cast<int64_t>(window.points);
    f.offset = static_cast<int64_t>(window.page * window.points);
    for (auto& r : db.runs(f)) shown.push_back(std::move(r));
  }
  out.runs = views_of(db, std::move(shown), LoadOptions{/*steps=*/false});
  oldest_first(out.runs);
  return out;
}

RunList load_run_list(const store::Store& db, store::RunFilter filter,
                      std::vector<std::pair<std::string, std::string>> shown, size_t limit, size_t page) {
  RunList out;
  out.filter = std::move(shown);
  out.limit = limit;
  out.page = page;
  filter.limit = static_cast<int64_t>(limit + 1);  // one more: whether a next page exists
  filter.offset = static_cast<int64_t>(page * limit);
  auto records = db.runs(filter);
  out.more = records.size() > limit;
  if (out.more) records.pop_back();
  // Profiled runs too: a list shows every stored run (views_of keeps them apart).
  std::vector<std::string> ids;
  for (const auto& r : records) ids.push_back(r.run_id);
  auto metrics = db.metrics_of(ids);
  for (auto& r : records) {
    RunView v;
    if (const auto it = metrics.find(r.run_id); it != metrics.end()) v.metrics = std::move(it->second);
    v.run = std::move(r);
    out.runs.push_back(std::move(v));
  }
  return out;
}

std::string resolve_group(const store::Store& db, const std::string& group) {
  if (!group.empty()) {
    store::RunFilter f;
    f.group_id = group;
    if (!db.has_runs(f)) throw std::invalid_argument(fmt::format("{}: no runs in group '{}'", db.path(), group));
    return group;
  }
  store::RunFilter f;
  f.limit = 1;
  const auto newest = db.runs(f);
  if (newest.empty()) throw std::invalid_argument(fmt::format("{}: the store holds no runs", db.path()));
  return newest.front().group_id;
}

std::string groups_with_variant(const store::Store& db, const std::string& variant, size_t limit) {
  const auto groups = db.groups_with_variant(variant);  // newest first
  std::string out;
  for (size_t i = 0; i < groups.size() && i < limit; ++i) {
    const auto& g = groups[i];
    out += fmt::format("{}{} (started {}, {} run{} of {})", out.empty() ? "" : ", ", g.group_id,
                       g.first_started_at.substr(0, 16), g.runs, g.runs == 1 ? "" : "s", variant);
  }
  if (groups.size() > limit) out += fmt::format(" and {} older", groups.size() - limit);
  return out.empty() ? "none" : out;
}

bool matches_ref(const store::RunRecord& run, const std::string& ref) {
  if (ref.empty()) return false;
  if (run.git_branch == ref) return true;
  return ref.size() >= 4 && run.git_commit.rfind(ref, 0) == 0;
}

std::vector<std::string> refs_of(const std::vector<store::RunRecord>& records, size_t limit) {
  std::vector<std::string> refs;  // newest first
  for (const auto& r : records) {
    for (const std::string& ref : {r.git_branch, r.git_commit.substr(0, 9)})
      if (!ref.empty() && refs.size() < limit && std::find(refs.begin(), refs.end(), ref) == refs.end())
        refs.push_back(ref);
    if (refs.size() == limit) break;
  }
  std::reverse(refs.begin(), refs.end());
  return refs;
}

std::string resolve_ref(const RunLookup& runs, const std::string& ref, const std::string& what, const Hidden& hidden) {
  if (runs.has_ref(ref, /*made_here=*/false, hidden)) return ref;
  if (const auto commit = git_commit_of(ref); commit && runs.has_ref(*commit, false, hidden)) return *commit;
  std::string list;
  for (const auto& r : runs.recent_refs(20)) list += (list.empty() ? "" : ", ") + r;
  throw std::invalid_argument(fmt::format("no runs of {} ref '{}' in the store (not a branch label or commit prefix of "
                                          "any run{}); the store holds: {}",
                                          what, ref, git_commit_of(ref) ? ", nor the commit git resolves it to" : "",
                                          list.empty() ? "no runs" : list));
}

// ---- a branch comparison's questions, asked of a store ------------------------

bool Hidden::hides(const store::RunRecord& run) const {
  if (test_hooks && !compare::test_hooks(run).empty()) return true;
  return !refs.empty() && imported(run) &&
         std::any_of(refs.begin(), refs.end(), [&](const std::string& ref) { return matches_ref(run, ref); });
}

namespace {

// The filters for the runs of a ref as matches_ref reads it: its branch label,
// and (at least 4 characters) the commits it starts. Two statements, not one
// with OR: each stops at its LIMIT on its own index (PostgreSQL would read
// every run of the branch into a bitmap first).
std::vector<store::RunFilter> ref_filters(const std::string& ref) {
  std::vector<store::RunFilter> out(1);
  out[0].git_branch = ref;
  if (ref.size() >= 4) out.emplace_back().commit_prefix = ref;
  return out;
}

}  // namespace

bool StoreRuns::has_ref(const std::string& ref, bool made_here, const Hidden& hidden) const {
  for (store::RunFilter f : ref_filters(ref)) {
    f.imported = false;  // runs twinbench made are never hidden
    if (store_.has_runs(f)) return true;
  }
  if (made_here) return false;
  const auto imported = imported_of_ref(ref);
  return std::any_of(imported.begin(), imported.end(), [&](const store::RunRecord& r) { return !hidden.hides(r); });
}

std::vector<store::RunRecord> StoreRuns::imported_of_ref(const std::string& ref) const {
  std::vector<store::RunRecord> out;
  std::set<std::string> seen;
  for (store::RunFilter f : ref_filters(ref)) {
    f.imported = true;
    for (auto& r : store_.runs(f))
      if (seen.insert(r.run_id).second) out.push_back(std::move(r));
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return newer(x, y); });
  return out;
}

std::vector<RunView> StoreRuns::latest_of_ref(const std::string& ref, const Hidden& hidden) const {
  // The newest visible run per series: on the branch, a few runs per series
  // from the branch index (more only while hidden runs come first); at a
  // commit prefix, that commit's runs.
  std::map<SeriesKey, store::RunRecord> newest;
  const auto consider = [&](const store::RunRecord& r) {
    auto [it, added] = newest.try_emplace(series_of(r), r);
    if (!added && newer(r, it->second)) it->second = r;
  };
  constexpr int64_t kPage = 8;
  for (const store::Series& s : store_.series(ref)) {
    store::RunFilter f;
    f.git_branch = ref;
    f.case_name = s.case_name;
    f.variant = s.variant;
    f.hardware_fingerprint = s.hardware_fingerprint;
    f.limit = kPage;
    for (bool found = false; !found; f.offset += kPage) {
      const auto page = store_.runs(f);
      for (const auto& r : page)
        if (!hidden.hides(r)) {
          consider(r);
          found = true;
          break;
        }
      if (static_cast<int64_t>(page.size()) < kPage) break;
    }
  }
  if (ref.size() >= 4) {
    store::RunFilter f;
    f.commit_prefix = ref;
    for (const auto& r : store_.runs(f))
      if (!hidden.hides(r)) consider(r);
  }
  // Those groups' runs of the ref, series by series.
  std::set<std::string> groups;
  for (const auto& [key, r] : newest) groups.insert(r.group_id);
  std::vector<store::RunRecord> chosen;
  for (const auto& g : groups) {
    store::RunFilter f;
    f.group_id = g;
    for (auto& r : store_.runs(f)) {
      const auto it = newest.find(series_of(r));
      if (it != newest.end() && it->second.group_id == g && matches_ref(r, ref) && !hidden.hides(r))
        chosen.push_back(std::move(r));
    }
  }
  auto out = views_of(store_, std::move(chosen), LoadOptions{/*steps=*/false});
  oldest_first(out);
  return out;
}

namespace {

// The stored commit labels that name `commit` (same_commit): itself and its
// prefixes of at least 7 characters.
std::vector<std::string> labels_of_commit(const std::string& commit) {
  std::vector<std::string> out;
  if (commit.empty()) return out;
  out.push_back(commit);
  for (size_t n = 7; n < commit.size(); ++n) out.push_back(commit.substr(0, n));
  return out;
}

}  // namespace

std::vector<RunView> StoreRuns::at_commit(const std::string& commit, const Hidden& hidden) const {
  store::RunFilter f;
  f.commits = labels_of_commit(commit);
  if (f.commits.empty()) return {};
  std::vector<store::RunRecord> found;
  for (auto& r : store_.runs(f))
    if (!hidden.hides(r)) found.push_back(std::move(r));
  auto out = views_of(store_, std::move(found), LoadOptions{/*steps=*/false});
  oldest_first(out);
  return out;
}

bool StoreRuns::has_commit(const std::string& commit, const Hidden& hidden) const {
  store::RunFilter f;
  f.commits = labels_of_commit(commit);
  if (f.commits.empty()) return false;
  const auto runs = store_.runs(f);
  return std::any_of(runs.begin(), runs.end(), [&](const store::RunRecord& r) { return !hidden.hides(r); });
}

std::vector<std::string> StoreRuns::recent_refs(size_t limit) const {
  store::RunFilter f;
  f.limit = 1000;  // the newest runs hold the refs worth naming
  return refs_of(store_.runs(f), limit);
}

// ---- the pair report's runs -----------------------------------------------------

namespace {

RunSelection pair_runs(const store::Store& db, const std::string& group, const std::string& a, const std::string& b) {
  RunSelection out;
  out.group_id = resolve_group(db, group);
  store::RunFilter in_group;
  in_group.group_id = out.group_id;
  auto rows = db.runs(in_group);
  const auto has = [&](const std::string& variant) {
    return std::any_of(rows.begin(), rows.end(), [&](const store::RunRecord& r) { return r.variant == variant; });
  };
  if (!group.empty() || (has(a) && has(b))) {
    out.runs = views_of(db, std::move(rows), LoadOptions{});
    return out;
  }

  // The newest group per (case, variant) of A and B, one indexed look-up each
  // (runs_by_case), so that only the chosen groups' runs and steps are read.
  std::map<std::pair<std::string, std::string>, store::RunRecord> newest;
  for (const store::Series& s : db.series()) {
    if (s.variant != a && s.variant != b) continue;
    const std::pair<std::string, std::string> key{s.case_name, s.variant};
    if (newest.count(key)) continue;
    store::RunFilter f;
    f.case_name = s.case_name;
    f.variant = s.variant;
    f.limit = 1;
    for (auto& r : db.runs(f)) newest.emplace(key, std::move(r));
  }
  if (newest.empty()) {  // neither anywhere: the newest group shows them missing
    out.runs = views_of(db, std::move(rows), LoadOptions{});
    return out;
  }
  // The groups in the order a newest-first listing meets them.
  std::vector<const store::RunRecord*> firsts;
  for (const auto& [key, r] : newest) firsts.push_back(&r);
  std::sort(firsts.begin(), firsts.end(), [](const auto* x, const auto* y) { return newer(*x, *y); });
  std::vector<std::string> groups;
  for (const auto* r : firsts)
    if (std::find(groups.begin(), groups.end(), r->group_id) == groups.end()) groups.push_back(r->group_id);
  for (const auto& g : groups) {
    store::RunFilter f;
    f.group_id = g;
    std::vector<store::RunRecord> kept;
    for (auto& r : db.runs(f)) {
      const auto it = newest.find({r.case_name, r.variant});
      if (it != newest.end() && it->second.group_id == g) kept.push_back(std::move(r));
    }
    for (auto& v : views_of(db, std::move(kept), LoadOptions{})) out.runs.push_back(std::move(v));
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

bool has_variant(const std::vector<RunView>& runs, const std::string& variant) {
  return std::any_of(runs.begin(), runs.end(), [&](const RunView& v) { return v.run.variant == variant; });
}

}  // namespace

RunSelection select_pair_runs(const store::Store& db, const std::string& group, const std::string& a,
                              const std::string& b) {
  RunSelection out = pair_runs(db, group, a, b);
  if (!has_variant(out.runs, a) && !has_variant(out.runs, b))
    throw std::invalid_argument(fmt::format(
        "{}no run of '{}' or '{}' to pair; groups with runs of '{}': {}; of '{}': {}; pass --group ID, or --a/--b",
        group.empty() ? "" : "group " + group + ": ", a, b, a, groups_with_variant(db, a), b,
        groups_with_variant(db, b)));
  return out;
}

RunSelection select_nway_runs(const store::Store& db, const std::string& group, const std::string& reference) {
  RunSelection out;
  store::RunFilter filter;
  filter.group_id = out.group_id = resolve_group(db, group);
  out.runs = load_runs(db, filter);
  if (!has_variant(out.runs, reference)) {
    std::set<std::string> here;
    for (const auto& v : out.runs) here.insert(v.run.variant);
    throw std::invalid_argument(fmt::format(
        "--reference: no run of '{}' in group {} (it holds {}); groups with runs of '{}': {}; pass --group ID, or "
        "another --reference",
        reference, out.group_id, fmt::join(here, ", "), reference, groups_with_variant(db, reference)));
  }
  return out;
}

BranchAnalysis analyze_stored_branch(const store::Store& db, const BranchQuery& q, const CompareOptions& options,
                                     std::string& how) {
  auto sides = select_branch_sides(StoreRuns(db), q.baseline, q.candidate, q.at, q.with_imported);
  how = sides.how;
  std::vector<RunView> both = sides.baseline;
  both.insert(both.end(), sides.candidate.begin(), sides.candidate.end());
  auto profiles = load_profile_runs(db, both);  // the why of decisive verdicts
  return analyze_branch(std::move(sides), q.baseline, q.candidate, q.variants, options, std::move(profiles));
}

}  // namespace twinbench::compare
