// Configuration resolution (see config.h): one key table drives TOML parsing,
// command-line overrides, validation messages and the JSON dump.
#include "harness/base/config.h"
#include "harness/base/external_toml.h"


#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <toml++/toml.h>
#include <sstream>
#include <variant>

#include "models/device/kinds.h"

namespace twinbench {

namespace fs = std::filesystem;

ConfigError::ConfigError(const std::string& where, const std::string& key, const std::string& message)
    : std::runtime_error(fmt::format("{}: {}: {}", where, key, message)), where_(where), key_(key) {}

namespace {

template <typename T>
using Field = T& (*)(RunConfig&);
using AnyField = std::variant<Field<int64_t>, Field<double>, Field<std::string>>;

struct KeySpec {
  const char* key;
  AnyField field;
  const char* doc;
};

// The table of every config key. `model.preset` is special: it is applied first.
const std::vector<KeySpec>& key_table() {
  // clang-format off
  static const std::vector<KeySpec> table = {
    {"model.preset",   Field<std::string>{[](RunConfig& c) -> std::string& { return c.model.preset; }}, "tiny | small | 1b | 8b; applied before every other key"},
    {"model.d_model",  Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.model.d_model; }}, "model width d"},
    {"model.layers",   Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.model.layers; }}, "decoder layers L"},
    {"model.heads",    Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.model.heads; }}, "query heads H"},
    {"model.kv_heads", Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.model.kv_heads; }}, "key/value heads KV (H must be a multiple)"},
    {"model.head_dim", Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.model.head_dim; }}, "head dim hd (even)"},
    {"model.mlp_dim",  Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.model.mlp_dim; }}, "SwiGLU hidden width"},
    {"model.vocab",    Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.model.vocab; }}, "vocabulary size V"},
    {"model.rope_base",Field<double>{[](RunConfig& c) -> double& { return c.model.rope_base; }}, "RoPE base"},
    {"model.eps",      Field<double>{[](RunConfig& c) -> double& { return c.model.eps; }}, "RMSNorm epsilon"},
    {"model.dropout",  Field<double>{[](RunConfig& c) -> double& { return c.model.dropout; }}, "dropout rate in [0, 1)"},
    {"train.steps",    Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.train.steps; }}, "optimizer steps"},
    {"train.batch",    Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.train.batch; }}, "sequences per device per micro-batch"},
    {"train.seq_len",  Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.train.seq_len; }}, "tokens per sequence"},
    {"train.grad_accum", Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.train.grad_accum; }}, "micro-batches per optimizer step"},
    {"train.optimizer",Field<std::string>{[](RunConfig& c) -> std::string& { return c.train.optimizer; }}, "adamw | sgd | muon"},
    {"train.lr",       Field<double>{[](RunConfig& c) -> double& { return c.train.lr; }}, "peak learning rate"},
    {"train.warmup_steps", Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.train.warmup_steps; }}, "linear learning-rate warm-up steps"},
    {"train.schedule", Field<std::string>{[](RunConfig& c) -> std::string& { return c.train.schedule; }}, "cosine | linear | constant decay after warm-up"},
    {"train.dtype",    Field<std::string>{[](RunConfig& c) -> std::string& { return c.train.dtype; }}, "fp32 | bf16 compute"},
    {"train.clip",     Field<double>{[](RunConfig& c) -> double& { return c.train.clip; }}, "global gradient-norm clip (0 = off)"},
    {"train.seed",     Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.train.seed; }}, "initialisation, data and dropout seed"},
    {"train.eval_every", Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.train.eval_every; }}, "held-out evaluation period in steps (0 = at the end)"},
    {"train.checkpoint_every", Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.train.checkpoint_every; }}, "checkpoint period in steps (0 = never)"},
    {"train.eval_batches", Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.train.eval_batches; }}, "held-out batches per evaluation"},
    {"train.checkpoint_dir", Field<std::string>{[](RunConfig& c) -> std::string& { return c.train.checkpoint_dir; }}, "where checkpoints are written"},
    {"train.resume_from", Field<std::string>{[](RunConfig& c) -> std::string& { return c.train.resume_from; }}, "checkpoint file to continue from"},
    {"train.remat",    Field<std::string>{[](RunConfig& c) -> std::string& { return c.train.remat; }}, "none | full: activation recompute (each decoder layer, the embedding and the head keep only their input and recompute their forward in backward)"},
    {"quant.mode",     Field<std::string>{[](RunConfig& c) -> std::string& { return c.model.quant_mode; }}, "none | int8 | fp8 quantized training of every dense matmul"},
    {"quant.fp8_scaling", Field<std::string>{[](RunConfig& c) -> std::string& { return c.model.fp8_scaling; }}, "current | delayed (amax history) fp8 scaling"},
    {"data.source",    Field<std::string>{[](RunConfig& c) -> std::string& { return c.data.source; }}, "synthetic | shard"},
    {"data.path",      Field<std::string>{[](RunConfig& c) -> std::string& { return c.data.path; }}, "token shard file for data.source = shard"},
    {"measure.warmup_steps", Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.measure.warmup_steps; }}, "leading steps left out of steady-state statistics"},
    {"measure.repeats",Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.measure.repeats; }}, "repeats per case and variant"},
    {"dist.nproc",     Field<int64_t>{[](RunConfig& c) -> int64_t& { return c.dist.nproc; }}, "data-parallel processes (devices)"},
    {"dist.bucket_mb", Field<double>{[](RunConfig& c) -> double& { return c.dist.bucket_mb; }}, "gradient all-reduce bucket size in MiB"},
    {"dist.timeout_s", Field<double>{[](RunConfig& c) -> double& { return c.dist.timeout_s; }}, "rendezvous and collective timeout in seconds"},
    {"dist.shard",     Field<std::string>{[](RunConfig& c) -> std::string& { return c.dist.shard; }}, "none | zero3: replicated data parallel, or parameters, gradients and optimizer state sharded over the ranks (ZeRO-3 / FSDP)"},
    {"measure.parity_tolerance", Field<double>{[](RunConfig& c) -> double& { return c.measure.parity_tolerance; }}, "max relative loss difference between implementations (reports)"},
    {"requires.device",Field<std::string>{[](RunConfig& c) -> std::string& { return c.needs.device; }}, "any | cpu | cuda"},
    {"requires.memory_gb", Field<double>{[](RunConfig& c) -> double& { return c.needs.memory_gb; }}, "memory the case needs (0 = the plan's estimate)"},
  };
  // clang-format on
  return table;
}

