// Sharded parameters: slices, gathers, reduce-scatters (see shards.h).
#include "harness/run/dist/shards.h"

#include <fmt/format.h>

#include <cmath>
#include <stdexcept>
#include <utility>

namespace twinbench::dist {

struct ShardedParams::Param {
  int64_t unit = 0;
  int64_t numel = 0;   // n: the whole parameter
  int64_t slice = 0;   // s = ceil(n / size): each rank's piece (the last ones padded with zeros)
  int64_t offset = 0;  // in the unit's fp32 buffers (master, gradient)
  size_t group = 0;    // the unit's gather group (one per dtype)
  int64_t group_offset = 0;
  std::vector<int64_t> shape;  // native
  // The whole parameter while its unit is acquired (a leaf autograd differentiates),
  // and [size * slice] over the same storage: what the gather is copied into. Two
  // tensors on one storage, each with its own version counter, so that filling
  // the storage again does not look like an in-place change to a kept graph.
  torch::Tensor whole, padded;
  size_t bytes = 0;         // of the storage while filled
  torch::Tensor grad_view;  // [slice] of the unit's gradient buffer
};

struct ShardedParams::Unit {
  struct Group {
    at::ScalarType dtype = at::kFloat;
    int64_t size = 0;  // this rank's elements in the gather
    std::vector<size_t> params;
  };
  std::vector<size_t> params;
  int64_t size = 0;            // this rank's fp32 elements: the slices side by side
  torch::Tensor master, grad;  // [size] fp32
  std::vector<Group> groups;
  bool filled = false;
};

struct ShardedParams::Gather {
  std::vector<torch::Tensor> send, recv;  // per group: [group size], [world size * group size]
  std::vector<std::unique_ptr<Pending>> pending;  // destroyed first: waits before the buffers go
};

struct ShardedParams::Reduction {
  int64_t unit = 0;
  torch::Tensor out, send;  // [unit size], [world size * unit size]
  std::unique_ptr<Pending> pending;
};

namespace {

// A tensor over `storage` with its own TensorImpl (and so its own version counter).
torch::Tensor over(const c10::Storage& storage, const torch::TensorOptions& options, int64_t numel) {
  return torch::empty({0}, options).set_(storage, 0, {numel}, {1});
}

// The storage's memory goes; its tensors stay (FSDP's resize of the storage to zero).
void empty_storage(const torch::Tensor& t) {
  c10::StorageImpl* storage = t.storage().unsafeGetStorageImpl();
  storage->set_data_ptr_noswap(at::DataPtr(nullptr, t.device()));
  storage->set_nbytes(0);
}

void fill_storage(const torch::Tensor& t, size_t bytes) {
  c10::StorageImpl* storage = t.storage().unsafeGetStorageImpl();
  if (storage->nbytes() == bytes) return;
  storage->set_data_ptr_noswap(storage->allocator()->allocate(bytes));
  storage->set_nbytes(bytes);
}

// [n] -> [rows * cols] with zeros after n.
torch::Tensor padded_to(const torch::Tensor& flat, int64_t total) {
  const int64_t n = flat.numel();
  return n == total ? flat : torch::constant_pad_nd(flat, {0, total - n});
}

}  // namespace

ShardedParams::ShardedParams(World& world, const std::vector<ParamBinding>& bindings, int64_t layers,
                             const ShardOptions& options)
    : collectives_(world, options.native_collectives), options_(options), whole_(bindings) {
  torch::NoGradGuard no_grad;
  const int64_t size = world.size(), rank = world.rank();
  units_.resize(static_cast<size_t>(units::count(layers)));
  in_flight_.resize(units_.size());
  for (size_t i = 0; i < bindings.size(); ++i) {
    const ParamBinding& b = bindings[i];
    Param p;
    p.unit = units::unit_of(b.canonical_name, layers);
    p.numel = b.native.numel();
    p.slice = (p.numel + size - 1) / size;
    p.shape = b.native.sizes().vec();
    Unit& u = units_[static_cast<size_t>(p.unit)];
    p.offset = u.size;
    u.size += p.slice;
    const at::ScalarType dtype = b.in_dims > 0 ? options.compute_dtype : at::kFloat;
    size_t g = 0;
    while (g < u.groups.size() && u.groups[g].dtype != dtype) ++g;
    if (g == u.groups.size()) u.groups.push_back({dtype, 0, {}});
    p.group = g;
    p.group_offset = u.groups[g].size;
    u.groups[g].size += p.slice;
    u.groups[g].params.push_back(i);
    u.params.push_back(i);
    params_.push_back(std::move(p));
  }
  const auto device = bindings.front().native.device();
  const auto fp32 = torch::TensorOptions().dtype(torch::kFloat).device(device);
  for (auto& u : units_) {
    u.master = torch::zeros({u.size}, fp32);
    u.grad = torch::zeros({u.size}, fp32);
  }
  for (size_t i = 0; i < bindings.size(); ++i) {
    Param& p = params_[i];
    Unit& u = units_[static_cast<size_t>(p.unit)];
    const ParamBinding& b = bindings[i];
    // This rank's piece of the whole, flattened in native layout.
    const int64_t first = rank * p.slice, count = std::max<int64_t>(0, std::min(p.slice, p.numel - first));
    if (count > 0)
      u.master.narrow(0, p.offset, count).copy_(b.native.detach().reshape(-1).narrow(0, first, count));
    p.grad_view = u.grad.narrow(0, p.offset, p.slice).detach();
    auto slice = u.master.narrow(0, p.offset, p.slice).detach().requires_grad_(true);
    slice.mutable_grad() = p.grad_view;
    slices_.push_back({b.canonical_name, {p.slice}, b.native_name, slice, ParamBinding::Layout::Same, b.in_dims});
    // The whole parameter's tensors, their storage empty until acquired.
    const auto options_g = torch::TensorOptions().dtype(u.groups[p.group].dtype).device(device);
    const auto storage = torch::empty({size * p.slice}, options_g).storage();
    p.bytes = static_cast<size_t>(size * p.slice) * c10::elementSize(u.groups[p.group].dtype);
    p.padded = over(storage, options_g, size * p.slice);
    p.whole = over(storage, options_g, p.numel).view(p.shape).detach().requires_grad_(true);
    empty_storage(p.padded);
    // The model's own tensor gives its memory up: from now on the unit's body gets `whole`.
    torch::Tensor native = b.native;
    native.set_data(torch::empty({0}, native.options()));
  }
}

ShardedParams::~ShardedParams() = default;

int ShardedParams::world_size() const { return collectives_.world().size(); }

void ShardedParams::start_gather(int64_t unit) {
  torch::NoGradGuard no_grad;
  const Unit& u = units_[static_cast<size_t>(unit)];
  auto gather = std::make_unique<Gather>();
  for (const auto& group : u.groups) {
    const auto options = u.master.options().dtype(group.dtype);
    auto send = torch::empty({group.size}, options);
    for (size_t i : group.params) {
      const Param& p = params_[i];
      send.narrow(0, p.group_offset, p.slice).copy_(u.master.narrow(0, p.offset, p.slice));
    }
    auto recv = torch::empty({world_size() * group.size}, options);
    gather->pending.push_back(collectives_.all_gather(recv, send));
    gather->send.push_back(std::move(send));
    gather->recv.push_back(std::move(recv));
  }
  in_flight_[static_cast<size_t>(unit)] = std::move(gather);
}

void ShardedParams::copy_out(int64_t unit, Gather& gather) {
  torch::NoGradGuard no_grad;
  const Unit& u = units_[static_cast<size_t>(unit)];
  for (size_t g = 0; g < u.groups.size(); ++g) {
    gather.pending[g]->wait();
    const auto rows = gather.recv[g].view({world_size(), u.groups[g].size});
    for (size_t i : u.groups[g].params) {
      Param& p = params_[i];
      fill_storage(p.padded, p.bytes);
      p.padded.view({world_size(), p.slice}).copy_(rows.narrow(1, p.group_offset, p.slice));
    }
  }
}

std::vector<torch::Tensor> ShardedParams::acquire(int64_t unit, units::Pass pass) {
  Unit& u = units_.at(static_cast<size_t>(unit));
  if (!u.filled) {
    if (!in_flight_[static_cast<size_t>(unit)]) start_gather(unit);
    std::unique_ptr<Gather> gather = std::move(in_flight_[static_cast<size_t>(unit)]);
    copy_out(unit, *gather);
    u.filled = true;
  }
  // In flight, the next unit's gather overlaps this one's compute (the order is
  // the same on every rank: the units' order, forward or backward).
  if (collectives_.native()) {
    const int64_t next = pass == units::Pass::kForward ? unit + 1 : unit - 1;
    if (next >= 0 && next < static_cast<int64_t>(units_.size()) && !units_[static_cast<size_t>(next)].filled &&
        !in_flight_[static_cast<size_t>(next)])
      start_gather(next);
  }
  std::vector<torch::Tensor> out;
  for (size_t i : u.params) out.push_back(params_[i].whole);
  return out;
}

void ShardedParams::release(int64_t unit) {
  Unit& u = units_.at(static_cast<size_t>(unit));
  for (size_t i : u.params) empty_storage(params_[i].padded);
  u.filled = false;
}

void ShardedParams::accumulate(int64_t unit, std::vector<torch::Tensor> grads) {
  torch::NoGradGuard no_grad;
  const Unit& u = units_.at(static_cast<size_t>(unit));
  const int64_t size = world_size();
  auto reduction = std::make_unique<Reduction>();
  reduction->unit = unit;
  reduction->send = torch::zeros({size * u.size}, u.master.options());
  const auto rows = reduction->send.view({size, u.size});
  for (size_t k = 0; k < u.params.size(); ++k) {
    if (!grads[k].defined()) continue;  // no gradient: zeros take part
    const Param& p = params_[u.params[k]];
    const auto flat = grads[k].detach().to(torch::kFloat).reshape(-1);
    rows.narrow(1, p.offset, p.slice).copy_(padded_to(flat, size * p.slice).view({size, p.slice}));
    grads[k].reset();
  }
  reduction->out = torch::empty({u.size}, u.master.options());
  reduction->pending = collectives_.reduce_scatter_sum(reduction->out, reduction->send);
  if (collectives_.native()) {
    reductions_.push_back(std::move(reduction));
  } else {
    apply(*reduction);
  }
}

void ShardedParams::apply(Reduction& r) {
  torch::NoGradGuard no_grad;
  r.pending->wait();
  r.send.reset();
  Unit& u = units_[static_cast<size_t>(r.unit)];
  // The mean over ranks, as replicated data parallel takes it (sum, then times 1/size).
  r.out.mul_(1.0 / static_cast<double>(world_size()));
  for (size_t i : u.params) {
    // A zero_grad that set the gradient to none: the slice's view comes back, zeroed.
    auto& g = slices_[i].native.mutable_grad();
    if (!g.defined()) {
      g = params_[i].grad_view;
      g.zero_();
    }
  }
  u.grad.add_(r.out);
}

void ShardedParams::finish() {
  for (auto& r : reductions_) apply(*r);
  reductions_.clear();
}

torch::Tensor ShardedParams::gather(size_t i, const torch::Tensor& slice) {
  torch::NoGradGuard no_grad;
  const Param& p = params_.at(i);
  auto send = slice.detach().to(units_[static_cast<size_t>(p.unit)].master.device()).contiguous();
  if (send.numel() != p.slice)
    throw std::invalid_argument(fmt::format("{}: a slice of {} elements, expected {}", whole_[i].canonical_name,
                                            send.numel(), p.slice));
  auto recv = torch::empty({world_size() * p.slice}, send.options());
  collectives_.all_gather(recv, send)->wait();
  return recv.narrow(0, 0, p.numel).view(p.shape);
}

torch::Tensor ShardedParams::slice_of(size_t i, const torch::Tensor& whole) const {
  const Param& p = params_.at(i);
  const auto flat = whole.detach().reshape(-1);
  return padded_to(flat, world_size() * p.slice)
      .narrow(0, collectives_.world().rank() * p.slice, p.slice)
      .clone();
}

double ShardedParams::clip(double max_norm) {
  torch::NoGradGuard no_grad;
  finish();
  // Each parameter's squared norm summed over its slices on every rank.
  std::vector<torch::Tensor> squares;
  for (const auto& s : slices_) {
    const auto& g = s.native.grad();
    squares.push_back(g.defined() ? g.to(torch::kDouble).pow(2).sum()
                                  : torch::zeros({}, s.native.options().dtype(torch::kDouble)));
  }
  std::vector<torch::Tensor> summed{torch::stack(squares)};
  collectives_.world().start_sum(summed)->wait();
  const double norm = std::sqrt(summed[0].sum().item<double>());
  const double coef = std::min(1.0, max_norm / (norm + 1e-6));
  for (const auto& s : slices_) {
    torch::Tensor g = s.native.grad();
    if (g.defined()) g.mul_(static_cast<float>(coef));
  }
  return norm;
}

}  // namespace twinbench::dist
