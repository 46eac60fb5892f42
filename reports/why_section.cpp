// The why section of every report (see why_section.h).
#include "reports/why_section.h"

#include <fmt/format.h>

#include <cmath>

#include "reports/html.h"
#include "reports/svg.h"

namespace twinbench::reports {

using compare::Contribution;
using compare::Explanation;
using compare::MemoryEntry;

namespace {

std::string ms(double seconds) { return fmt::format("{:.3g}", 1e3 * seconds); }
std::string signed_ms(double seconds) { return fmt::format("{:+.3g}", 1e3 * seconds); }

std::string interval_ms(const Contribution& c) {
  if (!c.tested) return signed_ms(c.change) + " (not tested)";
  if (!c.low || !c.high) return signed_ms(c.change);
  return fmt::format("{} [{}, {}]", signed_ms(c.change), signed_ms(*c.low), signed_ms(*c.high));
}

std::string share(double s) { return std::isfinite(s) ? fmt::format("{:.0f}%", 100 * s) : "-"; }

std::string phase_text(const std::string& phase) { return phase.empty() ? "-" : phase; }

std::string how_measured(const compare::TimeWhy& t) {
  const std::string runs = t.pairs > 0 ? fmt::format("{} interleaved profiled pair{}", t.pairs, t.pairs == 1 ? "" : "s")
                                       : fmt::format("{} and {} profiled runs (unpaired)", t.runs_a, t.runs_b);
  return fmt::format("{}, apart from the timed runs; {}; intervals at {} each, one family of {} (every op "
                     "of at least {:g}% of the step, every category and phase); shares are of the profiled change",
                     runs, t.device_time ? "device kernel time per launching op (Kineto)" : "host self time per op",
                     stats::format_level(t.confidence), t.tests, 100 * t.min_share_tested);
}

std::string site_text(const MemoryEntry& m) {
  std::string s = m.ops.empty() ? "(outside ops)" : m.ops;
  if (!m.phase.empty()) s += " in " + m.phase;
  if (!m.site_a.empty()) s += " (A: " + m.site_a + ")";
  return s;
}

// The ops shown by name: the top ones, and those on one side only.
std::vector<const Contribution*> shown_ops(const compare::TimeWhy& t) {
  std::vector<const Contribution*> out;
  for (size_t i = 0; i < t.ops.size(); ++i)
    if (i < kWhyTopOps) out.push_back(&t.ops[i]);
  return out;
}

// The ops not listed, as a share of the change: only where shares mean
// something (the analysis leaves them NaN when the step's change holds zero).
double rest_share(const compare::TimeWhy& t, double rest) {
  return std::isfinite(t.remainder.share) && t.step.change != 0 ? rest / t.step.change : NAN;
}

// The ops not shown, summed.
std::optional<double> rest_change(const compare::TimeWhy& t, size_t shown) {
  if (t.ops.size() <= shown) return std::nullopt;
  double sum = 0;
  for (size_t i = shown; i < t.ops.size(); ++i) sum += t.ops[i].change;
  return sum;
}

nlohmann::ordered_json contribution_json(const Contribution& c) {
  nlohmann::ordered_json j;
  if (!c.phase.empty()) j["phase"] = c.phase;
  j["name"] = c.name;
  if (c.where != "both") j["where"] = c.where;
  j["a_s"] = c.a;
  j["b_s"] = c.b;
  j["change_s"] = c.change;
  j["low_s"] = c.low ? nlohmann::ordered_json(*c.low) : nlohmann::ordered_json(nullptr);
  j["high_s"] = c.high ? nlohmann::ordered_json(*c.high) : nlohmann::ordered_json(nullptr);
  j["share"] = std::isfinite(c.share) ? nlohmann::ordered_json(c.share) : nlohmann::ordered_json(nullptr);
  j["tested"] = c.tested;
  j["significant"] = c.significant;
  return j;
}

std::string memory_html(const compare::MemoryWhy& m) {
  std::string out = "<h3>Memory at the peak</h3><p><strong>" + html::escape(m.headline) + "</strong></p>";
  if (m.entries.empty() && m.unexplained == 0) return out;
  out += "<p class=\"muted\">" +
         html::escape(fmt::format("Peak {} on A (reached at {}), {} on B (at {}); allocator bytes of the profiled "
                                  "runs{}. Each block live at the peak is counted by the parameter or gradient that "
                                  "holds it, else at the op that allocated it (outer op > inner op).",
                                  compare::format_bytes(m.peak_a), m.peak_at_a, compare::format_bytes(m.peak_b), m.peak_at_b,
                                  m.timed_diff ? "; the timed runs differ by " + compare::format_bytes(*m.timed_diff, true)
                                               : std::string())) +
         "</p>";
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < m.entries.size() && i < kWhyTopOps; ++i) {
    const auto& e = m.entries[i];
    rows.push_back({html::num(std::to_string(i + 1)), html::escape(site_text(e)),
                    html::escape(e.tensor.empty() ? "-" : e.tensor) +
                        (e.where == "both" ? "" : " <span class=\"muted\">(" + html::escape(e.where) + ")</span>"),
                    html::num(html::escape(compare::format_bytes(e.a))), html::num(html::escape(compare::format_bytes(e.b))),
                    html::num(html::escape(compare::format_bytes(e.diff, true))), html::num(html::escape(share(e.share)))});
  }
  if (m.entries.size() > kWhyTopOps)
    rows.push_back({"", html::escape(fmt::format("{} more entries", m.entries.size() - kWhyTopOps)), "", "", "", "", ""});
  rows.push_back({"", "<em>not attributed</em>", "", "", "", html::num(html::escape(compare::format_bytes(m.unexplained, true))), ""});
  out += html::table({"#", "Allocated at", "Tensor", "A", "B", "B &#8722; A", "Share"}, rows, "why-memory");
  return out;
}

}  // namespace

