// Presets, validation and the canonical parameter list (see config.h).
#include "models/config.h"

#include <fmt/format.h>

#include <cmath>

namespace twinbench {

namespace {

ModelConfig make(const char* name, int64_t d, int64_t L, int64_t H, int64_t KV, int64_t hd,
                 int64_t mlp, int64_t V, double rope_base) {
  ModelConfig c;
  c.preset = name;
  c.d_model = d;
  c.layers = L;
  c.heads = H;
  c.kv_heads = KV;
  c.head_dim = hd;
  c.mlp_dim = mlp;
  c.vocab = V;
  c.rope_base = rope_base;
  return c;
}

}  // namespace

std::vector<std::string> preset_names() { return {"tiny", "small", "1b", "8b"}; }

ModelConfig preset_config(const std::string& name) {
  // tiny: grouped-query (KV < H) and a byte-level vocabulary, a few seconds per test run.
  if (name == "tiny") return make("tiny", 64, 2, 4, 2, 16, 192, 256, 10000.0);
  if (name == "small") return make("small", 512, 4, 8, 8, 64, 1536, 8192, 10000.0);
  // MaxText's default decoder (1,104,218,112 params) and llama3.1-8b (8,030,261,248).
  if (name == "1b") return make("1b", 2048, 16, 16, 16, 128, 7168, 32000, 10000.0);
  if (name == "8b") return make("8b", 4096, 32, 32, 8, 128, 14336, 128256, 500000.0);
  std::string known;
  for (const auto& p : preset_names()) known += (known.empty() ? "" : ", ") + p;
  throw ModelConfigError("model.preset", fmt::format("unknown preset '{}' (known: {})", name, known));
}

void validate(const ModelConfig& c) {
  auto positive = [](const char* key, int64_t v) {
    if (v <= 0) throw ModelConfigError(key, fmt::format("must be a positive integer, got {}", v));
  };
  positive("model.d_model", c.d_model);
  positive("model.layers", c.layers);
  positive("model.heads", c.heads);
  positive("model.kv_heads", c.kv_heads);
  positive("model.head_dim", c.head_dim);
  positive("model.mlp_dim", c.mlp_dim);
  positive("model.vocab", c.vocab);
  if (c.heads % c.kv_heads != 0)
    throw ModelConfigError("model.kv_heads",
                           fmt::format("heads ({}) must be a multiple of kv_heads ({})", c.heads, c.kv_heads));
  if (c.head_dim % 2 != 0)
    throw ModelConfigError("model.head_dim",
                           fmt::format("must be even for rotate-half RoPE, got {}", c.head_dim));
  // Finite too: an infinite eps zeroes every normalised activation and the run
  // "completes" with a constant loss; an infinite RoPE base is NaN angles.
  if (!(c.rope_base > 1.0 && std::isfinite(c.rope_base)))
    throw ModelConfigError("model.rope_base", fmt::format("must be > 1 and finite, got {}", c.rope_base));
  if (!(c.eps > 0.0 && std::isfinite(c.eps)))
    throw ModelConfigError("model.eps", fmt::format("must be > 0 and finite, got {}", c.eps));
  if (c.quant_mode != "none" && c.quant_mode != "int8" && c.quant_mode != "fp8")
    throw ModelConfigError("quant.mode", fmt::format("'{}' is not one of: none, int8, fp8", c.quant_mode));
  if (c.fp8_scaling != "current" && c.fp8_scaling != "delayed")
    throw ModelConfigError("quant.fp8_scaling", fmt::format("'{}' is not one of: current, delayed", c.fp8_scaling));
  if (!(c.dropout >= 0.0 && c.dropout < 1.0))
    throw ModelConfigError("model.dropout", fmt::format("must be in [0, 1), got {}", c.dropout));
  // Guard products used for allocation sizes against int64 overflow.
  const double biggest = static_cast<double>(c.vocab) * static_cast<double>(c.d_model);
  const double widest = static_cast<double>(c.d_model) * static_cast<double>(c.mlp_dim);
  if (biggest > 9.0e15 || widest > 9.0e15)
    throw ModelConfigError("model.d_model", "shape products overflow 64-bit sizes");
}

int64_t ParamSpec::numel() const {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

int64_t ParamSpec::fan_in() const {
  int64_t n = 1;
  for (int i = 0; i < in_dims; ++i) n *= shape[static_cast<size_t>(i)];
  return n;
}

std::string canonical::layer_prefix(int64_t layer) { return fmt::format("decoder.layers.{}.", layer); }

std::vector<ParamSpec> canonical_params(const ModelConfig& c) {
  using Init = ParamSpec::Init;
  const int64_t d = c.d_model, H = c.heads, KV = c.kv_heads, hd = c.head_dim, mlp = c.mlp_dim;
  std::vector<ParamSpec> specs;
  specs.push_back({canonical::kEmbedding, {c.vocab, d}, 0, Init::Embedding});
  for (int64_t l = 0; l < c.layers; ++l) {
    const std::string p = canonical::layer_prefix(l);
    specs.push_back({p + canonical::kAttnNorm, {d}, 0, Init::Ones});
    specs.push_back({p + canonical::kQuery, {d, H, hd}, 1, Init::Kernel});
    specs.push_back({p + canonical::kKey, {d, KV, hd}, 1, Init::Kernel});
    specs.push_back({p + canonical::kValue, {d, KV, hd}, 1, Init::Kernel});
    specs.push_back({p + canonical::kOut, {H, hd, d}, 2, Init::Kernel});
    specs.push_back({p + canonical::kMlpNorm, {d}, 0, Init::Ones});
    specs.push_back({p + canonical::kWi0, {d, mlp}, 1, Init::Kernel});
    specs.push_back({p + canonical::kWi1, {d, mlp}, 1, Init::Kernel});
    specs.push_back({p + canonical::kWo, {mlp, d}, 1, Init::Kernel});
  }
  specs.push_back({canonical::kFinalNorm, {d}, 0, Init::Ones});
  specs.push_back({canonical::kLogits, {d, c.vocab}, 1, Init::Kernel});
  return specs;
}

int64_t units::count(int64_t layers) { return layers + 2; }

int64_t units::unit_of(const std::string& name, int64_t layers) {
  if (name == canonical::kEmbedding) return 0;
  if (name == canonical::kFinalNorm || name == canonical::kLogits) return layers + 1;
  const std::string root = "decoder.layers.";
  if (name.rfind(root, 0) == 0) {
    const auto dot = name.find('.', root.size());
    const int64_t layer = std::stoll(name.substr(root.size(), dot - root.size()));
    if (layer >= 0 && layer < layers) return layer + 1;
  }
  throw std::logic_error(fmt::format("{} belongs to no unit of a {}-layer decoder", name, layers));
}

int64_t param_count(const ModelConfig& c) {
  int64_t n = 0;
  for (const auto& s : canonical_params(c)) n += s.numel();
  return n;
}

}  // namespace twinbench
