// The run page (see run_report.h).
#include "reports/run_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "reports/html.h"
#include "reports/pair_report.h"
#include "reports/site_links.h"
#include "reports/svg.h"

namespace twinbench::reports {

namespace {

using compare::RunAnalysis;

constexpr size_t kTopOps = 15;

std::string run_status_text(const store::RunRecord& r) { return std::string(to_string(r.status)); }

// Where the run came from, as a definition list with the server's links.
std::string summary_html(const RunAnalysis& a) {
  const store::RunRecord& r = a.run.run;
  const auto row = [](const std::string& term, const std::string& value_html) {
    return "<dt>" + html::escape(term) + "</dt><dd>" + value_html + "</dd>";
  };
  std::string out = "<dl class=\"kv\">";
  out += row("Status", html::badge(run_status_text(r), r.reason) + (r.reason.empty() ? "" : " " + html::clipped(r.reason)));
  out += row("Case", html::link(site::runs({{"case", r.case_name}}), r.case_name));
  out += row("Implementation", html::link(site::runs({{"case", r.case_name}, {"variant", r.variant}}), r.variant));
  out += row("Series", html::link(site::series(r.case_name, r.variant, r.hardware_fingerprint, "step_time_median_s"),
                                  "nightly history of " + r.case_name + " / " + r.variant));
  std::vector<std::string> variants = {r.variant}, labels = {r.git_branch};
  for (const auto& g : a.group) {
    variants.push_back(g.variant);
    labels.push_back(g.git_branch);
  }
  const std::string reports = site::group_reports_html(r.group_id, variants, labels);
  out += row("Group", html::link(site::runs({{"group", r.group_id}}), r.group_id) + (reports.empty() ? "" : " · " + reports));
  out += row("Repeat", html::escape(std::to_string(r.repeat_index)));
  out += row("Branch", r.git_branch.empty() ? "-" : html::link(site::runs({{"branch", r.git_branch}}), r.git_branch));
  out += row("Commit", r.git_commit.empty() ? "-" : html::link(site::runs({{"commit", r.git_commit}}), r.git_commit.substr(0, 9)));
  out += row("Host", html::escape(fmt::format("{} (process {})", r.host, r.pid)));
  out += row("Hardware", html::escape(a.run.hardware()));
  out += row("Started", html::escape(r.started_at));
  out += row("Finished", html::escape(r.finished_at.value_or("-")));
  out += row("Run id", "<code>" + html::escape(r.run_id) + "</code>");
  return out + "</dl>";
}

std::string metrics_html(const RunAnalysis& a) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& [m, v] : a.metrics)
    rows.push_back({html::escape(m.label), html::num(html::escape(metrics::format_value(m, v))), html::escape(m.unit),
                    "<code>" + html::escape(m.name) + "</code>"});
  for (const auto& [name, v] : a.other_metrics)
    rows.push_back({html::escape(name), html::num(html::escape(fmt::format("{:.6g}", v))), "", ""});
  if (rows.empty()) return "<p>No metrics stored (the run did not finish, or was skipped).</p>";
  return html::table({"Metric", "Value", "Unit", "Stored as"}, rows, "summary");
}

std::string curves_html(const RunAnalysis& a) {
  const auto& steps = a.run.steps;
  if (steps.empty()) return "<p>No steps stored.</p>";
  html::Series loss{"training loss", {}, {}, "#1f77b4", false}, time{"step time (s)", {}, {}, "#d62728", false};
  for (const auto& s : steps) {
    loss.x.push_back(static_cast<double>(s.step));
    loss.y.push_back(s.loss);
    if (std::isfinite(s.seconds)) {
      time.x.push_back(static_cast<double>(s.step));
      time.y.push_back(s.seconds);
    }
  }
  html::ChartOptions lo;
  lo.title = "Training loss";
  lo.x_label = "step";
  lo.y_label = "loss";
  html::ChartOptions to = lo;
  to.title = "Step time (all steps, warm-up included)";
  to.y_label = "seconds";
  return "<div class=\"charts\"><figure>" + html::line_chart({loss}, lo) + "</figure><figure>" +
         html::line_chart({time}, to) + "</figure></div>";
}

