// Host drift between two sets of runs (see drift.h).
#include "harness/compare/drift.h"

#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>
#include <set>

#include "harness/stats/summary.h"

namespace twinbench::compare {

namespace {

// Seconds since the epoch of "YYYY-MM-DDTHH:MM:SS..." (UTC); nullopt otherwise.
std::optional<double> epoch_of(const std::string& iso) {
  std::tm tm{};
  if (iso.size() < 19 || !strptime(iso.substr(0, 19).c_str(), "%Y-%m-%dT%H:%M:%S", &tm)) return std::nullopt;
  return static_cast<double>(timegm(&tm));
}

std::optional<double> median_of(const std::vector<double>& v) {
  return v.empty() ? std::nullopt : std::optional<double>(stats::median(v));
}

struct SideFacts {
  std::optional<double> start, load, cpu_per_wall;
  std::set<std::string> hosts;
};

SideFacts facts(const std::vector<const RunView*>& runs) {
  std::vector<double> starts, loads, cpu;
  SideFacts f;
  for (const RunView* r : runs) {
    if (const auto t = epoch_of(r->run.started_at)) starts.push_back(*t);
    const auto j = nlohmann::json::parse(r->run.provenance_json, nullptr, false);
    if (j.is_object()) {
      if (j.contains("load_average") && j["load_average"].is_number()) loads.push_back(j["load_average"].get<double>());
      if (j.contains("host") && j["host"].is_string()) f.hosts.insert(j["host"].get<std::string>());
    }
    if (const auto c = r->metric("cpu_per_wall"); c && std::isfinite(*c)) cpu.push_back(*c);
  }
  f.start = median_of(starts);
  f.load = median_of(loads);
  f.cpu_per_wall = median_of(cpu);
  return f;
}

}  // namespace

HostDrift host_drift(const std::vector<const RunView*>& baseline, const std::vector<const RunView*>& candidate) {
  const SideFacts a = facts(baseline), b = facts(candidate);
  HostDrift d;
  if (a.start && b.start) d.hours_apart = std::abs(*b.start - *a.start) / 3600;
  // Different hosts only when both sides name theirs and they differ; a side
  // without a recorded host (an imported log) says nothing about it.
  std::set<std::string> hosts = a.hosts;
  hosts.insert(b.hosts.begin(), b.hosts.end());
  const bool known = !a.hosts.empty() && !b.hosts.empty();
  d.same_host = !known || hosts.size() <= 1;
  d.load_a = a.load;
  d.load_b = b.load;
  d.cpu_per_wall_a = a.cpu_per_wall;
  d.cpu_per_wall_b = b.cpu_per_wall;
  std::string text = d.hours_apart ? fmt::format("the sets were made {:.1f} h apart", *d.hours_apart) : "the sets' times are unknown";
  text += !known ? "" : d.same_host ? " on the same host" : " on different hosts";
  if (d.load_a && d.load_b) text += fmt::format("; load average {:.2f} -> {:.2f}", *d.load_a, *d.load_b);
  if (d.cpu_per_wall_a && d.cpu_per_wall_b && *d.cpu_per_wall_a > 0)
    text += fmt::format("; CPU per wall second {:.2f} -> {:.2f} ({:+.0f}%)", *d.cpu_per_wall_a, *d.cpu_per_wall_b,
                        100 * (*d.cpu_per_wall_b / *d.cpu_per_wall_a - 1));
  d.text = text;
  return d;
}

}  // namespace twinbench::compare
