// `twinbench serve`: a live site over the store — every report at a stable
// URL with its JSON twin, alerts acted on behind a token (harness/cli/serve/,
// docs/serve.md).
#include <fmt/format.h>

#include <cstdlib>
#include <iostream>
#include <thread>

#include "harness/base/interrupt.h"
#include "harness/cli/common.h"
#include "harness/cli/serve/site.h"

namespace twinbench::cli {

void add_serve_command(CLI::App& app, int& exit_code) {
  auto o = std::make_shared<serve::ServeOptions>();
  o->db = store::default_location();
  auto wait_ms = std::make_shared<int64_t>(5000);
  auto* cmd = app.add_subcommand("serve", "a live site over the store: every report at a stable URL, with its JSON");
  cmd->add_option("--db", o->db, kDbHelp);
  cmd->add_option("--listen", o->listen,
                  "HOST:PORT to listen on (default 127.0.0.1:8080: this machine only; 0.0.0.0:PORT for every "
                  "interface; port 0: any free one, printed)");
  cmd->add_option("--public-url", o->public_url, "the URL others reach this server at (printed, and in /health.json)");
  cmd->add_flag("--read-token", o->read_token,
                "reads need a token too: TWINBENCH_SERVE_TOKEN, or TWINBENCH_SERVE_READ_TOKEN (reads only)");
  cmd->add_option("--workers", o->workers, "pages computed at once, each with its own store connection (default 2)")
      ->check(CLI::Range(1, 64));
  cmd->add_option("--wait-ms", *wait_ms,
                  "how long a request waits for its page before it is answered \"still computing\" (default 5000)")
      ->check(CLI::Range(0, 600000));
  cmd->add_option("--cache-mib", o->cache_bytes, "MiB of computed pages kept (default 64)")
      ->check(CLI::Range(1, 4096))
      ->transform([](const std::string& s) { return std::to_string(std::stoull(s) << 20); });
  cmd->callback([o, wait_ms, &exit_code] {
    auto options = *o;
    options.wait = std::chrono::milliseconds(*wait_ms);
    if (const char* t = std::getenv("TWINBENCH_SERVE_TOKEN")) options.write_token = t;
    if (const char* t = std::getenv("TWINBENCH_SERVE_READ_TOKEN")) options.read_only_token = t;
    if (options.read_token && options.write_token.empty() && options.read_only_token.empty())
      throw std::invalid_argument("--read-token: set TWINBENCH_SERVE_TOKEN or TWINBENCH_SERVE_READ_TOKEN, or no "
                                  "one could read");
    store::check_location(options.db);
    // A server outlives outages: a lost PostgreSQL connection is retried briefly,
    // and the page says the store is away rather than waiting the command default.
    setenv("TWINBENCH_RECONNECT_S", "2", /*overwrite=*/0);
    install_interrupt_handlers();
    serve::serve(
        options,
        [&](const std::string& url) {
          std::cout << fmt::format("twinbench serve: {} serving {}{}{}", url, store::redact_location(options.db),
                                   options.public_url.empty() ? "" : " (public: " + options.public_url + ")",
                                   options.write_token.empty() ? " (read-only: TWINBENCH_SERVE_TOKEN is not set)" : "")
                    << std::endl;
        },
        [] { return stop_requested(); });
    std::cerr << "twinbench serve: stopped\n";
    exit_code = kExitOk;
  });
}

}  // namespace twinbench::cli