std::string steps_html(const RunAnalysis& a) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& s : a.run.steps) {
    std::string flags;
    for (const auto& [on, name] : {std::pair{s.warmup, "warm-up"}, std::pair{s.eval, "eval"},
                                   std::pair{s.checkpoint, "checkpoint"}, std::pair{s.stall, "stall"}})
      if (on) flags += (flags.empty() ? "" : ", ") + std::string(name);
    rows.push_back({html::num(std::to_string(s.step)), html::num(html::escape(fmt::format("{:.6f}", s.loss))),
                    html::num(html::escape(std::isfinite(s.seconds) ? fmt::format("{:.4f}", s.seconds) : "-")),
                    html::num(std::to_string(s.tokens)),
                    html::num(s.eval_loss ? html::escape(fmt::format("{:.6f}", *s.eval_loss)) : "-"), html::escape(flags)});
  }
  return "<details><summary>" + html::escape(fmt::format("All {} steps", rows.size())) + "</summary>" +
         html::table({"Step", "Loss", "Seconds", "Tokens", "Eval loss", "Not steady"}, rows, "summary") + "</details>";
}

std::string profile_html(const RunAnalysis& a) {
  if (!a.profile) return "<p>No profiled run of this case and implementation in its group (docs/verdicts.md §15).</p>";
  const auto& p = *a.profile;
  auto ops = p.ops;
  std::sort(ops.begin(), ops.end(), [](const auto& x, const auto& y) { return x.seconds > y.seconds; });
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < ops.size() && i < kTopOps; ++i)
    rows.push_back({html::clipped(ops[i].op), html::clipped(ops[i].phase, true),
                    html::num(html::escape(fmt::format("{:.3f}", 1e3 * ops[i].seconds))),
                    html::num(html::escape(fmt::format("{:.1f}", ops[i].calls))),
                    html::num(html::escape(p.step_seconds > 0 ? fmt::format("{:.1f}%", 100 * ops[i].seconds / p.step_seconds)
                                                              : "-"))});
  std::string out = "<p>" + html::escape(fmt::format("Profile of {} over {} steps of {:.4f} s{}; the {} ops with the most "
                                                    "self time of {}.",
                                                    a.profile_run_id == a.run.run.run_id ? "this run" : "a profiled run",
                                                    p.steps, p.step_seconds, p.device_time ? " (device time)" : "",
                                                    std::min(kTopOps, ops.size()), ops.size())) +
                    (a.profile_run_id == a.run.run.run_id ? "" : " " + html::link(site::run(a.profile_run_id), "That run")) +
                    "</p>";
  out += html::table({"Op", "Phase", "ms per step", "Calls per step", "Of the step"}, rows, "summary");
  if (p.peak_bytes)
    out += "<p>" + html::escape(fmt::format("Peak of the live allocations: {:.1f} MiB, reached in {} at {}.",
                                            static_cast<double>(*p.peak_bytes) / (1 << 20), p.peak_phase,
                                            p.peak_ops.empty() ? "no op" : p.peak_ops)) +
           "</p>";
  return out;
}

std::string group_html(const RunAnalysis& a) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& r : a.group)
    rows.push_back({html::link(site::run(r.run_id), r.run_id.substr(0, 8)), html::clipped(r.case_name, true),
                    html::clipped(r.variant, true), html::num(std::to_string(r.repeat_index)),
                    html::badge(run_status_text(r), r.reason), html::escape(r.started_at.substr(0, 19))});
  if (rows.empty()) return "<p>The only run of its group.</p>";
  return html::table({"Run", "Case", "Implementation", "Repeat", "Status", "Started"}, rows, "summary");
}

}  // namespace

