// twinbench: entry point. Sets up threads, registers the subcommands and maps
// errors to the documented exit codes (docs/cli.md).
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <thread>

#include "harness/cli/common.h"
#include "harness/run/dist/launcher.h"
#include "harness/run/dist/world.h"
#include "harness/base/process_env.h"
#include "harness/store/store.h"
#include "harness/base/threads.h"
#include "harness/run/train/token_shard.h"
#include "models/device/runtime.h"
#include "models/weights/safetensors.h"
#include "models/torch_compat.h"
#include "variants/registry.h"

namespace twinbench::cli {

static_assert(kExitPeerLost == dist::kPeerLostExitCode, "one exit code for a lost peer");
static_assert(kExitInterrupted == dist::kInterruptedExitCode, "one exit code for a stopped worker");

// A data-parallel worker's launcher reads why it failed from $TWINBENCH_ERROR_FILE.
int fail(int code, const std::string& message) {
  std::cerr << "twinbench: error: " << message << "\n";
  if (const char* file = std::getenv("TWINBENCH_ERROR_FILE"); file && *file) std::ofstream(file) << message << "\n";
  return code;
}

}  // namespace twinbench::cli

int main(int argc, char** argv) {
  // Commands that train or time kernels get the tuned environment (may re-execute once).
  if (argc > 1)
    for (const char* computing : {"run", "matrix", "calibrate", "eval", "profile"})
      if (std::string(argv[1]) == computing) twinbench::tune_process_environment(argv);
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
  add_export_command(app, exit_code);
  add_report_command(app, exit_code);
  add_compare_command(app, exit_code);
  add_ab_command(app, exit_code);
  add_data_command(app, exit_code);
  add_import_command(app, exit_code);
  add_profile_command(app, exit_code);
  add_bisect_command(app, exit_code);
  add_triage_command(app, exit_code);
  add_alerts_command(app, exit_code);
  add_serve_command(app, exit_code);
  device::install_memory_counting();  // before any tensor exists, so every byte is counted
  init_threads();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    // A bad command line: the one error form, and where the options are listed.
    std::cerr << "twinbench: error: " << e.what() << "\nRun with --help for more information.\n";
    return kExitBadInput;
  } catch (const ConfigError& e) {
    return fail(kExitBadInput, e.what());
  } catch (const ShardError& e) {
    return fail(kExitBadInput, e.what());
  } catch (const UnknownVariantError& e) {
    return fail(kExitBadInput, e.what());
  } catch (const std::invalid_argument& e) {
    return fail(kExitBadInput, e.what());
  } catch (const dist::RendezvousError& e) {
    return fail(kExitBadInput, e.what());
  } catch (const dist::PeerError& e) {
    return fail(kExitPeerLost, e.what());
  } catch (const store::StoreError& e) {
    return fail(e.fault() == store::StoreFault::kUnreachable ? kExitStoreUnreachable : kExitFailure, e.what());
  } catch (const SafetensorsError& e) {
    return fail(kExitBadInput, e.what());
  } catch (const c10::Error& e) {  // LibTorch's own: its what() carries a C++ backtrace
    return fail(kExitFailure, e.what_without_backtrace());
  } catch (const std::exception& e) {
    return fail(kExitFailure, e.what());
  }
  return exit_code;
}
