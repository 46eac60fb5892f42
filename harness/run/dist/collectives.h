// The two collectives sharded data parallel is made of, over a World: gathering
// every rank's flat piece into one tensor, and reduce-scattering a flat tensor
// with SUM. Natively — one call each, left in flight so that the next unit's
// gather overlaps this unit's compute (NCCL: the device runtime's
// `tensor_collectives`) — or with what every backend has: a list all-gather
// into the output's rows, and an all-reduce of the whole input of which each
// rank keeps its own piece (Gloo; every backend of LibTorch 1.13). The sum is
// always SUM: the caller divides (Gloo has ignored other reduce ops).
#pragma once

#include <torch/torch.h>

#include <memory>

#include "harness/run/dist/world.h"

namespace twinbench::dist {

class FlatCollectives {
 public:
  FlatCollectives(World& world, bool native);
  World& world() const { return world_; }
  bool native() const { return native_; }

  // output [size * n] <- every rank's input [n], in rank order. Both contiguous, same dtype.
  std::unique_ptr<Pending> all_gather(torch::Tensor output, torch::Tensor input);
  // output [n] <- the sum over ranks of input [size * n]'s piece [rank * n, (rank + 1) * n).
  // `input` may be overwritten.
  std::unique_ptr<Pending> reduce_scatter_sum(torch::Tensor output, torch::Tensor input);

 private:
  World& world_;
  bool native_;
};

}  // namespace twinbench::dist
