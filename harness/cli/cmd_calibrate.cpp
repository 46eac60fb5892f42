// `twinbench calibrate`: this machine's dense matmul peak per dtype, stored for MFU.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "harness/base/provenance.h"
#include "harness/cli/common.h"
#include "harness/run/plan/calibrate.h"
#include "harness/run/plan/datasheet.h"
#include "harness/run/exec/device_choice.h"
#include "harness/store/store.h"
#include "models/device/runtime.h"

namespace twinbench::cli {

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