std::string why_html(const Explanation& e) {
  std::string body = "<p><strong>" + html::escape(e.trigger) + "</strong>";
  if (e.show_time() && e.time && !e.time->headline.empty()) body += ": " + html::escape(e.time->headline);
  body += "</p>";
  if (e.show_time() && e.time) {
    const auto& t = *e.time;
    body += "<p class=\"muted\">" +
            html::escape(fmt::format("Step time of the profiled runs: {} ms on A, {} ms on B, a change of {} ms/step. {}.",
                                     ms(t.step.a), ms(t.step.b), interval_ms(t.step), how_measured(t))) +
            "</p>";
    std::vector<html::Bar> bars;
    const auto ops = shown_ops(t);
    for (const Contribution* c : ops)
      bars.push_back({compare::op_label(c->phase, c->name) + (c->where == "both" ? "" : " (" + c->where + ")"),
                      1e3 * c->change, c->low ? std::optional<double>(1e3 * *c->low) : std::nullopt,
                      c->high ? std::optional<double>(1e3 * *c->high) : std::nullopt, c->significant, share(c->share)});
    if (const auto rest = rest_change(t, ops.size()))
      bars.push_back({fmt::format("{} more ops", t.ops.size() - ops.size()), 1e3 * *rest, std::nullopt, std::nullopt,
                      false, share(rest_share(t, *rest))});
    const auto& r = t.remainder;
    bars.push_back({"outside ops (unexplained)", 1e3 * r.change,
                    r.low ? std::optional<double>(1e3 * *r.low) : std::nullopt,
                    r.high ? std::optional<double>(1e3 * *r.high) : std::nullopt, r.significant, share(r.share)});
    html::ChartOptions o;
    o.title = "Contribution to the change in step time, ranked (ms per step, B − A)";
    o.x_label = "ms per step; whiskers: interval; solid: the interval excludes 0";
    o.width = 760;
    body += html::bar_chart(bars, o);
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < ops.size(); ++i) {
      const Contribution& c = *ops[i];
      rows.push_back({html::num(std::to_string(i + 1)),
                      html::escape(c.name) + (c.where == "both" ? "" : " <span class=\"muted\">(" + html::escape(c.where) + ")</span>"),
                      html::escape(phase_text(c.phase)), html::num(ms(c.a)), html::num(ms(c.b)),
                      html::num(html::escape(interval_ms(c))), html::num(share(c.share)),
                      c.significant ? "yes" : "<span class=\"muted\">no</span>"});
    }
    if (const auto rest = rest_change(t, ops.size()))
      rows.push_back({"", html::escape(fmt::format("{} more ops", t.ops.size() - ops.size())), "", "", "",
                      html::num(signed_ms(*rest)), html::num(share(rest_share(t, *rest))), ""});
    rows.push_back({"", "<em>outside ops (unexplained)</em>", "", html::num(ms(r.a)), html::num(ms(r.b)),
                    html::num(html::escape(interval_ms(r))), html::num(share(r.share)), r.significant ? "yes" : "no"});
    body += html::table({"#", "Op", "Phase", "A ms", "B ms", "B &#8722; A ms [CI]", "Share", "Significant"}, rows,
                        "why-ops");
    std::vector<std::vector<std::string>> cats;
    for (const auto& c : t.categories)
      cats.push_back({html::escape(c.name), html::num(ms(c.a)), html::num(ms(c.b)), html::num(html::escape(interval_ms(c))),
                      html::num(share(c.share))});
    std::vector<std::vector<std::string>> phases;
    for (const auto& c : t.phases)
      phases.push_back({html::escape(c.name), html::num(ms(c.a)), html::num(ms(c.b)),
                        html::num(html::escape(interval_ms(c))), html::num(share(c.share))});
    body += "<details><summary>By category and by phase</summary>" +
            html::table({"Category", "A ms", "B ms", "B &#8722; A ms [CI]", "Share"}, cats, "why-categories") +
            html::table({"Phase (ops' self time)", "A ms", "B ms", "B &#8722; A ms [CI]", "Share"}, phases, "why-phases") +
            "</details>";
  }
  if (e.show_memory() && e.memory) body += memory_html(*e.memory);
  if (!e.note.empty()) body += "<p class=\"muted\">" + html::escape(e.note) + "</p>";
  return html::section("why", "Why", body);
}