const KeySpec* find_key(const std::string& key) {
  for (const auto& spec : key_table())
    if (key == spec.key) return &spec;
  return nullptr;
}

const char* type_name(const AnyField& f) {
  switch (f.index()) {
    case 0: return "integer";
    case 1: return "number";
    default: return "string";
  }
}

// One value to apply, with where it came from.
struct Setting {
  std::string key;
  std::string where;  // "file:line" or "command line"
  // Exactly one of these holds the value: TOML typed node, or CLI text.
  const toml::node* node = nullptr;
  std::string text;
};

std::string toml_type(const toml::node& n) {
  std::ostringstream os;
  os << "a TOML " << n.type();
  if (auto str = n.value<std::string>()) os << " \"" << *str << "\"";
  return os.str();
}

void assign(RunConfig& config, const KeySpec& spec, const Setting& s) {
  auto fail = [&](const std::string& got) {
    throw ConfigError(s.where, s.key, fmt::format("expected {}, got {}", type_name(spec.field), got));
  };
  std::visit(
      [&](auto field) {
        using T = std::remove_reference_t<decltype(field(config))>;
        T& target = field(config);
        if (s.node) {
          if constexpr (std::is_same_v<T, int64_t>) {
            if (!s.node->is_integer()) fail(toml_type(*s.node));
            target = *s.node->value<int64_t>();
          } else if constexpr (std::is_same_v<T, double>) {
            if (!s.node->is_number()) fail(toml_type(*s.node));
            target = *s.node->value<double>();
          } else {
            if (!s.node->is_string()) fail(toml_type(*s.node));
            target = *s.node->value<std::string>();
          }
        } else {
          const std::string& t = s.text;
          if constexpr (std::is_same_v<T, int64_t>) {
            int64_t v = 0;
            const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
            if (ec != std::errc() || end != t.data() + t.size() || t.empty()) fail(fmt::format("'{}'", t));
            target = v;
          } else if constexpr (std::is_same_v<T, double>) {
            char* end = nullptr;
            const double v = std::strtod(t.c_str(), &end);
            if (t.empty() || end != t.c_str() + t.size()) fail(fmt::format("'{}'", t));
            target = v;
          } else {
            target = t;
          }
        }
      },
      spec.field);
}

