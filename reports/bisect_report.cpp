// The bisect report (see bisect_report.h).
#include "reports/bisect_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>

#include "harness/metrics/catalogue.h"
#include "reports/hook_marks.h"
#include "reports/html.h"
#include "reports/why_section.h"
#include "reports/svg.h"

namespace twinbench::reports {

namespace {

using compare::BisectOutcome;
using compare::BisectResult;
using compare::Probe;
using compare::ProbeClass;

std::string short_sha(const std::string& sha) { return sha.substr(0, 9); }

std::string metric_label(const BisectResult& r) {
  const metrics::Metric* m = metrics::find(r.metric);
  return m ? m->label : r.metric;
}

// "confirm" for the first session, "probe k" for the k-th commit probed after it.
std::string role(const BisectResult& r, size_t k) {
  if (r.probes[k].confirm) return "confirm";
  size_t n = 0;
  for (size_t i = 0; i <= k; ++i) n += !r.probes[i].confirm && !r.probes[i].against_bad;
  return fmt::format("probe {}", n);
}

// A commit subject in a table: its first 72 characters (a whole one in the
// JSON, and in the HTML tooltip).
constexpr size_t kSubjectWidth = 72;
std::string subject_cell(const std::string& subject) {
  if (subject.size() <= kSubjectWidth) return subject;
  size_t cut = kSubjectWidth - 1;
  while (cut > 0 && (static_cast<unsigned char>(subject[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
  return subject.substr(0, cut) + "\u2026";
}

std::string against(const Probe& p) { return p.against_bad ? "bad end" : "good end"; }

std::string change_of(const Probe& p) { return p.change.empty() ? "-" : p.change; }

std::string verdict_of(const Probe& p) {
  return p.cls == ProbeClass::kSkipped ? "skipped" : compare::to_string(p.verdict);
}

std::string class_of(const Probe& p) { return compare::to_string(p.cls) + (p.reused ? " (stored)" : ""); }

// What the history's commit `i` is in this bisection.
std::string status_of(const BisectResult& r, size_t i) {
  if (i == 0) return "good end";
  const Probe* p = r.probe_of(i);
  std::string s = i + 1 == r.history.size() ? "bad end" : p ? compare::to_string(p->cls) : "not probed";
  if (i + 1 == r.history.size() && p && !p->confirm) s += ", " + compare::to_string(p->cls);
  return s;
}

bool in_range(const BisectResult& r, size_t i) {
  return r.outcome != BisectOutcome::kNothingToBisect && i > r.last_good && i <= r.first_bad;
}

// The one-paragraph answer.
std::string answer(const BisectResult& r) {
  const auto& bad = r.history[r.first_bad];
  if (r.outcome == BisectOutcome::kNothingToBisect) return "Nothing to bisect: " + r.reason + ".";
  if (r.outcome == BisectOutcome::kRange)
    return fmt::format("Range: the first {} commit is after {} and at or before {} — {}.", compare::sought_word(r.find),
                       short_sha(r.history[r.last_good].sha), short_sha(bad.sha), r.reason);
  const Probe* p = r.probe_of(r.first_bad);
  std::string s = fmt::format("First {} commit: {} \"{}\": {} {} against the {}",
                              compare::sought_word(r.find), short_sha(bad.sha),
                              subject_cell(bad.subject), p ? change_of(*p) : "-", p ? compare::to_string(p->verdict) : "",
                              p ? against(*p) : "good end");
  const Probe* parent = r.last_good == 0 ? nullptr : r.probe_of(r.last_good);
  if (r.last_good == 0)
    s += fmt::format("; its parent is the good end {}", short_sha(r.history[0].sha));
  else if (parent)
    s += fmt::format("; its parent {}: {} {} against the {}", short_sha(r.history[r.last_good].sha),
                     change_of(*parent), compare::to_string(parent->verdict), against(*parent));
  return s + ".";
}

std::string headline(const BisectResult& r) {
  return fmt::format("{} / {}, {}: first {} among {} commit{} after good {} (bad {})", r.case_name, r.variant,
                     metric_label(r), compare::to_string(r.find), r.history.size() - 1,
                     r.history.size() == 2 ? "" : "s", short_sha(r.history.front().sha),
                     short_sha(r.history.back().sha));
}

nlohmann::ordered_json commit_json(const compare::BisectCommit& c) {
  return {{"commit", c.sha}, {"subject", c.subject}};
}

nlohmann::ordered_json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

std::string bisect_page_name(const BisectResult& r) {
  return fmt::format("bisect-{}-{}.html", short_sha(r.history.front().sha), short_sha(r.history.back().sha));
}

}  // namespace

std::string bisect_text(const BisectResult& r) {
  std::string out = "twinbench bisect: " + headline(r) + "\n\n";
  std::vector<std::array<std::string, 9>> rows = {
      {"session", "commit", "against", "change [CI]", "verdict", "commit is", "rounds", "seconds", "subject"}};
  for (size_t k = 0; k < r.probes.size(); ++k) {
    const Probe& p = r.probes[k];
    rows.push_back({role(r, k), short_sha(r.history[p.index].sha), against(p), change_of(p), verdict_of(p),
                    class_of(p) + hooks_flag(p.test_hooks), std::to_string(p.rounds), p.reused ? "-" : fmt::format("{:.0f}", p.seconds),
                    subject_cell(r.history[p.index].subject)});
  }
  std::array<size_t, 9> width{};
  for (const auto& row : rows)
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  for (const auto& row : rows) {
    std::string line = " ";
    for (size_t i = 0; i < row.size(); ++i) line += i + 1 == row.size() ? row[i] : fmt::format("{:<{}}  ", row[i], width[i]);
    out += line + "\n";
  }
  for (const Probe& p : r.probes)
    if (p.cls == ProbeClass::kSkipped || p.cls == ProbeClass::kInconclusive)
      out += fmt::format("  {} {}: {}\n", short_sha(r.history[p.index].sha), compare::to_string(p.cls), p.explanation);
  for (const Probe& p : r.probes)
    if (!p.test_hooks.empty()) out += fmt::format("  {} {}\n", short_sha(r.history[p.index].sha), hooks_text({{"", p.test_hooks}}));
  out += fmt::format("\nresult: {}\n", answer(r));
  if (r.why) out += "\n" + why_console(*r.why, "");  // the culprit's why (explain_analysis.h)
  return out;
}

std::string BisectReport::markdown() const {
  const BisectResult& r = r_;
  auto cell = [](std::string s) {  // a table cell: no pipe or newline breaks the row
    for (char& c : s)
      if (c == '|' || c == '\n') c = c == '|' ? '/' : ' ';
    return s;
  };
  std::string out = "## twinbench bisect: " + cell(headline(r)) + "\n\n**" + cell(answer(r)) + "**\n\n";
  out += "| Session | Commit | Subject | Against | Change [CI] | Verdict | Commit is | Rounds |\n"
         "|---|---|---|---|---:|---|---|---:|\n";
  for (size_t k = 0; k < r.probes.size(); ++k) {
    const Probe& p = r.probes[k];
    const bool culprit = r.outcome == BisectOutcome::kFound && &p == r.probe_of(r.first_bad);
    out += fmt::format("| {} | `{}` | {} | {} | {} | {} | {}{} | {} |\n", role(r, k),
                       short_sha(r.history[p.index].sha), cell(subject_cell(r.history[p.index].subject)), against(p), change_of(p),
                       verdict_of(p), class_of(p) + hooks_flag(p.test_hooks),
                       culprit ? " — **first " + compare::sought_word(r.find) + "**" : "", p.rounds);
  }
  std::string notes;
  for (const Probe& p : r.probes)
    if (p.cls == ProbeClass::kSkipped || p.cls == ProbeClass::kInconclusive)
      notes += fmt::format("- `{}` {}: {}\n", short_sha(r.history[p.index].sha), compare::to_string(p.cls),
                           cell(p.explanation));
  for (const Probe& p : r.probes)
    if (!p.test_hooks.empty())
      notes += fmt::format("- `{}` {}\n", short_sha(r.history[p.index].sha), cell(hooks_text({{"", p.test_hooks}})));
  if (!notes.empty()) out += "\n" + notes;
  if (r.why) out += why_markdown(*r.why);
  return out;
}

std::string BisectReport::json() const {
  const BisectResult& r = r_;
  nlohmann::ordered_json j;
  j["outcome"] = compare::to_string(r.outcome);
  j["case"] = r.case_name;
  j["variant"] = r.variant;
  j["metric"] = r.metric;
  j["find"] = compare::to_string(r.find);
  j["alpha"] = r.alpha;
  j["db"] = r.db;
  j["seconds"] = r.seconds;
  j["good"] = commit_json(r.history.front());
  j["bad"] = commit_json(r.history.back());
  j["commits"] = r.history.size() - 1;
  j["culprit"] = nullptr;
  if (r.outcome == BisectOutcome::kFound) {
    auto c = commit_json(r.history[r.first_bad]);
    if (const Probe* p = r.probe_of(r.first_bad)) {
      c["change"] = p->change;
      c["verdict"] = compare::to_string(p->verdict);
    }
    j["culprit"] = c;
  }
  nlohmann::ordered_json range = nlohmann::ordered_json::array();
  if (r.outcome != BisectOutcome::kNothingToBisect)
    for (size_t i = r.last_good + 1; i <= r.first_bad; ++i) {
      auto c = commit_json(r.history[i]);
      c["status"] = status_of(r, i);
      range.push_back(c);
    }
  j["last_good"] = commit_json(r.history[r.last_good]);
  j["range"] = range;
  j["reason"] = r.reason;
  size_t run_now = 0;
  nlohmann::ordered_json probes = nlohmann::ordered_json::array();
  for (size_t k = 0; k < r.probes.size(); ++k) {
    const Probe& p = r.probes[k];
    run_now += p.reused ? 0 : 1;
    nlohmann::ordered_json x;
    x["session"] = k;
    x["role"] = p.confirm ? "confirm" : "probe";
    x["against"] = p.against_bad ? "bad" : "good";
    x["commit"] = r.history[p.index].sha;
    x["subject"] = r.history[p.index].subject;
    x["position"] = p.index;
    x["class"] = compare::to_string(p.cls);
    x["verdict"] = verdict_of(p);
    x["change"] = p.change;
    x["ratio"] = p.estimate ? number_or_null(p.estimate->ratio) : nullptr;
    x["ratio_ci_low"] = p.estimate && p.estimate->interval ? number_or_null(p.estimate->interval->low) : nullptr;
    x["ratio_ci_high"] = p.estimate && p.estimate->interval ? number_or_null(p.estimate->interval->high) : nullptr;
    x["threshold"] = p.threshold;
    x["confidence"] = p.confidence;
    x["rounds"] = p.rounds;
    x["group_id"] = p.group_id;
    x["reused"] = p.reused;
    x["seconds"] = p.seconds;
    x["explanation"] = p.explanation;
    x["test_hooks"] = p.test_hooks;  // "" for real runs
    probes.push_back(x);
  }
  j["sessions"] = r.probes.size();
  j["sessions_run"] = run_now;
  j["probes"] = probes;
  if (r.why) j["why"] = why_json(*r.why);
  return j.dump(2);
}

namespace {

std::string bisect_html(const BisectResult& r) {
  std::string body = html::section("answer", compare::to_string(r.outcome), "<p>" + html::escape(answer(r)) + "</p>");
  if (r.why) body += why_html(*r.why);  // the culprit's why, under the answer

  std::vector<std::vector<std::string>> rows;
  for (size_t k = 0; k < r.probes.size(); ++k) {
    const Probe& p = r.probes[k];
    const bool culprit = r.outcome == BisectOutcome::kFound && &p == r.probe_of(r.first_bad);
    rows.push_back({html::escape(role(r, k)), "<code>" + html::escape(short_sha(r.history[p.index].sha)) + "</code>",
                    html::clipped(r.history[p.index].subject), html::escape(against(p)),
                    html::num(html::verdict_text(html::escape(change_of(p)), verdict_of(p))),
                    html::badge(verdict_of(p)),
                    (culprit ? "<strong>first " + compare::sought_word(r.find) + "</strong> · " : std::string()) +
                        html::escape(class_of(p)) + hooks_flag_html(p.test_hooks),
                    html::num(html::escape(std::to_string(p.rounds))), html::escape(p.explanation)});
  }
  body += html::section("probes", "Probes, in the order made",
                        html::table({"Session", "Commit", "Subject", "Against", "Change [CI]", "Verdict",
                                     "Commit is", "Rounds", "Why"},
                                    rows) +
                            html::legend("reference end", "commit"));

  // Each probed commit's change against the good end, by position in the history.
  std::vector<std::pair<size_t, const Probe*>> by_position;
  for (const Probe& p : r.probes)
    if (!p.against_bad && p.estimate && std::isfinite(p.estimate->ratio)) by_position.emplace_back(p.index, &p);
  std::sort(by_position.begin(), by_position.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  if (!by_position.empty()) {
    html::Series mid{"change vs good (%)", {0}, {0}, "", false}, low{"interval low", {}, {}, "", true},
        high{"interval high", {}, {}, "", true};
    for (const auto& [i, p] : by_position) {
      mid.x.push_back(static_cast<double>(i));
      mid.y.push_back(100 * (p->estimate->ratio - 1));
      if (p->estimate->interval) {
        low.x.push_back(static_cast<double>(i));
        low.y.push_back(100 * (p->estimate->interval->low - 1));
        high.x.push_back(static_cast<double>(i));
        high.y.push_back(100 * (p->estimate->interval->high - 1));
      }
    }
    html::ChartOptions o;
    o.title = "Change against the good end by commit position (0 = good end)";
    o.x_label = "commit position";
    o.y_label = metric_label(r) + " change, %";
    body += html::section("chart", "Change by position", html::line_chart({mid, low, high}, o));
  }

  std::vector<std::vector<std::string>> commits;
  for (size_t i = 0; i < r.history.size(); ++i) {
    const bool culprit = r.outcome == BisectOutcome::kFound && i == r.first_bad;
    commits.push_back({html::num(html::escape(std::to_string(i))),
                       "<code>" + html::escape(short_sha(r.history[i].sha)) + "</code>",
                       html::clipped(r.history[i].subject), html::escape(status_of(r, i)),
                       culprit ? "<strong>first " + compare::sought_word(r.find) + "</strong>" : in_range(r, i) ? "in range" : ""});
  }
  body += html::section("history", "Commits (first-parent line, oldest first)",
                        html::table({"Position", "Commit", "Subject", "Probed", "Culprit"}, commits));

  html::Page page;
  page.title = "twinbench bisect · " + short_sha(r.history.front().sha) + ".." + short_sha(r.history.back().sha);
  page.subtitle = headline(r);
  page.nav_html = html::link("index.html", "index");
  page.body_html = body;
  page.footer_text = fmt::format(
      "Each probe: interleaved rounds of the commit against the good end, and against the bad end when that "
      "cannot tell (twinbench ab's sequential engine); false-alarm rate {:g} per session; store {}.",
      r.alpha, r.db);
  return html::render_page(page);
}

}  // namespace

std::vector<HtmlPage> BisectReport::pages() const { return {{bisect_page_name(r_), bisect_html(r_)}}; }

}  // namespace twinbench::reports
