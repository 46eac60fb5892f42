// Google Benchmark JSON -> store runs (see micro_import.h).
#include "harness/ingest/micro_import.h"

#include "harness/stats/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

namespace twinbench::ingest {

namespace {

using json = nlohmann::json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Keys of a benchmark entry that are not user counters.
bool is_standard_key(const std::string& key) {
  static const char* const keys[] = {
      "name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
      "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit", "aggregate_name",
      "aggregate_unit", "error_occurred", "error_message", "label", "big_o", "rms", "complexity_n",
      "cpu_coefficient", "real_coefficient", "skipped", "skip_message"};
  return std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
}

double unit_seconds(const std::string& unit, const std::string& where) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1.0;
  throw MicroImportError(fmt::format("{}: time_unit '{}' is not one of ns, us, ms, s", where, unit));
}

double number(const json& entry, const char* key, const std::string& where) {
  if (!entry.contains(key) || !entry[key].is_number())
    throw MicroImportError(fmt::format("{}: missing or non-numeric \"{}\"", where, key));
  return entry[key].get<double>();
}

std::string string_or(const json& obj, const char* key, const std::string& fallback) {
  return obj.is_object() && obj.contains(key) && obj[key].is_string() ? obj[key].get<std::string>() : fallback;
}

// FNV-1a, 64 bits: stable across platforms and releases (std::hash is not).
uint64_t fnv1a(const std::string& text, uint64_t seed) {
  uint64_t h = 1469598103934665603ULL ^ seed;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// A uuid-shaped id derived from `text` (version nibble 5, as name-based uuids are).
std::string derived_uuid(const std::string& text) {
  const std::string hex = fmt::format("{:016x}{:016x}", fnv1a(text, 0), fnv1a(text, 0x9e3779b97f4a7c15ULL));
  return fmt::format("{}-{}-5{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(13, 3), hex.substr(16, 4),
                     hex.substr(20, 12));
}

// Google Benchmark's local "2024-05-01T14:34:56+02:00" as UTC "2024-05-01T12:34:56.000Z";
// empty when the text is not of that form.
std::string date_to_utc(const std::string& date) {
  std::tm tm{};
  int off_h = 0, off_m = 0;
  char sign = '+';
  const int n = std::sscanf(date.c_str(), "%d-%d-%dT%d:%d:%d%c%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                            &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &sign, &off_h, &off_m);
  if (n != 6 && n != 9) return "";
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  time_t t = timegm(&tm);
  if (n == 9) {
    if (sign != '+' && sign != '-') return "";
    const long offset = (off_h * 60L + off_m) * 60L;
    t -= sign == '+' ? offset : -offset;
  }
  std::tm utc{};
  gmtime_r(&t, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S.000Z", &utc);
  return buf;
}

// A benchmark's entries, in the file's order.
struct Entries {
  std::vector<const json*> iterations;
  std::map<std::string, const json*> aggregates;  // by aggregate_name
  size_t first_index = 0;
};

bool is_run_option(const std::string& part) {
  if (part == "real_time" || part == "manual_time") return true;
  for (const char* prefix : {"min_time:", "repeats:", "iterations:", "min_warmup_time:"})
    if (part.rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace

std::pair<std::string, std::string> micro_case_and_variant(const std::string& run_name,
                                                           const std::vector<std::string>& variants) {
  std::vector<std::string> kept;
  std::string variant;
  size_t start = 0;
  while (start <= run_name.size()) {
    const size_t slash = std::min(run_name.find('/', start), run_name.size());
    const std::string part = run_name.substr(start, slash - start);
    start = slash + 1;
    const bool names_variant =
        part == "shared" || std::find(variants.begin(), variants.end(), part) != variants.end();
    if (variant.empty() && names_variant) {
      variant = part;
    } else if (!is_run_option(part)) {
      kept.push_back(part);
    }
  }
  std::string case_name = "micro:";
  for (size_t i = 0; i < kept.size(); ++i) case_name += (i ? "/" : "") + kept[i];
  return {case_name, variant.empty() ? "shared" : variant};
}

std::vector<MicroRun> parse_micro_json(const std::string& text, const std::string& origin,
                                       const MicroImportOptions& options) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    throw MicroImportError(fmt::format("{}: not valid JSON: {}", origin, e.what()));
  }
  if (!doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    throw MicroImportError(
        fmt::format("{}: not Google Benchmark JSON: expected an object with a \"benchmarks\" array", origin));
  const json context = doc.contains("context") && doc["context"].is_object() ? doc["context"] : json::object();

  // Entries grouped by benchmark (run_name), in first-seen order.
  std::vector<std::string> order;
  std::map<std::string, Entries> by_name;
  const json& list = doc["benchmarks"];
  for (size_t i = 0; i < list.size(); ++i) {
    const json& e = list[i];
    const std::string where = fmt::format("{}: benchmarks[{}]", origin, i);
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string())
      throw MicroImportError(where + ": expected an object with a string \"name\"");
    const std::string run_name = string_or(e, "run_name", e["name"].get<std::string>());
    auto [it, fresh] = by_name.try_emplace(run_name);
    if (fresh) {
      order.push_back(run_name);
      it->second.first_index = i;
    }
    const std::string run_type = string_or(e, "run_type", "iteration");
    if (run_type == "aggregate") {
      it->second.aggregates[string_or(e, "aggregate_name", "")] = &e;
    } else if (run_type == "iteration") {
      it->second.iterations.push_back(&e);
    } else {
      throw MicroImportError(fmt::format("{}: run_type '{}' is neither iteration nor aggregate", where, run_type));
    }
  }

  // Labels: flags/environment, then the producing binary's context, then this build.
  const std::string ctx_commit = string_or(context, "twinbench_git_commit", "");
  const std::string commit =
      !options.commit.empty() ? options.commit : (!ctx_commit.empty() ? ctx_commit : options.fallback_commit);
  const std::string ctx_branch = string_or(context, "twinbench_git_branch", "");
  const std::string branch =
      !options.branch.empty() ? options.branch : (!ctx_branch.empty() ? ctx_branch : options.fallback_branch);
  const bool dirty = !ctx_commit.empty() ? string_or(context, "twinbench_git_dirty", "false") == "true"
                                         : options.fallback_dirty;
  const std::string group = !options.group.empty()
                                ? options.group
                                : fmt::format("micro-{:016x}", fnv1a(text + "\n" + commit + "\n" + branch, 0));
  const std::string started_at = date_to_utc(string_or(context, "date", ""));
  const std::string device = string_or(context, "device_name", "cpu");
  const std::string threads_text = string_or(context, "threads", "");

  nlohmann::ordered_json prov;
  prov["git_commit"] = commit;
  prov["git_branch"] = branch;
  prov["git_dirty"] = dirty;
  prov["labels_overridden"] = !options.commit.empty() || !options.branch.empty();
  prov["libtorch_version"] = string_or(context, "libtorch_version", "");
  prov["compiler"] = string_or(context, "compiler", "");
  prov["device_name"] = device;
  prov["threads"] = threads_text.empty() ? json(nullptr) : json(std::atoi(threads_text.c_str()));
  prov["world_size"] = 1;
  prov["host"] = string_or(context, "host_name", "");
  if (context.contains("load_avg") && context["load_avg"].is_array() && !context["load_avg"].empty() &&
      context["load_avg"][0].is_number())
    prov["load_average"] = context["load_avg"][0];
  prov["source"] = "google-benchmark";
  for (const char* key : {"date", "executable", "num_cpus", "mhz_per_cpu", "cpu_scaling_enabled",
                          "library_build_type"})
    if (context.contains(key)) prov[std::string("benchmark_") + key] = context[key];
  prov["json_file"] = origin;
  const std::string provenance = prov.dump();

  std::vector<MicroRun> out;
  for (const std::string& run_name : order) {
    const Entries& entries = by_name.at(run_name);
    const std::string where = fmt::format("{}: benchmarks[{}] ('{}')", origin, entries.first_index, run_name);
    MicroRun m;
    auto& r = m.run;
    std::tie(r.case_name, r.variant) = micro_case_and_variant(run_name, options.variants);
    r.run_id = derived_uuid(group + "\n" + run_name);
    r.group_id = group;
    r.status = RunStatus::completed;
    r.started_at = started_at;
    r.host = string_or(context, "host_name", "");
    r.provenance_json = provenance;
    r.git_commit = commit;
    r.git_branch = branch;
    r.device_name = device;

    // Per-repetition values: seconds per iteration, and each counter.
    std::vector<double> seconds, cpu_seconds, iterations;
    std::map<std::string, std::vector<double>> counters;
    std::vector<double> flops_per_iteration, tokens_per_iteration;
    std::string time_unit;
    const bool used_real_time = run_name.find("/real_time") != std::string::npos ||
                                run_name.find("/manual_time") != std::string::npos;
    auto take = [&](const json& e, const std::string& at) {
      time_unit = string_or(e, "time_unit", "ns");
      const double unit = unit_seconds(time_unit, at);
      const double real = number(e, "real_time", at) * unit, cpu = number(e, "cpu_time", at) * unit;
      seconds.push_back(real);
      cpu_seconds.push_back(cpu);
      iterations.push_back(number(e, "iterations", at));
      // Google Benchmark divides rate counters by the time it measured with.
      const double rate_time = used_real_time ? real : cpu;
      for (const auto& [key, value] : e.items()) {
        if (is_standard_key(key) || !value.is_number()) continue;
        const double v = value.get<double>();
        counters[key].push_back(v);
        if (key == "flops_per_s") flops_per_iteration.push_back(v * rate_time);
        if (key == "tokens_per_s") tokens_per_iteration.push_back(v * rate_time);
      }
    };
    std::vector<const json*> failed;
    for (const json* e : entries.iterations)
      if (e->value("error_occurred", false)) failed.push_back(e);
    if (!failed.empty()) {
      r.status = RunStatus::failed;
      r.reason = string_or(*failed.front(), "error_message", "the benchmark reported an error");
    } else if (!entries.iterations.empty()) {
      for (size_t i = 0; i < entries.iterations.size(); ++i)
        take(*entries.iterations[i], where + fmt::format(" repetition {}", i));
    } else if (entries.aggregates.count("mean")) {
      take(*entries.aggregates.at("mean"), where + " (mean aggregate)");  // no per-repetition samples
    } else {
      continue;  // only complexity (BigO/RMS) or other aggregates: not a measurement of its own
    }

    nlohmann::ordered_json config;
    config["case"] = r.case_name;
    config["micro.benchmark"] = run_name;
    config["micro.time_unit"] = time_unit;
    config["micro.repetitions"] = seconds.size();
    if (!iterations.empty()) config["micro.iterations"] = stats::mean(iterations);
    if (!threads_text.empty()) config["micro.threads"] = std::atoi(threads_text.c_str());
    config["micro.source"] = origin;
    r.config_json = config.dump();

    if (r.status == RunStatus::completed) {
      for (size_t i = 0; i < seconds.size() && !entries.iterations.empty(); ++i) {
        StepRecord s;
        s.step = static_cast<int64_t>(i) + 1;  // steady-state statistics leave out step 0
        s.loss = kNaN;                         // a micro-benchmark has no loss
        s.seconds = seconds[i];
        s.tokens = i < tokens_per_iteration.size() ? std::llround(tokens_per_iteration[i]) : 0;
        m.steps.push_back(s);
      }
      auto& mt = m.metrics;
      mt.emplace_back("step_time_mean_s", stats::mean(seconds));
      mt.emplace_back("step_time_median_s", entries.aggregates.count("median") && entries.iterations.empty()
                                                ? number(*entries.aggregates.at("median"), "real_time", where) *
                                                      unit_seconds(time_unit, where)
                                                : stats::median(seconds));
      mt.emplace_back("real_time_ns", stats::mean(seconds) * 1e9);
      mt.emplace_back("cpu_time_ns", stats::mean(cpu_seconds) * 1e9);
      if (seconds.size() > 1) mt.emplace_back("real_time_stddev_ns", stats::stddev(seconds) * 1e9);
      mt.emplace_back("iterations", stats::mean(iterations));
      mt.emplace_back("repetitions", static_cast<double>(seconds.size()));
      // Throughput in the trainer's convention: work per iteration / mean wall time.
      if (!flops_per_iteration.empty())
        mt.emplace_back("tflops_per_s_per_device", stats::mean(flops_per_iteration) / stats::mean(seconds) / 1e12);
      if (!tokens_per_iteration.empty())
        mt.emplace_back("tokens_per_s_per_device", stats::mean(tokens_per_iteration) / stats::mean(seconds));
      // Every counter under its own name (median over repetitions): flops_per_s, params,
      // peak_memory_bytes, ...; Google Benchmark's items/bytes rates under shorter names.
      for (const auto& [key, values] : counters) {
        const std::string name =
            key == "items_per_second" ? "items_per_s" : key == "bytes_per_second" ? "bytes_per_s" : key;
        mt.emplace_back(name, stats::median(values));
      }
    }
    out.push_back(std::move(m));
  }
  return out;
}

MicroImportStats store_micro_runs(Store& store, const std::vector<MicroRun>& runs) {
  MicroImportStats stats;
  for (const MicroRun& m : runs) {
    if (stats.group_id.empty()) stats.group_id = m.run.group_id;
    if (store.run(m.run.run_id)) {
      ++stats.runs_present;
      continue;
    }
    store.begin_run(m.run);
    if (!m.steps.empty()) store.append_steps(m.run.run_id, m.steps);
    store.finish_run(m.run.run_id, m.run.status, m.run.reason, m.metrics);
    ++stats.runs_added;
    stats.steps_added += static_cast<int64_t>(m.steps.size());
  }
  return stats;
}

}  // namespace twinbench::ingest