std::vector<Setting> settings_from_toml(const std::string& path, const toml::table& root, RunConfig& config) {
  std::vector<Setting> out;
  auto where = [&](const toml::source_region& r) { return fmt::format("{}:{}", path, r.begin.line); };
  for (auto&& [section, node] : root) {
    const std::string name(section.str());
    if (name == "description") {
      if (!node.is_string()) throw ConfigError(where(node.source()), name, "expected a string");
      config.description = *node.value<std::string>();
      continue;
    }
    const auto* table = node.as_table();
    if (!table) throw ConfigError(where(node.source()), name, "unknown top-level key (expected a [section])");
    if (name == "thresholds") {
      // [thresholds] metric = number: verdict thresholds for this case. The names are
      // the metric catalogue's (harness/metrics), checked by metrics::check_thresholds.
      for (auto&& [k, v] : *table) {
        const std::string metric(k.str());
        config.threshold_sources[metric] = where(v.source());
        const auto value = v.value<double>();
        if (!value || !(*value >= 0)) throw ConfigError(where(v.source()), "thresholds." + metric, "expected a number >= 0");
        config.thresholds[metric] = *value;
      }
      continue;
    }
    if (name == "external") {  // [external.NAME]: a trainer run as a variant (external_toml.h)
      parse_external_sections(path, *table, config.externals);
      continue;
    }
    if (name == "reduced") {
      // [reduced] holds dotted keys: "model.layers" = 2
      for (auto&& [k, v] : *table) {
        const std::string key(k.str());
        if (!find_key(key) || key == "model.preset")
          throw ConfigError(where(v.source()), "reduced." + key, "not a config key that a reduced form may set");
        std::string text;
        if (auto str = v.value_exact<std::string>()) text = *str;
        else if (auto i = v.value_exact<int64_t>()) text = std::to_string(*i);
        else if (auto d = v.value_exact<double>()) text = fmt::format("{}", *d);
        else throw ConfigError(where(v.source()), "reduced." + key, "expected a string or number");
        config.reduced_overrides.push_back(key + "=" + text);
      }
      continue;
    }
    for (auto&& [k, v] : *table) {
      const std::string key = name + "." + std::string(k.str());
      if (!find_key(key)) throw ConfigError(where(v.source()), key, "unknown key (see `twinbench list --keys`)");
      out.push_back({key, where(v.source()), &v, {}});
    }
  }
  return out;
}

std::vector<Setting> settings_from_overrides(const std::vector<std::string>& overrides) {
  std::vector<Setting> out;
  for (const auto& o : overrides) {
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0)
      throw ConfigError("command line", o, "expected key=value (e.g. train.steps=20)");
    const std::string key = o.substr(0, eq);
    if (!find_key(key)) throw ConfigError("command line", key, "unknown key (see `twinbench list --keys`)");
    out.push_back({key, "command line", nullptr, o.substr(eq + 1)});
  }
  return out;
}

void check_choice(const RunConfig& c, const std::vector<Setting>& settings, const std::string& key,
                  const std::string& value, const std::vector<std::string>& allowed) {
  for (const auto& a : allowed)
    if (value == a) return;
  std::string where = "default";
  for (const auto& s : settings)
    if (s.key == key) where = s.where;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  (void)c;
  throw ConfigError(where, key, fmt::format("'{}' is not one of: {}", value, list));
}

