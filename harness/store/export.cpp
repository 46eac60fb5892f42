// export_runs(): the selected runs (and optionally their steps) as CSV or JSON.
// Each run is first built as an ordered JSON object (column name -> value),
// which the JSON output nests and the CSV output flattens to fields.
#include "harness/store/export.h"

#include <cmath>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace twinbench::store {

namespace {

using Json = nlohmann::ordered_json;

constexpr std::string_view kRunColumns[] = {
    "run_id",     "group_id",   "case",       "variant",     "repeat",
    "status",     "reason",     "started_at", "finished_at", "host",
    "git_commit", "git_branch", "device_name", "world_size", "hardware_fingerprint"};
constexpr std::string_view kJsonColumns[] = {"config_json", "provenance_json"};
constexpr std::string_view kStepColumns[] = {"step",    "loss",          "step_time_s",
                                             "tokens",  "is_warmup",     "is_eval",
                                             "is_checkpoint", "eval_loss", "is_stall"};

// A metric's column: its name, or "metric.<name>" where that would clash with a
// fixed column (or with "steps", the nested array) or with another metric's
// column.
std::vector<std::pair<std::string, std::string>> metric_columns(
    const std::set<std::string>& names) {
  std::set<std::string, std::less<>> fixed(std::begin(kRunColumns), std::end(kRunColumns));
  fixed.insert(std::begin(kJsonColumns), std::end(kJsonColumns));
  fixed.insert(std::begin(kStepColumns), std::end(kStepColumns));
  fixed.insert("steps");
  std::set<std::string, std::less<>> taken = fixed;
  taken.insert(names.begin(), names.end());

  std::vector<std::pair<std::string, std::string>> out;  // (metric, column)
  for (const std::string& name : names) {
    std::string column = name;
    if (fixed.count(name)) {
      do column = "metric." + column;
      while (taken.count(column));
      taken.insert(column);
    }
    out.emplace_back(name, column);
  }
  return out;
}

Json metric_value(const MetricMap& metrics, const std::string& name) {
  const auto it = metrics.find(name);
  if (it == metrics.end() || !it->second) return nullptr;
  return *it->second;
}

// The run's columns, metrics and JSON columns, in output order. The JSON
// columns are nested objects when `nest_json`, else their stored text.
Json run_object(const RunRecord& run, const MetricMap& metrics,
                const std::vector<std::pair<std::string, std::string>>& metric_cols,
                bool nest_json) {
  Json j = Json::object();
  j["run_id"] = run.run_id;
  j["group_id"] = run.group_id;
  j["case"] = run.case_name;
  j["variant"] = run.variant;
  j["repeat"] = run.repeat_index;
  j["status"] = std::string(to_string(run.status));
  j["reason"] = run.reason;
  j["started_at"] = run.started_at;
  j["finished_at"] = run.finished_at ? Json(*run.finished_at) : Json(nullptr);
  j["host"] = run.host;
  j["git_commit"] = run.git_commit;
  j["git_branch"] = run.git_branch;
  j["device_name"] = run.device_name;
  j["world_size"] = run.world_size;
  j["hardware_fingerprint"] = run.hardware_fingerprint;
  for (const auto& [name, column] : metric_cols) j[column] = metric_value(metrics, name);
  for (const auto& [key, text] :
       {std::pair{"config_json", &run.config_json}, {"provenance_json", &run.provenance_json}}) {
    Json parsed = nest_json ? Json::parse(*text, nullptr, /*allow_exceptions=*/false)
                            : Json(nlohmann::json::value_t::discarded);
    j[key] = parsed.is_discarded() ? Json(*text) : std::move(parsed);
  }
  return j;
}

Json step_object(const StepRecord& s) {
  Json j = Json::object();
  j["step"] = s.step;
  j["loss"] = s.loss;  // NaN is written as null
  j["step_time_s"] = s.seconds;  // an unknown (NaN) time too
  j["tokens"] = s.tokens;
  j["is_warmup"] = s.warmup;
  j["is_eval"] = s.eval;
  j["is_checkpoint"] = s.checkpoint;
  j["eval_loss"] = s.eval_loss ? Json(*s.eval_loss) : Json(nullptr);
  j["is_stall"] = s.stall;
  return j;
}

// ---- CSV (RFC 4180) ------------------------------------------------------------------

void append_field(std::string& line, std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) {
    line += text;
    return;
  }
  line += '"';
  for (char c : text) {
    if (c == '"') line += '"';
    line += c;
  }
  line += '"';
}

