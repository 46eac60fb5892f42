// The functional-stateless implementation (JAX/Linen style): parameters are a plain
// struct of tensors in canonical layout, and forward/loss are pure functions that
// receive everything they use (constants, mode, dropout key) as arguments.
// Shapes: B batch, S sequence, d width, H heads, KV kv heads, hd head dim, V vocab.
#pragma once

#include <torch/torch.h>

#include <string>
#include <utility>
#include <vector>

#include "models/config.h"
#include "models/ops.h"
#include "models/units.h"

namespace twinbench::functional {

struct LayerParams {
  torch::Tensor attn_norm;  // [d]
  torch::Tensor query;      // [d, H, hd]
  torch::Tensor key;        // [d, KV, hd]
  torch::Tensor value;      // [d, KV, hd]
  torch::Tensor out;        // [H, hd, d]
  torch::Tensor mlp_norm;   // [d]
  torch::Tensor wi_0;       // [d, mlp]
  torch::Tensor wi_1;       // [d, mlp]
  torch::Tensor wo;         // [mlp, d]
};

struct Params {
  torch::Tensor embedding;  // [V, d]
  std::vector<LayerParams> layers;
  torch::Tensor final_norm;  // [d]
  torch::Tensor logits;      // [d, V]
};

// Every parameter field with its canonical name, in canonical order. The functional
// layout *is* the canonical one, so this is the whole name mapping.
std::vector<std::pair<std::string, torch::Tensor*>> named_fields(Params& params);

// Everything forward() uses besides the parameters.
struct ForwardArgs {
  const ModelConfig& config;
  const ops::RopeTable& rope;  // covering at least S positions
  const torch::Tensor& mask;   // causal mask covering at least [S, S]
  bool training = false;
  ops::DropoutKey dropout_key{};  // used only when training with dropout > 0
  quant::QuantContext quant{};    // int8/fp8 projections; fp8 scaling state passed in, not owned
  // How each shard unit runs (models/units.h): null = on `params` as they are;
  // else its parameters come from the runner's source (recomputed, or gathered
  // from shards) and `params` may hold none.
  const units::Runner* units = nullptr;
};

// tokens [B, S] int64 -> logits [B, S, V]. Each unit (embedding, layer, head) is
// one pure function of its input and its parameters, handed to run_unit().
torch::Tensor forward(const Params& params, const torch::Tensor& tokens, const ForwardArgs& args);
// Mean next-token cross-entropy of forward(tokens) against targets [B, S].
torch::Tensor loss(const Params& params, const torch::Tensor& tokens, const torch::Tensor& targets,
                   const ForwardArgs& args);

}  // namespace twinbench::functional
