// twinbench: entry point. Sets up threads, registers the subcommands and maps
// errors to the documented exit codes (docs/cli.md).
#include <fmt/format.h>

#include <iostream>
#include <thread>

#include "harness/cli/common.h"
#include "harness/memory.h"
#include "harness/store/store.h"
#include "harness/token_shard.h"
#include "models/safetensors.h"
#include "models/torch_compat.h"
#include "variants/registry.h"

namespace twinbench::cli {

int init_threads() {
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  if (const char* env = std::getenv("TWINBENCH_THREADS"); env && std::atoi(env) > 0) threads = std::atoi(env);
  if (threads < 1) threads = 1;
  at::set_num_threads(threads);
  return threads;
}

}  // namespace twinbench::cli

int main(int argc, char** argv) {
  using namespace twinbench;
  using namespace twinbench::cli;
  CLI::App app{"twinbench: train two implementations of one transformer and compare them"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "twinbench (LibTorch " + compat::torch_version() + ")");
  int exit_code = kExitOk;
  add_plan_command(app, exit_code);
  add_list_command(app, exit_code);
  add_weights_command(app, exit_code);
  add_eval_command(app, exit_code);
  add_run_command(app, exit_code);
  add_matrix_command(app, exit_code);
  add_runs_command(app, exit_code);
  add_calibrate_command(app, exit_code);
  add_db_commands(app, exit_code);
  add_report_command(app, exit_code);
  add_compare_command(app, exit_code);
  add_data_command(app, exit_code);
  memory::install_cpu_tracker();  // before any tensor exists, so every byte is counted
  init_threads();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? kExitOk : kExitBadInput;
  } catch (const ConfigError& e) {
    std::cerr << "twinbench: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const ShardError& e) {
    std::cerr << "twinbench: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const UnknownVariantError& e) {
    std::cerr << "twinbench: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {
    std::cerr << "twinbench: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const store::StoreError& e) {
    std::cerr << "twinbench: error: " << e.what() << "\n";
    return kExitFailure;
  } catch (const SafetensorsError& e) {
    std::cerr << "twinbench: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "twinbench: error: " << e.what() << "\n";
    return kExitFailure;
  }
  return exit_code;
}
