// The fully resolved configuration of one run: typed defaults, case files (TOML),
// and `key=value` command-line overrides, with errors that name file, line and key.
// Key names are a public contract (docs/cli.md, DESIGN.md "Names users script against").
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "variants/external_spec.h"
#include "models/config.h"

namespace twinbench {

struct TrainConfig {
  int64_t steps = 20;
  int64_t batch = 4;  // per device, like MaxText's per_device_batch_size
  int64_t seq_len = 64;
  int64_t grad_accum = 1;
  std::string optimizer = "adamw";  // adamw | sgd | muon
  double lr = 1e-3;
  int64_t warmup_steps = 0;
  std::string schedule = "cosine";  // cosine | linear | constant
  std::string dtype = "fp32";       // fp32 | bf16 (compute dtype; master weights stay fp32)
  double clip = 1.0;                // global grad-norm clip, 0 = off
  int64_t seed = 0;
  int64_t eval_every = 0;        // 0 = only at the end
  int64_t checkpoint_every = 0;  // 0 = never
  int64_t eval_batches = 2;      // held-out batches per evaluation
  std::string checkpoint_dir = "checkpoints";
  std::string resume_from;       // checkpoint file to continue from ("" = fresh start)
  // Activation recompute: none | full (each shard unit keeps only its input and
  // recomputes its forward in backward: models/units.h).
  std::string remat = "none";
};

struct DataConfig {
  std::string source = "synthetic";  // synthetic | shard
  std::string path;                  // token shard for source = shard
};

struct MeasureConfig {
  int64_t warmup_steps = 2;  // leading steps excluded from steady-state statistics
  int64_t repeats = 1;
  double parity_tolerance = 1e-5;  // max relative loss difference between implementations
};

struct DistConfig {
  int64_t nproc = 1;  // data-parallel worker processes (devices)
  double bucket_mb = 25;  // gradient all-reduce bucket size (PyTorch DDP's default)
  double timeout_s = 300;  // rendezvous and each collective
  // none: replicated data parallel (every rank holds the whole model); zero3:
  // parameters, gradients and optimizer state sharded over the ranks
  // (harness/run/dist/zero3.h).
  std::string shard = "none";
};

struct Requirements {
  std::string device = "any";  // any | cpu | cuda
  double memory_gb = 0;        // 0 = use the plan's estimate
};

struct RunConfig {
  std::string case_name;    // e.g. "01_base"; empty for --preset runs
  std::string case_file;    // path it came from, if any
  std::string description;  // free text from the case file
  ModelConfig model = preset_config("tiny");
  TrainConfig train;
  DataConfig data;
  MeasureConfig measure;
  DistConfig dist;
  Requirements needs;  // TOML section [requires]
  std::vector<std::string> overrides;  // the key=value strings applied, as given
  // The case's [reduced] section as key=value strings: a smaller, explicitly chosen
  // form for hosts where the full case does not fit (e.g. 06_1b on a 24 GiB CPU).
  std::vector<std::string> reduced_overrides;
  bool reduced = false;  // whether they were applied (recorded with the run)
  // The case's [thresholds] section: metric name -> verdict threshold, overriding
  // the metric catalogue's defaults (recorded with the run, read by the reports),
  // and where each came from ("cases/x.toml:12") for metrics::check_thresholds.
  std::map<std::string, double> thresholds;
  std::map<std::string, std::string> threshold_sources;
  // External variants by name: the built-in `eager` plus the case's
  // [external.NAME] sections (variants/external_spec.h, docs/external.md).
  std::map<std::string, ExternalSpec> externals = builtin_externals();
};

// Where a bad value came from: "cases/x.toml:7" or "command line".
class ConfigError : public std::runtime_error {
 public:
  ConfigError(const std::string& where, const std::string& key, const std::string& message);
  const std::string& where() const { return where_; }
  const std::string& key() const { return key_; }

 private:
  std::string where_, key_;
};

// Every documented key with its type name and meaning, in table order.
struct KeyDoc {
  std::string key, type, doc;
};
std::vector<KeyDoc> config_keys();

// Defaults + model preset + the case file (+ its [reduced] section when `reduced`)
// + overrides, then validated. Throws ConfigError.
RunConfig load_config(const std::string& case_file, const std::vector<std::string>& overrides,
                      bool reduced = false);
// Defaults + the named preset + overrides (no case file).
RunConfig preset_run_config(const std::string& preset, const std::vector<std::string>& overrides);

// The resolved configuration as a JSON object text {"model.d_model": 512, ...}.
std::string config_json(const RunConfig& config);

// Case lookup: an existing path, or NAME / NAME.toml in the cases directory
// ($TWINBENCH_CASES, else ./cases, else the source tree's cases/).
std::string cases_dir();
std::string find_case_file(const std::string& name_or_path);
std::vector<std::string> list_case_files();

}  // namespace twinbench
