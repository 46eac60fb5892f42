// Cost model of one training step, computed from the configuration alone:
// model FLOPs in MaxText's convention (docs/metrics.md) and an estimate of the
// training memory. Nothing here allocates tensors.
#pragma once

#include <cstdint>

#include "models/config.h"

namespace twinbench {

// Forward + backward FLOPs of one optimizer step on one device (per-device batch B,
// sequence S), split as MaxText prints it: weight matmuls vs causal attention.
struct FlopBreakdown {
  double weights = 0;    // 3 * (L * (FFN + QKV + Proj) + Emb)
  double attention = 0;  // 3 * L * Attn
  double total() const { return weights + attention; }
  double attention_fraction() const { return total() > 0 ? attention / total() : 0.0; }
};
FlopBreakdown model_flops_per_step(const ModelConfig& config, int64_t batch, int64_t seq_len);

// How training lays its state out over data-parallel devices.
struct MemoryLayout {
  int64_t devices = 1;     // data-parallel ranks
  bool sharded = false;    // dist.shard = zero3: each device holds a 1/devices slice of every parameter
                           // (padded to a multiple of devices), its gradient and its optimizer state
  bool recompute = false;  // train.remat = full: each unit keeps only its input (models/units.h)
  bool prefetch = false;   // sharded over native collectives: the next unit is gathered during this one
};

// Estimated peak training memory of one device, in bytes.
struct MemoryEstimate {
  int64_t weights = 0;      // fp32 master weights (sharded: this device's slices)
  int64_t gradients = 0;    // fp32 (sharded: slices)
  int64_t optimizer = 0;    // optimizer state (AdamW: 2 fp32 moments; sharded: slices)
  int64_t compute_weights = 0;  // bf16 mixed precision, replicated: the bf16 copies of the weights autocast casts
                                // for the forward and autograd keeps for the backward
  int64_t gathered = 0;     // sharded: the largest unit gathered whole (kernels in the compute dtype, the rest
                            // fp32) with its gradients and its fp32 reduce-scatter buffer (and the next unit's
                            // gather in flight with prefetch)
  int64_t activations = 0;  // saved for backward, incl. logits and log-softmax; with recompute the units'
                            // inputs plus the largest unit recomputed in its backward
  int64_t state() const { return weights + gradients + optimizer; }
  int64_t total() const { return weights + gradients + optimizer + compute_weights + gathered + activations; }
};
// `compute_bytes` is 4 for fp32 and 2 for bf16 mixed precision; `optimizer_states`
// is the number of fp32 tensors per parameter the optimizer keeps (AdamW 2, SGD 1).
// `fused_attention`: attention runs as one fused kernel (SDPA flash/memory-efficient
// on CUDA) that keeps no S x S probabilities for the backward.
MemoryEstimate training_memory(const ModelConfig& config, int64_t batch, int64_t seq_len,
                               int compute_bytes, int optimizer_states, bool fused_attention = false,
                               const MemoryLayout& layout = {});

}  // namespace twinbench
