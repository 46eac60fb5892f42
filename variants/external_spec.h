// An external variant: a trainer twinbench runs as a child process and reads
// the steps of from its stdout (docs/external.md). Declared by a case's
// `[external.NAME]` section, or built in (`eager`, `compiled`, `eager-debian`,
// `linen`, `nnx`: variants/eager/train.py and variants/flax_decoder/train.py,
// declared in variants/external_builtins.cpp beside the C++ implementations).
// Plain data; the executor that runs it is harness/run/exec/external.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace twinbench {

struct ExternalSpec {
  std::string name;
  std::vector<std::string> command;  // argv, never a shell; "{source_dir}" / "{case_dir}" expanded
  std::string cwd;                   // "" = twinbench's own; relative = to the case file's folder
  std::vector<std::pair<std::string, std::string>> env;  // on top of twinbench's environment
  std::string format = "jsonl";      // a log format choice of harness/logs/formats.h's table ("NAME[:ARGUMENT]")
  std::string format_where;          // where `format` was set ("cases/x.toml:14"), for its check
  double timeout_s = 3600;           // the whole run's wall time; then killed and failed
  int64_t params = 0;                // expected parameter count; 0 = the case's when same_model, else unchecked
  // Trains twinbench's own model: twinbench writes the canonical initial
  // weights and the token batches, and the parameter count must be the case's.
  bool same_model = false;
  int64_t max_output_bytes = int64_t{64} << 20;  // stdout beyond this: failed (flooding)
  std::string where;                 // "cases/x.toml:12" or "built in"
  std::string missing_hint;          // added to "command not found" (how to install the interpreter)
};

// The folder twinbench reads its own files from (the built-in trainers, the
// cases as a last resort, "{source_dir}" in case files): $TWINBENCH_SOURCE_DIR,
// else the source tree the binary was built from. A relocated binary (the GPU
// kit, docs/gpu.md) points it at the files it carries.
std::string source_dir();

// The external variants every config has without a case section: eager,
// compiled, eager-debian, linen and nnx (docs/external.md; external_builtins.cpp).
std::map<std::string, ExternalSpec> builtin_externals();

}  // namespace twinbench
