// The pages of `twinbench serve` (see pages.h).
#include "harness/cli/serve/pages.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <ostream>
#include <set>
#include <streambuf>

#include "harness/cli/ab/error.h"
#include "harness/cli/bisect/bisect.h"
#include "harness/compare/index_analysis.h"
#include "harness/compare/nway_analysis.h"
#include "harness/compare/pair_analysis.h"
#include "harness/compare/run_analysis.h"
#include "harness/compare/runs.h"
#include "harness/compare/session_analysis.h"
#include "harness/metrics/catalogue.h"
#include "harness/compare/alert_list.h"
#include "reports/alerts_report.h"
#include "reports/bisect_report.h"
#include "reports/html.h"
#include "reports/branch_report.h"
#include "reports/index_page.h"
#include "reports/nightly_report.h"
#include "reports/nway_report.h"
#include "reports/pair_report.h"
#include "reports/run_list_report.h"
#include "reports/run_report.h"
#include "reports/session_report.h"

namespace twinbench::serve {

namespace {

// The index's share of the store: its newest runs for groups and branches.
constexpr int64_t kIndexNewestRuns = 500;
constexpr size_t kIndexGroups = 12, kIndexBranches = 8;
constexpr int64_t kIndexAlerts = 10;

// A report's pages and JSON, as the cache keeps them.
Computed computed(const reports::Report& report) {
  Computed c;
  for (auto& page : report.pages()) {
    if (c.first.empty()) c.first = page.file;
    c.pages.emplace(std::move(page.file), std::move(page.html));
  }
  c.json = report.json();
  return c;
}

// The false-alarm rate every comparing page takes (`alpha`, as `report --alpha`).
compare::CompareOptions compare_options(const Params& p) {
  compare::CompareOptions o;
  o.family.confidence = 1 - p.number("alpha", 0.05, 1e-6, 0.5);
  return o;
}

// A git ref from a URL: never an option to git, never empty.
std::string ref(const Params& p, const std::string& name) {
  const std::string r = p.text(name);
  if (r.empty()) throw BadRequest(fmt::format("parameter '{}' is required", name));
  if (r.front() == '-') throw BadRequest(fmt::format("parameter '{}': a ref does not start with '-'", name));
  return r;
}

std::vector<std::string> commas(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= s.size()) {
    const size_t end = std::min(s.find(',', at), s.size());
    if (end > at) out.push_back(s.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

compare::NightlyOptions nightly_options(const Params& p, int default_days) {
  compare::NightlyOptions o;
  o.days = static_cast<int>(p.integer("days", default_days, 1, 3660));
  o.min_nights = static_cast<size_t>(p.integer("min_nights", 4, 2, 100));
  o.alpha = p.number("alpha", 0.05, 1e-6, 0.5);
  return o;
}

std::string key_of(const std::string& kind, const std::string& id, const Params& p) {
  return kind + "\n" + id + "\n" + p.canonical();
}

// A stream that keeps nothing (a replayed bisect's progress lines).
struct Discard : std::streambuf {
  int overflow(int c) override { return c; }
};

}  // namespace

PageSpec index_page(const Query& query) {
  const Params p(query, {});
  return {key_of("index", "", p), [](store::Store& db) {
            const auto shown = compare::load_index_runs(db);
            store::RunFilter newest;
            newest.limit = kIndexNewestRuns;
            auto site = compare::site_index(db.runs(newest), kIndexGroups, kIndexBranches);
            // The newest group that ran both implementations: its pair verdicts, its pages linked.
            std::optional<compare::PairDigest> digest;
            for (const auto& g : site.groups) {
              const auto has = [&](const char* v) { return std::find(g.variants.begin(), g.variants.end(), v) != g.variants.end(); };
              if (!has("functional") || !has("module")) continue;
              auto selection = compare::select_pair_runs(db, g.group_id, "functional", "module");
              digest = compare::digest_of(compare::analyze_pair(std::move(selection.runs), g.group_id, "functional",
                                                                "module", compare::CompareOptions{}));
              break;
            }
            auto analysis = compare::analyze_index(shown.runs, static_cast<size_t>(shown.stored), digest);
            analysis.site = std::move(site);
            compare::NightlyOptions nightly;
            analysis.site->nightly = compare::analyze_nightly(compare::load_nightly_runs(db, nightly.days), nightly);
            store::AlertFilter open;
            open.active_only = true;
            open.limit = kIndexAlerts;
            analysis.site->alerts = db.alerts(open);
            Computed c;
            c.first = "index.html";
            c.pages.emplace("index.html", reports::index_html(analysis, {}));
            c.json = reports::index_json(analysis);
            return c;
          }};
}

PageSpec nightly_page(const Query& query) {
  const Params p(query, {"days", "min_nights", "alpha"});
  const auto o = nightly_options(p, 30);
  return {key_of("nightly", "", p), [o](store::Store& db) {
            const auto analysis = compare::analyze_nightly(compare::load_nightly_runs(db, o.days), o);
            return computed(reports::NightlyReport(analysis));
          }};
}

PageSpec series_page(const Query& query) {
  const Params p(query, {"case", "variant", "hardware", "metric", "days", "min_nights", "alpha"});
  auto o = nightly_options(p, 365);
  store::Series only{p.text("case"), p.text("variant"), p.text("hardware")};
  if (only.case_name.empty() || only.variant.empty())
    throw BadRequest("a series needs its 'case' and 'variant' (and 'hardware' where it ran on several machines)");
  o.metric = p.text("metric", "step_time_median_s");
  const metrics::Metric* m = metrics::find(o.metric);
  if (!m || !m->shown(metrics::kTrend)) {
    std::string names;
    for (const auto& t : metrics::shown_in(metrics::kTrend)) names += (names.empty() ? "" : ", ") + t.name;
    throw BadRequest(fmt::format("parameter 'metric': a trend metric ({})", names));
  }
  return {key_of("series", "", p), [o, only](store::Store& db) mutable {
            if (only.hardware_fingerprint.empty()) {  // the series' one machine, when it has one
              std::set<std::string> machines;
              for (const auto& s : db.series())
                if (s.case_name == only.case_name && s.variant == only.variant) machines.insert(s.hardware_fingerprint);
              if (machines.size() > 1)
                throw NotFound(fmt::format("{} / {} ran on {} machines: name one with 'hardware'", only.case_name,
                                           only.variant, machines.size()));
              if (!machines.empty()) only.hardware_fingerprint = *machines.begin();
            }
            o.only = only;
            const auto analysis = compare::analyze_nightly(compare::load_nightly_runs(db, o.days, "", only), o);
            store::AlertFilter f;  // the series' alerts, every state: its history of findings
            f.case_name = only.case_name;
            f.variant = only.variant;
            f.limit = 200;
            std::vector<store::Alert> alerts;
            for (auto& a : db.alerts(f))
              if (a.hardware_fingerprint.empty() || a.hardware_fingerprint == only.hardware_fingerprint)
                alerts.push_back(std::move(a));
            return computed(reports::SeriesReport(
                analysis, html::section("alerts", fmt::format("Alerts: {}", alerts.size()),
                                        reports::alerts_table_html(alerts))));
          }};
}

PageSpec pair_page(const std::string& group, const Query& query) {
  const Params p(query, {"a", "b", "alpha"});
  const std::string a = p.text("a", "functional"), b = p.text("b", "module");
  const auto options = compare_options(p);
  return {key_of("pair", group, p), [group, a, b, options](store::Store& db) {
            auto selection = compare::select_pair_runs(db, group, a, b);
            const auto has = [&](const std::string& v) {
              return std::any_of(selection.runs.begin(), selection.runs.end(),
                                 [&](const compare::RunView& r) { return r.run.variant == v; });
            };
            if (!has(a) && !has(b)) throw NotFound(fmt::format("group {} has no run of '{}' or '{}'", group, a, b));
            auto profiles = compare::load_profile_runs(db, selection.runs);
            const auto analysis =
                compare::analyze_pair(std::move(selection.runs), selection.group_id, a, b, options, std::move(profiles));
            return computed(reports::PairReport(analysis));
          }};
}

PageSpec nway_page(const std::string& group, const Query& query) {
  const Params p(query, {"reference", "variants", "alpha"});
  const std::string reference = p.text("reference", "functional");
  const auto variants = commas(p.text("variants"));
  const auto options = compare_options(p);
  return {key_of("nway", group, p), [group, reference, variants, options](store::Store& db) {
            store::RunFilter filter;
            filter.group_id = group;
            auto runs = compare::load_runs(db, filter);
            if (runs.empty()) throw NotFound(fmt::format("no runs in group '{}'", group));
            const auto analysis = compare::analyze_nway(std::move(runs), group, reference, variants, options);
            return computed(reports::NwayReport(analysis));
          }};
}

PageSpec session_page(const std::string& group, const Query& query) {
  const Params p(query, {"a", "b", "alpha"});
  const std::string a = p.text("a"), b = p.text("b");
  const double confidence = 1 - p.number("alpha", 0.05, 1e-6, 0.5);
  return {key_of("session", group, p), [group, a, b, confidence](store::Store& db) {
            store::RunFilter filter;
            filter.group_id = group;
            auto runs = compare::load_runs(db, filter);
            if (runs.empty()) throw NotFound(fmt::format("no runs in group '{}'", group));
            std::string label_a = a, label_b = b;
            if (label_a.empty() || label_b.empty()) {
              const auto labels = compare::session_labels(runs);
              if (labels.size() != 2)
                throw NotFound(fmt::format("group {} is not an ab session: its runs carry {} branch labels (name the "
                                           "sides with 'a' and 'b')",
                                           group, labels.size()));
              label_a = labels[0];
              label_b = labels[1];
            }
            auto profiles = compare::load_profile_runs(db, runs);
            const auto analysis =
                compare::analyze_stored_session(std::move(runs), label_a, label_b, confidence, std::move(profiles));
            return computed(reports::SessionReport(analysis, group));
          }};
}

PageSpec branch_page(const Query& query, const PageContext&) {
  const Params p(query, {"baseline", "candidate", "at", "variant", "with_imported", "alpha"});
  compare::BranchQuery q;
  q.baseline = ref(p, "baseline");
  q.candidate = ref(p, "candidate");
  q.at = p.one_of("at", "merge-base", {"merge-base", "tip"}) == "tip" ? compare::BaselineAt::kTip
                                                                      : compare::BaselineAt::kMergeBase;
  q.with_imported = p.one_of("with_imported", "0", {"0", "1"}) == "1";
  q.variants = commas(p.text("variant"));
  const auto options = compare_options(p);
  return {key_of("branch", "", p), [q, options](store::Store& db) {
            std::string how;
            const auto analysis = compare::analyze_stored_branch(db, q, options, how);
            return computed(reports::BranchReport(analysis));
          }};
}

PageSpec bisect_page(const Query& query, const PageContext& context) {
  const Params p(query, {"good", "bad", "case", "variant", "metric", "find", "alpha"});
  bisect::BisectOptions o;
  o.good = ref(p, "good");
  o.bad = ref(p, "bad");
  o.case_name = p.text("case");
  // A case by name only: the server reads no file a URL names.
  if (o.case_name.empty() || o.case_name.find_first_of("/\\") != std::string::npos || o.case_name.front() == '.')
    throw BadRequest("parameter 'case': the name of a case (as `twinbench list` shows it), no path");
  o.variant = p.text("variant", "functional");
  o.metric = p.text("metric", "step_time_median_s");
  o.find = p.one_of("find", "regression", {"regression", "improvement"}) == "improvement"
               ? compare::BisectFind::kImprovement
               : compare::BisectFind::kRegression;
  o.alpha = p.number("alpha", 0.05, 1e-6, 0.5);
  o.repo = context.repo;
  o.db = context.store_location;
  o.replay = true;
  return {key_of("bisect", "", p), [o](store::Store&) {
            Discard discard;
            std::ostream log(&discard);
            compare::BisectResult r;
            try {
              r = bisect::run_bisect(o, log);
            } catch (const ab::AbError& e) {  // a ref or a repository that is not there
              throw NotFound(e.what());
            }
            return computed(reports::BisectReport(r));
          }};
}

PageSpec run_page(const std::string& run_id, const Query& query) {
  const Params p(query, {});
  return {key_of("run", run_id, p), [run_id](store::Store& db) {
            const auto record = db.run(run_id);
            if (!record) throw NotFound(fmt::format("no run '{}' in the store", run_id));
            store::RunFilter group;
            group.group_id = record->group_id;
            group.limit = 500;
            auto group_runs = db.runs(group);
            std::reverse(group_runs.begin(), group_runs.end());  // oldest first
            compare::RunView view;
            view.run = *record;
            view.metrics = db.metrics(run_id);
            view.steps = db.steps(run_id);
            compare::LoadOptions load;
            load.profiles = true;
            const auto profiles = compare::load_runs(db, group, load);
            const auto analysis = compare::analyze_run(std::move(view), group_runs, profiles);
            return computed(reports::RunReport(analysis));
          }};
}

PageSpec runs_page(const Query& query) {
  const Params p(query, {"group", "case", "variant", "hardware", "branch", "commit", "status", "limit", "page"});
  store::RunFilter f;
  std::vector<std::pair<std::string, std::string>> shown;
  const auto take = [&](const char* name, std::optional<std::string>& field) {
    if (const auto v = p.optional(name); v && !v->empty()) {
      field = *v;
      shown.emplace_back(name, *v);
    }
  };
  take("group", f.group_id);
  take("case", f.case_name);
  take("variant", f.variant);
  take("hardware", f.hardware_fingerprint);
  take("branch", f.git_branch);
  if (const auto c = p.optional("commit"); c && !c->empty()) {
    f.commit_prefix = *c;
    shown.emplace_back("commit", *c);
  }
  if (const auto s = p.optional("status"); s && !s->empty()) {
    try {
      f.status = status_from_string(*s);
    } catch (const std::invalid_argument&) {
      throw BadRequest(fmt::format("parameter 'status': not a run status: {}", s->substr(0, 40)));
    }
    shown.emplace_back("status", *s);
  }
  const auto limit = static_cast<size_t>(p.integer("limit", 50, 1, 500));
  const auto page = static_cast<size_t>(p.integer("page", 0, 0, 100000));
  return {key_of("runs", "", p), [f, shown, limit, page](store::Store& db) {
            const auto list = compare::load_run_list(db, f, shown, limit, page);
            return computed(reports::RunListReport(list));
          }};
}

PageSpec alerts_page(const Query& query) {
  const Params p(query, {"state", "case", "metric", "since", "limit"});
  store::AlertFilter f;
  compare::AlertList shown;
  if (const auto s = p.optional("state"); s && !s->empty()) {
    try {
      f.state = store::alert_state_from_string(*s);
    } catch (const std::invalid_argument& e) {
      throw BadRequest(fmt::format("parameter 'state': {}", e.what()));
    }
    shown.filter.emplace_back("state", *s);
  }
  if (const auto c = p.optional("case"); c && !c->empty()) {
    f.case_name = *c;
    shown.filter.emplace_back("case", *c);
  }
  if (const auto m = p.optional("metric"); m && !m->empty()) {
    f.metric = *m;
    shown.filter.emplace_back("metric", *m);
  }
  if (const auto since = p.optional("since"); since && !since->empty()) {
    const auto& d = *since;  // a date or an ISO-8601 time: compared as text, as the store keeps it
    if (d.size() < 10 || d[4] != '-' || d[7] != '-' || !std::all_of(d.begin(), d.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == ':' || c == 'T' || c == '.' || c == 'Z';
        }))
      throw BadRequest("parameter 'since': expected a date YYYY-MM-DD or an ISO-8601 UTC time");
    f.since = d;
    shown.filter.emplace_back("since", d);
  }
  shown.limit = static_cast<size_t>(p.integer("limit", 200, 1, 2000));
  f.limit = static_cast<int64_t>(shown.limit);
  return {key_of("alerts", "", p), [f, shown](store::Store& db) mutable {
            shown.alerts = db.alerts(f);
            return computed(reports::AlertListReport(shown));
          }};
}

PageSpec alert_page(int64_t id, const Query& query, bool writable, bool writes_enabled, const std::string& csrf) {
  const Params p(query, {});
  reports::AlertForm form{writable, writes_enabled, csrf};
  return {key_of("alert", std::to_string(id), p) + "\n" + (writable ? csrf : "-") + (writes_enabled ? "w" : "r"),
          [id, form](store::Store& db) {
            const auto alert = db.alert(id);
            if (!alert) throw NotFound(fmt::format("no alert #{} in the store", id));
            compare::AlertPage page{*alert, db.alert_events(id)};
            return computed(reports::AlertReport(page, form));
          }};
}

}  // namespace twinbench::serve
