// The stored form of a profiled run (see profile_record.h).
#include "harness/compare/profile_record.h"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

namespace twinbench::compare {

namespace {

constexpr const char* kSelf = "why.self_s|";
constexpr const char* kCalls = "why.calls|";
constexpr const char* kPeakAt = "why.peak_b|";

bool starts(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// "a|b|c" after `prefix` into its `n` parts (the last one may hold '|': never, but kept whole).
std::vector<std::string> fields(const std::string& name, const char* prefix, size_t n) {
  std::vector<std::string> out;
  std::string rest = name.substr(std::string(prefix).size());
  while (out.size() + 1 < n) {
    const auto bar = rest.find('|');
    if (bar == std::string::npos) break;
    out.push_back(rest.substr(0, bar));
    rest = rest.substr(bar + 1);
  }
  out.push_back(rest);
  return out;
}

}  // namespace

bool is_profile_run(const store::RunRecord& run) {
  if (run.provenance_json.find(kProfileRole) == std::string::npos) return false;  // the cheap test first
  const auto j = nlohmann::json::parse(run.provenance_json, nullptr, false);
  return j.is_object() && j.contains("run_role") && j["run_role"].is_string() &&
         j["run_role"].get<std::string>() == kProfileRole;
}

store::MetricList profile_rows(const RunProfile& p) {
  store::MetricList rows;
  rows.emplace_back("why.steps", static_cast<double>(p.steps));
  rows.emplace_back("why.step_s", p.step_seconds);
  rows.emplace_back("why.device_time", p.device_time ? 1.0 : 0.0);
  for (const auto& op : p.ops) {
    rows.emplace_back(kSelf + op.phase + "|" + op.op, op.seconds);
    rows.emplace_back(kCalls + op.phase + "|" + op.op, op.calls);
  }
  if (p.peak_bytes) {
    rows.emplace_back("why.peak_bytes", static_cast<double>(*p.peak_bytes));
    rows.emplace_back("why.peak_at|" + p.peak_phase + "|" + p.peak_ops, 1.0);
    // One row per (phase, site, tensor): rows of one key add up.
    std::map<std::string, double> peak;
    for (const auto& l : p.live_at_peak) peak[kPeakAt + l.phase + "|" + l.ops + "|" + l.tensor] += double(l.bytes);
    for (const auto& [name, bytes] : peak) rows.emplace_back(name, bytes);
  }
  for (auto& [name, value] : rows)
    if (value && !std::isfinite(*value)) value.reset();
  return rows;
}

std::optional<RunProfile> profile_of(const RunView& run) {
  const auto steps = run.metric("why.steps");
  if (!steps) return std::nullopt;
  RunProfile p;
  p.steps = static_cast<int64_t>(*steps);
  p.step_seconds = run.metric("why.step_s").value_or(0);
  p.device_time = run.metric("why.device_time").value_or(0) > 0.5;
  std::map<std::pair<std::string, std::string>, ProfiledOp> ops;
  for (const auto& [name, value] : run.metrics) {
    if (!value) continue;
    if (starts(name, kSelf) || starts(name, kCalls)) {
      const bool self = starts(name, kSelf);
      const auto f = fields(name, self ? kSelf : kCalls, 2);
      if (f.size() != 2) continue;
      auto& op = ops[{f[0], f[1]}];
      op.phase = f[0];
      op.op = f[1];
      (self ? op.seconds : op.calls) = *value;
    } else if (starts(name, "why.peak_at|")) {
      const auto f = fields(name, "why.peak_at|", 2);
      if (f.size() == 2) p.peak_phase = f[0], p.peak_ops = f[1];
    } else if (starts(name, kPeakAt)) {
      const auto f = fields(name, kPeakAt, 3);
      if (f.size() == 3) p.live_at_peak.push_back({f[0], f[1], f[2], static_cast<int64_t>(std::llround(*value))});
    }
  }
  for (auto& [key, op] : ops) p.ops.push_back(std::move(op));
  if (const auto peak = run.metric("why.peak_bytes")) p.peak_bytes = static_cast<int64_t>(std::llround(*peak));
  return p;
}

}  // namespace twinbench::compare