// Combinations of sharding and recompute that could only fail later, or would
// silently do nothing, are errors now, named by the key that was set.
void check_combinations(const RunConfig& c, const std::vector<Setting>& settings) {
  const auto where_of = [&](const std::string& key) {
    for (auto it = settings.rbegin(); it != settings.rend(); ++it)
      if (it->key == key) return std::optional<std::string>(it->where);
    return std::optional<std::string>();
  };
  const auto fail = [&](const std::string& key, const std::string& message) {
    throw ConfigError(where_of(key).value_or("default"), key, message);
  };
  if (c.dist.shard == "zero3") {
    if (c.train.optimizer == "muon")
      fail(where_of("train.optimizer") ? "train.optimizer" : "dist.shard",
           "Muon cannot train with dist.shard = zero3: it orthogonalises whole matrices and each rank holds slices "
           "of them (use adamw or sgd, or dist.shard = none)");
    if (c.model.quant_mode != "none")
      fail(where_of("quant.mode") ? "quant.mode" : "dist.shard",
           fmt::format("quant.mode = {} is not supported with dist.shard = zero3", c.model.quant_mode));
    if (where_of("dist.bucket_mb"))
      fail("dist.bucket_mb",
           "sizes the gradient all-reduce buckets of replicated data parallel; with dist.shard = zero3 each unit's "
           "gradients are reduce-scattered as its backward ends, so it would do nothing");
  }
  if (c.train.remat == "full" && c.model.quant_mode == "fp8" && c.model.fp8_scaling == "delayed")
    fail("train.remat",
         "train.remat = full with fp8's delayed scaling: the recomputed forward would append each site's amax to "
         "its history a second time (use quant.fp8_scaling = current)");
}

// Applies the settings in order (preset first) and validates before anything is allocated.
RunConfig resolve(RunConfig config, const std::vector<Setting>& settings) {
  for (const auto& s : settings)
    if (s.key == "model.preset") assign(config, *find_key(s.key), s);
  auto where_of = [&](const std::string& key) {
    std::string where = "preset " + config.model.preset;
    for (const auto& s : settings)
      if (s.key == key) where = s.where;
    return where;
  };
  try {
    config.model = preset_config(config.model.preset);
  } catch (const ModelConfigError& e) {
    throw ConfigError(where_of("model.preset"), "model.preset", std::string(e.what()).substr(e.key().size() + 2));
  }
  for (const auto& s : settings)
    if (s.key != "model.preset") assign(config, *find_key(s.key), s);
  try {
    validate(config.model);
  } catch (const ModelConfigError& e) {
    throw ConfigError(where_of(e.key()), e.key(), std::string(e.what()).substr(e.key().size() + 2));
  }
  const auto positive = [&](const char* key, int64_t v) {
    if (v <= 0) throw ConfigError(where_of(key), key, fmt::format("must be a positive integer, got {}", v));
  };
  const auto non_negative = [&](const char* key, double v) {
    if (!(v >= 0)) throw ConfigError(where_of(key), key, fmt::format("must be >= 0, got {}", v));
  };
  positive("train.steps", config.train.steps);
  positive("train.batch", config.train.batch);
  positive("train.seq_len", config.train.seq_len);
  positive("train.grad_accum", config.train.grad_accum);
  positive("measure.repeats", config.measure.repeats);
  positive("dist.nproc", config.dist.nproc);
  // Upper bounds too: both become integers (bytes, a std::chrono duration), and
  // an infinite timeout cast to one is undefined (it came out negative).
  if (!(config.dist.bucket_mb > 0 && config.dist.bucket_mb <= 1e6))
    throw ConfigError(where_of("dist.bucket_mb"), "dist.bucket_mb",
                      fmt::format("must be > 0 and at most 1e6, got {}", config.dist.bucket_mb));
  if (!(config.dist.timeout_s >= 1 && config.dist.timeout_s <= 1e6))
    throw ConfigError(where_of("dist.timeout_s"), "dist.timeout_s",
                      fmt::format("must be in [1, 1e6] seconds, got {}", config.dist.timeout_s));
  positive("train.eval_batches", config.train.eval_batches);
  non_negative("train.warmup_steps", static_cast<double>(config.train.warmup_steps));
  non_negative("train.eval_every", static_cast<double>(config.train.eval_every));
  non_negative("train.checkpoint_every", static_cast<double>(config.train.checkpoint_every));
  non_negative("measure.warmup_steps", static_cast<double>(config.measure.warmup_steps));
  non_negative("train.clip", config.train.clip);
  non_negative("requires.memory_gb", config.needs.memory_gb);
  non_negative("measure.parity_tolerance", config.measure.parity_tolerance);
  if (!(config.train.lr > 0)) throw ConfigError(where_of("train.lr"), "train.lr", "must be > 0");
  check_choice(config, settings, "train.optimizer", config.train.optimizer, {"adamw", "sgd", "muon"});
  check_choice(config, settings, "train.schedule", config.train.schedule, {"cosine", "linear", "constant"});
  check_choice(config, settings, "train.dtype", config.train.dtype, {"fp32", "bf16"});
  check_choice(config, settings, "data.source", config.data.source, {"synthetic", "shard"});
  check_choice(config, settings, "train.remat", config.train.remat, {"none", "full"});
  check_choice(config, settings, "dist.shard", config.dist.shard, {"none", "zero3"});
  check_combinations(config, settings);
  std::vector<std::string> devices{"any"};  // or one of the registered device kinds
  devices.insert(devices.end(), device::kind_names().begin(), device::kind_names().end());
  check_choice(config, settings, "requires.device", config.needs.device, devices);
  if (config.data.source == "shard" && config.data.path.empty())
    throw ConfigError(where_of("data.source"), "data.path", "data.source = shard needs data.path");
  return config;
}

}  // namespace

