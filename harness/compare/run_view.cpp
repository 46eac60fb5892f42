// A stored run as analyses read it (see run_view.h).
#include "harness/compare/run_view.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "harness/base/hardware.h"
#include "harness/metrics/run_metrics.h"

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

std::string RunView::hardware() const { return hardware_fingerprint(run.provenance_json).description; }

namespace {

// A provenance flag, true or "true" (a run exported and imported back carries its flags as text).
bool flag_of(const nlohmann::json& provenance, const char* key) {
  if (!provenance.is_object() || !provenance.contains(key)) return false;
  const auto& v = provenance.at(key);
  return v.is_boolean() ? v.get<bool>() : v.is_string() && v.get<std::string>() == "true";
}

}  // namespace

bool oversubscribed(const RunView& run) {
  return flag_of(nlohmann::json::parse(run.run.provenance_json, nullptr, false), "oversubscribed");
}

bool lockstep(const RunView& run) {
  if (run.run.provenance_json.find("\"pairing\"") == std::string::npos) return false;  // most runs: no parse
  const auto j = nlohmann::json::parse(run.run.provenance_json, nullptr, false);
  return j.is_object() && j.value("pairing", "") == "lockstep";
}

std::string test_hooks(const store::RunRecord& run) {
  if (run.provenance_json.find("\"test_hooks\"") == std::string::npos) return "";  // most runs: no parse
  const auto j = nlohmann::ordered_json::parse(run.provenance_json, nullptr, false);  // in the order stored
  if (!j.is_object() || !j.contains("test_hooks") || !j["test_hooks"].is_object()) return "";
  std::string out;
  for (const auto& [variable, value] : j["test_hooks"].items())
    out += (out.empty() ? "" : ", ") + variable + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  return out;
}

std::string test_hooks(const std::vector<const RunView*>& runs) {
  std::vector<std::string> seen;
  for (const RunView* r : runs)
    if (const std::string h = test_hooks(r->run); !h.empty() && std::find(seen.begin(), seen.end(), h) == seen.end())
      seen.push_back(h);
  std::string out;
  for (const auto& h : seen) out += (out.empty() ? "" : "; ") + h;
  return out;
}

bool any_test_hooks(const std::vector<RunView>& runs) {
  return std::any_of(runs.begin(), runs.end(), [](const RunView& r) { return !test_hooks(r.run).empty(); });
}

bool imported(const RunView& run) { return imported(run.run); }

bool imported(const store::RunRecord& run) {
  const auto j = nlohmann::json::parse(run.provenance_json, nullptr, false);
  return j.is_object() && j.contains("source") && j["source"].is_string() && j["source"].get<std::string>() == "import";
}

std::vector<metrics::Metric> verdict_specs(const std::map<std::string, double>& case_thresholds,
                                           const std::map<std::string, double>& cli_thresholds) {
  std::map<std::string, double> thresholds = case_thresholds;
  for (const auto& [k, v] : cli_thresholds) thresholds[k] = v;
  return metrics::with_thresholds(metrics::shown_in(metrics::kVerdict), thresholds);
}

std::vector<metrics::Metric> specs_for(const RunView& run, const std::map<std::string, double>& cli_thresholds) {
  std::map<std::string, double> thresholds;
  const auto j = nlohmann::json::parse(run.run.config_json, nullptr, false);
  if (j.is_object() && j.contains("thresholds") && j["thresholds"].is_object())
    for (const auto& [k, v] : j["thresholds"].items())
      if (v.is_number()) thresholds[k] = v.get<double>();
  return verdict_specs(thresholds, cli_thresholds);
}

std::vector<std::string> case_names(const std::vector<RunView>& runs) {
  std::vector<std::string> out;
  for (const auto& r : runs)
    if (std::find(out.begin(), out.end(), r.run.case_name) == out.end()) out.push_back(r.run.case_name);
  return out;
}

std::vector<const RunView*> select(const std::vector<RunView>& runs, const std::string& case_name,
                                   const std::string& variant) {
  std::vector<const RunView*> out;
  for (const auto& r : runs)
    if (r.run.case_name == case_name && r.run.variant == variant) out.push_back(&r);
  return out;
}

std::string ref_label(const RunView& run) {
  return fmt::format("{} {}{}", run.run.git_commit.substr(0, 9), run.run.git_branch,
                     run.run.provenance_json.find("\"git_dirty\":true") != std::string::npos ? " (dirty)" : "");
}

ProvenanceTable provenance_table(const std::vector<std::pair<std::string, const RunView*>>& labelled) {
  ProvenanceTable t;
  std::vector<std::string> fields = {"git_commit", "git_branch", "git_dirty", "labels_overridden", "libtorch_version",
                                     "compiler", "device_name", "threads", "omp_wait_policy", "openblas_coretype",
                                     "world_size", "dist_backend", "host", "load_average", "quant_backend",
                                     "hardware_fingerprint", "cpu_model", "cpu_cores"};
  std::vector<nlohmann::json> provs;
  for (const auto& [label, run] : labelled) {
    t.labels.push_back(label);
    provs.push_back(nlohmann::json::parse(run->run.provenance_json, nullptr, false));
    t.configs.push_back(nlohmann::json::parse(run->run.config_json, nullptr, false).dump(2));
  }
  // The GPU part of the hardware fingerprint (base/hardware.h), where a run has it.
  for (const char* f : hardware_gpu_keys())
    if (std::any_of(provs.begin(), provs.end(), [&](const nlohmann::json& p) { return p.is_object() && p.contains(f); }))
      fields.push_back(f);
  for (const std::string& f : fields) {
    std::vector<std::string> cells;
    for (const auto& p : provs)
      cells.push_back(p.is_object() && p.contains(f) ? (p[f].is_string() ? p[f].get<std::string>() : p[f].dump()) : "-");
    t.rows.emplace_back(f, std::move(cells));
  }
  std::vector<std::string> started, ids;
  for (const auto& [label, run] : labelled) {
    started.push_back(run->run.started_at);
    ids.push_back(run->run.run_id);
  }
  t.rows.emplace_back("started_at", std::move(started));
  t.rows.emplace_back("run_id", std::move(ids));
  return t;
}

}  // namespace twinbench::compare
