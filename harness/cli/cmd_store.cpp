// Commands around the store that do not train: `twinbench runs` (list stored runs,
// recovering stale ones) and `twinbench calibrate` (matmul peak for MFU).
#include <fmt/format.h>

#include <iostream>
#include <map>
#include <nlohmann/json.hpp>

#include "harness/run/calibrate.h"
#include "harness/run/datasheet.h"
#include "harness/run/device_choice.h"
#include "models/device/runtime.h"
#include "harness/cli/common.h"
#include "harness/base/provenance.h"
#include "harness/store/store.h"

namespace twinbench::cli {

void add_runs_command(CLI::App& app, int& exit_code) {
  struct Opts {
    std::string db = store::default_location();
    std::string group, case_name, variant, status;
    int64_t limit = 20;
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("runs", "list stored runs, newest first (marks runs of dead processes interrupted)");
  cmd->add_option("--db", o->db, kDbHelp);
  cmd->add_option("--group", o->group, "only this group id");
  cmd->add_option("--case", o->case_name, "only this case");
  cmd->add_option("--variant", o->variant, "only this implementation");
  cmd->add_option("--status", o->status, "only this status");
  cmd->add_option("--limit", o->limit, "at most this many (0 = all)");
  cmd->add_flag("--json", o->json, "JSON list on stdout");
  cmd->callback([o, &exit_code] {
    // Listing creates nothing: a store that does not exist is an error.
    store::Store db = open_existing_store(o->db);
    try {
      const int recovered = db.recover_stale_runs();
      if (recovered > 0)
        std::cerr << fmt::format("{}: finished {} stale run(s) left running by processes that are gone\n",
                                 db.path(), recovered);
    } catch (const store::StoreError& e) {
      // A reader (a read-only role or file) still lists; the runs stay as they are.
      if (e.fault() != store::StoreFault::kPermission) throw;
      std::cerr << fmt::format("twinbench: warning: stale runs not recovered (the store is read-only here): {}\n",
                               e.what());
    }
    store::RunFilter filter;
    if (!o->group.empty()) filter.group_id = o->group;
    if (!o->case_name.empty()) filter.case_name = o->case_name;
    if (!o->variant.empty()) filter.variant = o->variant;
    if (!o->status.empty()) filter.status = status_from_string(o->status);
    if (o->limit > 0) filter.limit = o->limit;
    const auto runs = db.runs(filter);
    // What is shown of them, a batch of runs per statement.
    std::vector<std::string> ids;
    for (const auto& r : runs) ids.push_back(r.run_id);
    auto metrics_of = db.metrics_of(ids);
    const auto step_counts = o->json ? db.step_counts(ids) : std::map<std::string, int64_t>{};
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    if (!o->json)  // the group is what `report pair|nway --group` takes
      std::cout << fmt::format("{:<36}  {:<36}  {:<20} {:<10} {:<11} {:<24}  {}\n", "RUN", "GROUP", "CASE", "VARIANT",
                               "STATUS", "STARTED", "REASON");
    for (const auto& r : runs) {
      const auto& metrics = metrics_of[r.run_id];
      auto metric = [&](const char* name) -> nlohmann::json {
        const auto it = metrics.find(name);
        return it != metrics.end() && it->second ? nlohmann::json(*it->second) : nlohmann::json(nullptr);
      };
      if (o->json) {
        nlohmann::ordered_json j;
        j["run_id"] = r.run_id;
        j["group_id"] = r.group_id;
        j["case"] = r.case_name;
        j["variant"] = r.variant;
        j["repeat"] = r.repeat_index;
        j["status"] = std::string(to_string(r.status));
        j["reason"] = r.reason;
        j["started_at"] = r.started_at;
        j["git_commit"] = r.git_commit;
        j["git_branch"] = r.git_branch;
        const auto count = step_counts.find(r.run_id);
        j["steps"] = count == step_counts.end() ? 0 : count->second;
        j["final_loss"] = metric("final_loss");
        j["step_time_mean_s"] = metric("step_time_mean_s");
        list.push_back(j);
      } else {
        std::cout << fmt::format("{:<36}  {:<36}  {:<20} {:<10} {:<11} {:<24}  {}\n", r.run_id, r.group_id, r.case_name,
                                 r.variant, to_string(r.status), r.started_at, r.reason);
      }
    }
    if (o->json) std::cout << list.dump(2) << "\n";
    exit_code = kExitOk;
  });
}

void add_calibrate_command(CLI::App& app, int& exit_code) {
  struct Opts {
    std::string db = store::default_location();
    std::string dtypes;  // "" = calibration_dtypes(device)
    std::string device = "auto";
    bool json = false;
  };
  auto o = std::make_shared<Opts>();
  auto* cmd = app.add_subcommand("calibrate", "measure this machine's dense matmul peak per dtype and store it");
  cmd->add_option("--db", o->db, kDbHelp);
  cmd->add_option("--dtype", o->dtypes,
                  "dtypes to measure, comma-separated: fp32, bf16 (CPU default); bf16, tf32, fp32, fp8 (GPU; the "
                  "default, fp8 where the device has it)");
  cmd->add_option("--device", o->device, "auto (a CUDA device when there is one, else the CPU), cpu, cuda, cuda:N");
  cmd->add_flag("--json", o->json, "JSON list on stdout");
  cmd->callback([o, &exit_code] {
    check_device_request(o->device);
    RunConfig any;  // requires.device = any: the request alone decides
    const torch::Device device = choose_device(o->device, any).device;
    const std::string device_name = device::runtime_for(device).facts(device).name;
    store::Store db(o->db);
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    const auto dtypes = o->dtypes.empty() ? calibration_dtypes(device) : split_commas(o->dtypes);
    for (const auto& dtype : dtypes) {
      MatmulPeak peak;
      try {
        peak = measure_matmul_peak(dtype, device);
      } catch (const std::invalid_argument& e) {
        throw ConfigError("command line", "--dtype", e.what());
      }
      const auto sheet = datasheet_tflops(device_name, dtype);
      store::Calibration cal;
      cal.host = host_name();
      cal.device = device_name;
      cal.dtype = dtype;
      cal.peak_tflops = peak.tflops;
      nlohmann::json details{{"matmul_size", peak.size},
                             {"seconds_per_matmul", peak.seconds_per_matmul},
                             {"threads", at::get_num_threads()},
                             {"backend", peak.backend},
                             {"device", device.str()}};
      if (sheet) details["datasheet_tflops"] = *sheet;
      cal.details_json = details.dump();
      db.save_calibration(cal);
      if (o->json) {
        nlohmann::ordered_json row{{"dtype", dtype},
                                   {"peak_tflops", peak.tflops},
                                   {"matmul_size", peak.size},
                                   {"backend", peak.backend},
                                   {"device", device.str()},
                                   {"device_name", device_name}};
        row["datasheet_tflops"] = sheet ? nlohmann::ordered_json(*sheet) : nlohmann::ordered_json();
        list.push_back(row);
      } else {
        const std::string beside =
            sheet ? fmt::format("; datasheet {:.1f}, measured {:.0f}% of it", *sheet, 100 * peak.tflops / *sheet) : "";
        std::cout << fmt::format("{:<5} {:.3f} TFLOP/s  ({}^3 matmul through {}, {} threads, {}{})\n", dtype,
                                 peak.tflops, peak.size, peak.backend, at::get_num_threads(), device_name, beside);
      }
    }
    if (o->json) std::cout << list.dump(2) << "\n";
    exit_code = kExitOk;
  });
}

}  // namespace twinbench::cli
