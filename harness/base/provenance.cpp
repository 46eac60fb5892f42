// Provenance collection (see provenance.h).
#include "harness/base/provenance.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "harness/base/build_info.h"
#include "harness/base/hardware.h"
#include "harness/base/process_env.h"

namespace twinbench {

std::string cpu_name() { return cpu_model(); }

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

Provenance collect_provenance(const LabelOverrides& o) {
  Provenance p;
  const auto& b = build_info();
  p.git_commit = b.git_commit;
  p.git_branch = b.git_branch;
  p.git_dirty = b.git_dirty;
  auto pick = [&](const std::string& flag, const char* env, std::string& target) {
    const char* value = std::getenv(env);
    const std::string chosen = !flag.empty() ? flag : (value && *value ? value : "");
    if (chosen.empty()) return;
    target = chosen;
    p.labels_overridden = true;
  };
  pick(o.branch, "TWINBENCH_BRANCH", p.git_branch);
  pick(o.commit, "TWINBENCH_COMMIT", p.git_commit);
  const auto env = [](const char* name) { const char* v = std::getenv(name); return std::string(v ? v : ""); };
  p.omp_wait_policy = env("OMP_WAIT_POLICY");
  p.openblas_coretype = env("OPENBLAS_CORETYPE");
  p.malloc_keeps_freed = malloc_keeps_freed();
  if (const int looks = std::atoi(env("TWINBENCH_SEQUENTIAL_LOOKS").c_str()); looks > 0) p.sequential_looks = looks;
  {  // "3,4,6,8,12": increasing positive counts, else not recorded
    std::stringstream in(env("TWINBENCH_SEQUENTIAL_PLAN"));
    for (std::string item; std::getline(in, item, ',');) {
      const int n = std::atoi(item.c_str());
      if (n <= 0 || (!p.sequential_plan.empty() && n <= p.sequential_plan.back())) {
        p.sequential_plan.clear();
        break;
      }
      p.sequential_plan.push_back(n);
    }
  }
#if defined(__clang__)
  p.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  p.compiler = "gcc " __VERSION__;
#else
  p.compiler = "unknown";
#endif
  p.host = host_name();
  p.cpu_model = cpu_model();
  p.cpu_cores = cpu_cores();
  p.pid = static_cast<int64_t>(getpid());
  double load[1] = {0};
  if (getloadavg(load, 1) == 1) p.load_average = load[0];
  return p;
}

std::string provenance_json(const Provenance& p) {
  nlohmann::ordered_json j;
  j["git_commit"] = p.git_commit;
  j["git_branch"] = p.git_branch;
  j["git_dirty"] = p.git_dirty;
  j["labels_overridden"] = p.labels_overridden;
  j["libtorch_version"] = p.libtorch_version;
  j["compiler"] = p.compiler;
  j["device_name"] = p.device_name;
  j["threads"] = p.threads;
  j["world_size"] = p.world_size;
  if (!p.dist_backend.empty()) j["dist_backend"] = p.dist_backend;
  j["omp_wait_policy"] = p.omp_wait_policy;
  j["openblas_coretype"] = p.openblas_coretype;
  j["malloc_keeps_freed"] = p.malloc_keeps_freed;
  j["host"] = p.host;
  j["pid"] = p.pid;
  j["load_average"] = p.load_average;
  if (p.host_cores > 0) j["host_cores"] = p.host_cores;
  j["oversubscribed"] = p.oversubscribed;
  j["quant_backend"] = p.quant_backend;
  j["gemm_backend"] = p.gemm_backend;
  if (!p.gpu_name.empty()) {
    j["gpu_name"] = p.gpu_name;
    j["gpu_compute_capability"] = p.gpu_compute_capability;
    j["gpu_sm_count"] = p.gpu_sm_count;
    j["gpu_memory_bytes"] = p.gpu_memory_bytes;
    j["gpu_driver"] = p.gpu_driver;
    j["cuda_runtime"] = p.cuda_runtime;
    j["cudnn_version"] = p.cudnn_version;
    j["nccl_version"] = p.nccl_version;
  }
  j["device_kind"] = p.device_kind;
  if (p.sequential_looks > 0) j["sequential_looks"] = p.sequential_looks;
  if (!p.sequential_plan.empty()) j["sequential_plan"] = p.sequential_plan;
  if (!p.run_role.empty()) j["run_role"] = p.run_role;
  if (!p.pairing.empty()) j["pairing"] = p.pairing;
  j["cpu_model"] = p.cpu_model;
  j["cpu_cores"] = p.cpu_cores;
  if (!p.test_hooks.empty()) {
    nlohmann::ordered_json hooks = nlohmann::ordered_json::object();
    for (const auto& [variable, value] : p.test_hooks) hooks[variable] = value;
    j["test_hooks"] = hooks;
  }
  // Last, over every key above (GPU keys included): base/hardware.h.
  j["hardware_fingerprint"] = hardware_fingerprint(nlohmann::json::parse(j.dump())).id;
  return j.dump();
}

}  // namespace twinbench