std::string why_markdown(const Explanation& e) {
  std::string out = "\n#### Why\n\n" + e.trigger;
  if (e.show_time() && e.time && !e.time->headline.empty()) out += ": " + e.time->headline;
  out += "\n\n";
  if (e.show_time() && e.time) {
    const auto& t = *e.time;
    out += fmt::format("Profiled step time {} ms (A) vs {} ms (B), change {} ms/step; {}.\n\n", ms(t.step.a),
                       ms(t.step.b), interval_ms(t.step), how_measured(t));
    out += "| # | Op | Phase | A ms | B ms | B − A ms [CI] | Share | Significant |\n|---:|---|---|---:|---:|---:|---:|---|\n";
    const auto ops = shown_ops(t);
    for (size_t i = 0; i < ops.size(); ++i) {
      const auto& c = *ops[i];
      out += fmt::format("| {} | {}{} | {} | {} | {} | {} | {} | {} |\n", i + 1, c.name,
                         c.where == "both" ? "" : " (" + c.where + ")", phase_text(c.phase), ms(c.a), ms(c.b),
                         interval_ms(c), share(c.share), c.significant ? "yes" : "no");
    }
    if (const auto rest = rest_change(t, ops.size()))
      out += fmt::format("| | {} more ops | | | | {} | {} | |\n", t.ops.size() - ops.size(), signed_ms(*rest),
                         share(rest_share(t, *rest)));
    const auto& r = t.remainder;
    out += fmt::format("| | outside ops (unexplained) | | {} | {} | {} | {} | {} |\n", ms(r.a), ms(r.b), interval_ms(r),
                       share(r.share), r.significant ? "yes" : "no");
    out += "\nBy category: ";
    for (size_t i = 0; i < t.categories.size() && i < 4; ++i)
      out += fmt::format("{}{} {} ms ({})", i ? "; " : "", t.categories[i].name, signed_ms(t.categories[i].change),
                         share(t.categories[i].share));
    out += "\n";
  }
  if (!e.show_memory()) {
  } else if (e.memory && e.memory->entries.empty() && e.memory->unexplained == 0) {
    out += fmt::format("\n{} (peak {} vs {}).\n", e.memory->headline, compare::format_bytes(e.memory->peak_a),
                       compare::format_bytes(e.memory->peak_b));
  } else if (e.memory) {
    const auto& m = *e.memory;
    out += fmt::format("\n{} (peak {} reached at {} vs {} at {}).\n\n| # | Allocated at | Tensor | A | B | B − A | Share |\n"
                       "|---:|---|---|---:|---:|---:|---:|\n",
                       m.headline, compare::format_bytes(m.peak_a), m.peak_at_a, compare::format_bytes(m.peak_b),
                       m.peak_at_b);
    for (size_t i = 0; i < m.entries.size() && i < kWhyTopOps; ++i) {
      const auto& x = m.entries[i];
      out += fmt::format("| {} | {} | {}{} | {} | {} | {} | {} |\n", i + 1, site_text(x), x.tensor.empty() ? "-" : x.tensor,
                         x.where == "both" ? "" : " (" + x.where + ")", compare::format_bytes(x.a),
                         compare::format_bytes(x.b), compare::format_bytes(x.diff, true), share(x.share));
    }
    out += fmt::format("| | not attributed | | | | {} | |\n", compare::format_bytes(m.unexplained, true));
  }
  if (!e.note.empty()) out += "\n" + e.note + "\n";
  return out;
}