// One JSON scalar as a CSV field: null and NaN empty, booleans 0/1, numbers in
// their shortest exact form.
void append_value(std::string& line, const Json& value) {
  switch (value.type()) {
    case Json::value_t::null:
      break;
    case Json::value_t::string:
      append_field(line, value.get_ref<const std::string&>());
      break;
    case Json::value_t::boolean:
      line += value.get<bool>() ? '1' : '0';
      break;
    case Json::value_t::number_integer:
      line += fmt::format("{}", value.get<int64_t>());
      break;
    case Json::value_t::number_unsigned:
      line += fmt::format("{}", value.get<uint64_t>());
      break;
    case Json::value_t::number_float: {
      const double d = value.get<double>();
      if (!std::isnan(d)) line += fmt::format("{}", d);
      break;
    }
    default:  // objects and arrays are not produced for CSV
      append_field(line, value.dump());
      break;
  }
}

// The object's values as fields, each followed by a comma.
void append_fields(std::string& line, const Json& object) {
  for (const auto& item : object.items()) {
    append_value(line, item.value());
    line += ',';
  }
}

void end_line(std::string& line, std::string& out) {
  if (!line.empty() && line.back() == ',') line.pop_back();
  out += line;
  out += "\r\n";
  line.clear();
}

// The given runs in the chosen format (export_runs and export_run).
std::string export_list(const Store& store, const std::vector<RunRecord>& runs, ExportFormat format,
                        bool with_steps) {
  // Metrics and steps read a batch of runs per statement, not a statement per run.
  std::vector<std::string> ids;
  for (const RunRecord& run : runs) ids.push_back(run.run_id);
  auto by_run = store.metrics_of(ids);
  std::vector<MetricMap> metrics;
  metrics.reserve(runs.size());
  std::set<std::string> names;
  for (const RunRecord& run : runs) {
    metrics.push_back(std::move(by_run[run.run_id]));
    for (const auto& metric : metrics.back()) names.insert(metric.first);
  }
  const auto metric_cols = metric_columns(names);
  std::map<std::string, std::vector<StepRecord>> steps_by_run;
  if (with_steps || format == ExportFormat::kJsonl) steps_by_run = store.steps_of(ids);
  const auto steps_of = [&](const RunRecord& run) -> const std::vector<StepRecord>& { return steps_by_run[run.run_id]; };

  if (format == ExportFormat::kJsonl) {
    std::string out;
    for (size_t i = 0; i < runs.size(); ++i) {
      Json line = Json::object();
      line["twinbench_run"] = run_object(runs[i], metrics[i], metric_cols, /*nest_json=*/true);
      out += line.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
      for (const StepRecord& s : steps_of(runs[i])) out += step_object(s).dump() + "\n";
    }
    return out;
  }

  if (format == ExportFormat::kJson) {
    Json list = Json::array();
    for (size_t i = 0; i < runs.size(); ++i) {
      Json j = run_object(runs[i], metrics[i], metric_cols, /*nest_json=*/true);
      if (with_steps) {
        Json steps = Json::array();
        for (const StepRecord& s : steps_of(runs[i])) steps.push_back(step_object(s));
        j["steps"] = std::move(steps);
      }
      list.push_back(std::move(j));
    }
    // Invalid UTF-8 (error text from outside) is replaced, not an exception.
    return list.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
  }

  std::string out, line;
  std::vector<std::string_view> header(std::begin(kRunColumns), std::end(kRunColumns));
  for (const auto& column : metric_cols) header.push_back(column.second);
  header.insert(header.end(), std::begin(kJsonColumns), std::end(kJsonColumns));
  if (with_steps) header.insert(header.end(), std::begin(kStepColumns), std::end(kStepColumns));
  for (std::string_view column : header) {
    append_field(line, column);
    line += ',';
  }
  end_line(line, out);

  for (size_t i = 0; i < runs.size(); ++i) {
    std::string prefix;
    append_fields(prefix, run_object(runs[i], metrics[i], metric_cols, /*nest_json=*/false));
    if (!with_steps) {
      line = prefix;
      end_line(line, out);
      continue;
    }
    for (const StepRecord& s : steps_of(runs[i])) {
      line = prefix;
      append_fields(line, step_object(s));
      end_line(line, out);
    }
  }
  return out;
}

}  // namespace

std::string export_runs(const Store& store, const RunFilter& filter, ExportFormat format,
                        bool with_steps) {
  return export_list(store, store.runs(filter), format, with_steps);
}

std::string export_run(const Store& store, const std::string& run_id, ExportFormat format, bool with_steps) {
  auto run = store.run(run_id);
  if (!run) throw StoreError(fmt::format("{}: no run {}", store.path(), run_id));
  return export_list(store, {std::move(*run)}, format, with_steps);
}

}  // namespace twinbench::store