nlohmann::ordered_json run_record_json(const store::RunRecord& r) {
  nlohmann::ordered_json j;
  j["run_id"] = r.run_id;
  j["group_id"] = r.group_id;
  j["case"] = r.case_name;
  j["variant"] = r.variant;
  j["repeat"] = r.repeat_index;
  j["status"] = run_status_text(r);
  j["reason"] = r.reason;
  j["started_at"] = r.started_at;
  j["finished_at"] = r.finished_at ? nlohmann::ordered_json(*r.finished_at) : nlohmann::ordered_json(nullptr);
  j["git_commit"] = r.git_commit;
  j["git_branch"] = r.git_branch;
  j["host"] = r.host;
  j["hardware_fingerprint"] = r.hardware_fingerprint;
  return j;
}

std::string RunReport::markdown() const {
  const auto& r = a_.run.run;
  std::string out = fmt::format("## twinbench run {}\n\n{} / {} · {} · group `{}`\n\n| Metric | Value |\n|---|---:|\n",
                                r.run_id, r.case_name, r.variant, run_status_text(r), r.group_id);
  for (const auto& [m, v] : a_.metrics) out += fmt::format("| {} | {} |\n", m.label, metrics::format_value(m, v));
  return out;
}

std::string RunReport::json() const {
  nlohmann::ordered_json j = run_record_json(a_.run.run);
  j["hardware"] = a_.run.hardware();
  nlohmann::ordered_json m = nlohmann::ordered_json::object();
  for (const auto& [spec, v] : a_.metrics) m[spec.name] = v;
  for (const auto& [name, v] : a_.other_metrics) m[name] = v;
  j["metrics"] = m;
  j["steps"] = nlohmann::ordered_json::array();
  for (const auto& s : a_.run.steps) {
    nlohmann::ordered_json step = {{"step", s.step}, {"tokens", s.tokens}, {"warmup", s.warmup}, {"eval", s.eval},
                                   {"checkpoint", s.checkpoint}, {"stall", s.stall}};
    step["loss"] = std::isfinite(s.loss) ? nlohmann::ordered_json(s.loss) : nlohmann::ordered_json(nullptr);
    step["seconds"] = std::isfinite(s.seconds) ? nlohmann::ordered_json(s.seconds) : nlohmann::ordered_json(nullptr);
    step["eval_loss"] = s.eval_loss ? nlohmann::ordered_json(*s.eval_loss) : nlohmann::ordered_json(nullptr);
    j["steps"].push_back(step);
  }
  j["group_runs"] = nlohmann::ordered_json::array();
  for (const auto& r : a_.group) j["group_runs"].push_back(r.run_id);
  if (a_.profile) {
    nlohmann::ordered_json p;
    p["run_id"] = a_.profile_run_id;
    p["steps"] = a_.profile->steps;
    p["step_seconds"] = a_.profile->step_seconds;
    p["ops"] = nlohmann::ordered_json::array();
    for (const auto& op : a_.profile->ops)
      p["ops"].push_back({{"phase", op.phase}, {"op", op.op}, {"seconds", op.seconds}, {"calls", op.calls}});
    j["profile"] = p;
  } else {
    j["profile"] = nullptr;
  }
  return j.dump(2);
}

std::vector<HtmlPage> RunReport::pages() const {
  const auto& r = a_.run.run;
  std::string body = html::section("run", "Run", summary_html(a_));
  body += html::section("metrics", "Metrics", metrics_html(a_));
  body += html::section("curves", "Loss and step time", curves_html(a_) + steps_html(a_));
  body += html::section("profile", "Where its time goes", profile_html(a_));
  body += html::section("provenance", "Provenance", provenance_html({{r.variant, &a_.run}}));
  body += html::section("group", "Its group", group_html(a_));
  html::Page page;
  page.title = fmt::format("twinbench · run {} / {}", r.case_name, r.variant);
  page.subtitle = fmt::format("{} · {} · started {}", run_status_text(r), compare::ref_label(a_.run), r.started_at);
  page.nav_html = html::link(site::index(), "index") + " · " + html::link(site::runs({{"group", r.group_id}}), "its group");
  page.body_html = body;
  page.footer_text = "run " + r.run_id;
  return {{"run.html", html::render_page(page)}};
}

}  // namespace twinbench::reports