nlohmann::ordered_json why_json(const Explanation& e) {
  nlohmann::ordered_json j;
  j["trigger"] = e.trigger;
  j["time_decided"] = e.time_decided;
  j["memory_decided"] = e.memory_decided;
  if (e.time) {
    const auto& t = *e.time;
    nlohmann::ordered_json x;
    x["headline"] = t.headline;
    x["runs_a"] = t.runs_a;
    x["runs_b"] = t.runs_b;
    x["pairs"] = t.pairs;
    x["device_time"] = t.device_time;
    x["confidence"] = t.confidence;
    x["tests"] = t.tests;
    x["step"] = contribution_json(t.step);
    x["remainder"] = contribution_json(t.remainder);
    for (const auto& [key, list] : {std::pair{"ops", &t.ops}, {"categories", &t.categories}, {"phases", &t.phases}}) {
      auto arr = nlohmann::ordered_json::array();
      for (const auto& c : *list) arr.push_back(contribution_json(c));
      x[key] = arr;
    }
    j["time"] = x;
  }
  if (e.memory) {
    const auto& m = *e.memory;
    nlohmann::ordered_json x;
    x["headline"] = m.headline;
    x["peak_a"] = m.peak_a;
    x["peak_b"] = m.peak_b;
    x["timed_diff"] = m.timed_diff ? nlohmann::ordered_json(*m.timed_diff) : nlohmann::ordered_json(nullptr);
    x["unexplained"] = m.unexplained;
    x["peak_at_a"] = m.peak_at_a;
    x["peak_at_b"] = m.peak_at_b;
    for (const auto& [key, list] : {std::pair{"entries", &m.entries}, {"by_site", &m.by_site}}) {
      auto arr = nlohmann::ordered_json::array();
      for (const auto& v : *list) {
        nlohmann::ordered_json one;
        one["phase"] = v.phase;
        one["ops"] = v.ops;
        one["tensor"] = v.tensor;
        if (!v.site_a.empty()) one["site_a"] = v.site_a;
        one["where"] = v.where;
        one["a"] = v.a;
        one["b"] = v.b;
        one["diff"] = v.diff;
        one["share"] = std::isfinite(v.share) ? nlohmann::ordered_json(v.share) : nlohmann::ordered_json(nullptr);
        arr.push_back(one);
      }
      x[key] = arr;
    }
    j["memory"] = x;
  }
  if (!e.note.empty()) j["note"] = e.note;
  return j;
}

std::string why_console(const Explanation& e, const std::string& time_change) {
  std::string out;
  if (e.show_time() && e.time && !e.time->headline.empty())
    out += fmt::format("why: {}: {}\n", time_change.empty() ? fmt::format("{} ms/step", signed_ms(e.time->step.change))
                                                            : time_change,
                       e.time->headline);
  if (e.show_memory() && e.memory && (e.memory->peak_a != e.memory->peak_b || !e.memory->entries.empty()))
    out += "why: " + e.memory->headline + "\n";
  if (!e.note.empty() && !e.time) out += "why: " + e.note + "\n";
  return out;
}

}  // namespace twinbench::reports
