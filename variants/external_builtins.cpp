// The built-in external implementations (variants/external_spec.h): PyTorch 2.x
// eager and torch.compile, the same eager trainer on Debian's PyTorch 1.13, and
// Flax Linen and NNX, each a Python trainer of this folder that trains
// twinbench's model from its canonical weights and batches.
#include "variants/external_spec.h"

#include <fmt/format.h>

#include <cstdlib>

namespace twinbench {

std::string source_dir() {
  if (const char* env = std::getenv("TWINBENCH_SOURCE_DIR"); env && *env) return env;
  return TWINBENCH_SOURCE_DIR;
}

std::map<std::string, ExternalSpec> builtin_externals() {
  // The project venv's Python (ci/venv.sh; the CMake cache variable
  // TWINBENCH_VENV_PYTHON) runs PyTorch 2.x and Flax; $TWINBENCH_PYTHON picks another.
  std::string venv_python = TWINBENCH_VENV_PYTHON;
  if (const char* env = std::getenv("TWINBENCH_PYTHON"); env && *env) venv_python = env;
  const std::string variants = source_dir() + "/variants/";
  const std::string venv_hint = fmt::format("{} comes from the project venv: run ci/venv.sh, or set TWINBENCH_PYTHON",
                                            venv_python);
  std::map<std::string, ExternalSpec> out;
  const auto add = [&](const std::string& name, const std::string& python, const std::string& script,
                       std::vector<std::string> args, const std::string& hint) {
    ExternalSpec spec;
    spec.name = name;
    spec.command = {python, variants + script};
    spec.command.insert(spec.command.end(), args.begin(), args.end());
    spec.same_model = true;  // twinbench's model: the canonical weights and the batches are handed over
    spec.where = fmt::format("built in (variants/{})", script);
    spec.missing_hint = hint;
    out[name] = spec;
  };
  // PyTorch 2.x eager and torch.compile (inductor) of the same model, from the venv.
  add("eager", venv_python, "eager/train.py", {}, venv_hint);
  add("compiled", venv_python, "eager/train.py", {"--compile"}, venv_hint);
  // The same eager trainer on Debian's python3-torch (LibTorch 1.13, the Debian build line's reference).
  add("eager-debian", "/usr/bin/python3", "eager/train.py", {}, "install python3-torch (ci/setup.sh)");
  // Flax Linen and Flax NNX (docs/frameworks.md), from the venv.
  add("linen", venv_python, "flax_decoder/train.py", {"--api", "linen"}, venv_hint);
  add("nnx", venv_python, "flax_decoder/train.py", {"--api", "nnx"}, venv_hint);
  return out;
}

}  // namespace twinbench
