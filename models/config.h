// Model configuration: the MaxText "llama2" decoder's shape, the named presets,
// shape validation and the canonical parameter list. No LibTorch here, so that
// `twinbench plan` can reason about 8B-parameter models without allocating them.
//
// Shape legend used throughout models/:
//   B batch, S sequence, d model width, H query heads, KV key/value heads,
//   hd head dim, mlp MLP width, V vocabulary, L layers.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace twinbench {

struct ModelConfig {
  std::string preset = "tiny";
  int64_t d_model = 0;    // d
  int64_t layers = 0;     // L
  int64_t heads = 0;      // H
  int64_t kv_heads = 0;   // KV (grouped-query attention when KV < H)
  int64_t head_dim = 0;   // hd
  int64_t mlp_dim = 0;    // mlp
  int64_t vocab = 0;      // V
  double rope_base = 10000.0;
  double eps = 1e-5;
  double dropout = 0.0;   // after attention output and after the MLP
  std::string quant_mode = "none";      // none | int8 | fp8: every dense matmul (config key quant.mode)
  std::string fp8_scaling = "delayed";  // current | delayed (quant.fp8_scaling)
};

// A shape or value that cannot make a model. `key` is the dotted config key.
class ModelConfigError : public std::runtime_error {
 public:
  ModelConfigError(std::string key, const std::string& message)
      : std::runtime_error(key + ": " + message), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// Names of the built-in presets: tiny, small, 1b, 8b.
std::vector<std::string> preset_names();
// The preset's full configuration; throws ModelConfigError on an unknown name.
ModelConfig preset_config(const std::string& name);
// Throws ModelConfigError naming the first offending key (before any allocation).
void validate(const ModelConfig& config);

// One trainable tensor in MaxText's canonical (unscanned) naming and layout.
// Kernels are stored [in..., out...]; `in_dims` says how many leading dims are
// inputs, which is what native [out, in] layouts are transposed against.
struct ParamSpec {
  enum class Init { Embedding, Kernel, Ones };
  std::string name;           // e.g. decoder.layers.3.self_attention.query.kernel
  std::vector<int64_t> shape;
  int in_dims = 0;            // 0 for non-kernels
  Init init = Init::Kernel;
  int64_t numel() const;
  int64_t fan_in() const;     // product of the input dims
};

// Every trainable tensor in canonical order (embedding, layers, norm, logits).
std::vector<ParamSpec> canonical_params(const ModelConfig& config);
int64_t param_count(const ModelConfig& config);

// Shard units (models/units.h): 0 the token embedding, 1..L the decoder layers,
// L+1 the final norm with the logits. Here, without LibTorch, for the cost model.
namespace units {
int64_t count(int64_t layers);
// The unit a canonical parameter belongs to (std::logic_error for a name of none).
int64_t unit_of(const std::string& canonical_name, int64_t layers);
}  // namespace units

// Canonical names of one layer's tensors, shared by every implementation's mapping.
namespace canonical {
std::string layer_prefix(int64_t layer);
inline constexpr const char* kEmbedding = "token_embedder.embedding";
inline constexpr const char* kFinalNorm = "decoder.decoder_norm.scale";
inline constexpr const char* kLogits = "decoder.logits_dense.kernel";
inline constexpr const char* kAttnNorm = "pre_self_attention_layer_norm.scale";
inline constexpr const char* kQuery = "self_attention.query.kernel";
inline constexpr const char* kKey = "self_attention.key.kernel";
inline constexpr const char* kValue = "self_attention.value.kernel";
inline constexpr const char* kOut = "self_attention.out.kernel";
inline constexpr const char* kMlpNorm = "post_self_attention_layer_norm.scale";
inline constexpr const char* kWi0 = "mlp.wi_0.kernel";
inline constexpr const char* kWi1 = "mlp.wi_1.kernel";
inline constexpr const char* kWo = "mlp.wo.kernel";
}  // namespace canonical

}  // namespace twinbench