std::vector<KeyDoc> config_keys() {
  std::vector<KeyDoc> out;
  for (const auto& s : key_table()) out.push_back({s.key, type_name(s.field), s.doc});
  return out;
}

RunConfig load_config(const std::string& case_file, const std::vector<std::string>& overrides, bool reduced) {
  RunConfig config;
  config.case_file = case_file;
  config.case_name = fs::path(case_file).stem().string();
  config.overrides = overrides;
  toml::table root;
  try {
    root = toml::parse_file(case_file);
  } catch (const toml::parse_error& e) {
    const auto& where = e.source();
    throw ConfigError(fmt::format("{}:{}", case_file, where.begin.line), "(syntax)", std::string(e.description()));
  }
  auto settings = settings_from_toml(case_file, root, config);
  if (reduced && !config.reduced_overrides.empty()) {
    config.reduced = true;
    auto smaller = settings_from_overrides(config.reduced_overrides);
    for (auto& s : smaller) s.where = case_file + " [reduced]";
    settings.insert(settings.end(), smaller.begin(), smaller.end());
  }
  const auto cli = settings_from_overrides(overrides);
  settings.insert(settings.end(), cli.begin(), cli.end());
  return resolve(std::move(config), settings);
}

RunConfig preset_run_config(const std::string& preset, const std::vector<std::string>& overrides) {
  RunConfig config;
  config.overrides = overrides;
  std::vector<Setting> settings = {{"model.preset", "--preset", nullptr, preset}};
  const auto cli = settings_from_overrides(overrides);
  settings.insert(settings.end(), cli.begin(), cli.end());
  return resolve(std::move(config), settings);
}

std::string config_json(const RunConfig& config) {
  nlohmann::ordered_json j;
  RunConfig copy = config;
  for (const auto& spec : key_table()) std::visit([&](auto field) { j[spec.key] = field(copy); }, spec.field);
  j["case"] = config.case_name;
  j["overrides"] = config.overrides;
  j["reduced"] = config.reduced;
  if (config.reduced) j["reduced_overrides"] = config.reduced_overrides;
  if (!config.thresholds.empty()) j["thresholds"] = config.thresholds;
  for (const auto& [name, spec] : config.externals)
    if (spec.where.rfind("built in", 0) != 0) j["external"][name] = {{"command", spec.command}, {"format", spec.format}};
  return j.dump();
}

std::string cases_dir() {
  if (const char* env = std::getenv("TWINBENCH_CASES"); env && *env) return env;
  if (fs::is_directory("cases")) return "cases";
  return source_dir() + "/cases";
}

std::string find_case_file(const std::string& name) {
  if (fs::is_regular_file(name)) return name;
  for (const auto& candidate : {cases_dir() + "/" + name, cases_dir() + "/" + name + ".toml"})
    if (fs::is_regular_file(candidate)) return candidate;
  std::string known;
  for (const auto& f : list_case_files()) known += (known.empty() ? "" : ", ") + fs::path(f).stem().string();
  throw ConfigError("--case", name, fmt::format("no such case file (cases in {}: {})", cases_dir(), known));
}

std::vector<std::string> list_case_files() {
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cases_dir(), ec))
    if (e.path().extension() == ".toml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace twinbench
