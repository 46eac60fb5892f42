// The case runner (see runner.h).
#include "harness/run/runner.h"

#include <fmt/format.h>

#include "harness/base/interrupt.h"
#include "harness/run/dist/world.h"
#include "harness/run/memory.h"
#include "harness/run/plan.h"
#include "models/torch_compat.h"

namespace twinbench {

namespace {

std::string device_name(const torch::Device& device) {
  return device.is_cuda() ? compat::cuda_device_name(device) : cpu_name();
}

store::RunRecord run_record(const RunConfig& config, const std::string& variant_name, int repeat,
                            const Provenance& prov, const RunnerOptions& o) {
  store::RunRecord record;
  record.group_id = o.group_id;
  record.case_name = case_label(config);
  record.variant = variant_name;
  record.repeat_index = repeat;
  record.config_json = config_json(config);
  record.provenance_json = provenance_json(prov);
  record.git_commit = prov.git_commit;
  record.git_branch = prov.git_branch;
  record.device_name = prov.device_name;
  record.world_size = prov.world_size;
  return record;
}

RunOutcome run_one(const RunConfig& config_in, const std::string& variant_name, int repeat, const RunnerOptions& o) {
  RunConfig config = config_in;
  if (o.world) config.dist.nproc = o.world->size();  // the job's size is the truth
  if (o.repeat_index >= 0) repeat = o.repeat_index;
  RunOutcome out{"", case_label(config), variant_name, repeat, RunStatus::running, "", std::nullopt, {}};
  Provenance prov = collect_provenance(o.labels);
  prov.libtorch_version = compat::torch_version();
  prov.device_name = device_name(o.device);
  const bool launches = config.dist.nproc > 1 && !o.world;
  // Launched workers share this process's cores out between them.
  const int threads = launches ? std::max(1, at::get_num_threads() / static_cast<int>(config.dist.nproc))
                               : at::get_num_threads();
  prov.threads = threads;
  prov.world_size = static_cast<int>(config.dist.nproc);
  if (config.dist.nproc > 1) prov.dist_backend = o.world ? o.world->backend() : (o.device.is_cuda() ? "nccl" : "gloo");
  if (config.model.quant_mode != "none") prov.quant_backend = "emulated";
  const store::RunRecord record = run_record(config, variant_name, repeat, prov, o);

  if (const auto reason = skip_reason(config); !reason.empty()) {
    out.status = RunStatus::skipped;
    out.reason = reason;
    if (o.store) out.run_id = o.store->record_skipped(record, reason);
    return out;
  }
  return executor_for(config, o)->execute({config, record, out, threads}, o);
}

}  // namespace

std::string case_label(const RunConfig& c) { return c.case_name.empty() ? "preset:" + c.model.preset : c.case_name; }

std::string skip_reason(const RunConfig& c) {
  if (c.needs.device == "cuda" && !torch::cuda::is_available()) return "requires a CUDA device; none is available";
  const Plan plan = make_plan(c, 1);
  if (!plan.fits)
    return fmt::format("needs an estimated {:.1f} GiB (plan: weights {:.1f}, grads {:.1f}, optimizer {:.1f}, "
                       "activations {:.1f}), this host has {:.1f} GiB",
                       plan.required_bytes / double(1LL << 30), plan.memory.weights / double(1LL << 30),
                       plan.memory.gradients / double(1LL << 30), plan.memory.optimizer / double(1LL << 30),
                       plan.memory.activations / double(1LL << 30), plan.device_capacity_bytes / double(1LL << 30));
  return "";
}

std::vector<RunOutcome> run_all(const std::vector<RunConfig>& configs, const std::vector<std::string>& variants,
                                const RunnerOptions& options) {
  std::vector<RunOutcome> outcomes;
  for (const auto& config : configs)
    for (int repeat = 0; repeat < config.measure.repeats; ++repeat)
      for (const auto& variant : variants) {
        if (stop_requested()) return outcomes;
        outcomes.push_back(run_one(config, variant, repeat, options));
      }
  return outcomes;
}

}  // namespace twinbench
