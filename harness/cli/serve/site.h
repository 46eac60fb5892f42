// `twinbench serve`: the live site over one store (docs/serve.md) — its
// pages at stable URLs, each with a JSON twin (a `.json` path or `Accept:
// application/json`), the login and the write actions behind the token, the
// answers for a page still computing, a store that cannot be reached, a bad
// request or an unknown path, and the access log (which never holds a token).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>

#include "harness/cli/serve/front.h"

namespace twinbench::serve {

struct ServeOptions {
  std::string db;                       // the store's location
  std::string listen = "127.0.0.1:8080";  // HOST:PORT (port 0: any free one)
  std::string public_url;               // what links in notifications use (shown on the index); "" = http://listen
  bool read_token = false;              // reads need a token too
  std::string write_token, read_only_token;  // TWINBENCH_SERVE_TOKEN, TWINBENCH_SERVE_READ_TOKEN
  std::chrono::milliseconds wait{5000};  // a request waits this long for its page before "computing"
  size_t workers = 2;                   // pages computed at once
  size_t cache_bytes = 64u << 20;       // pages kept
  std::string repo = ".";               // the checkout a bisect page replays in
  Limits limits;
};

// Splits "HOST:PORT" ("[::1]:8080" for IPv6); std::invalid_argument when malformed.
std::pair<std::string, int> parse_listen(const std::string& listen);

// Serves until SIGINT or SIGTERM (or `stop_requested()` says so, polled);
// `on_listening` gets the URL once the socket listens. Throws
// std::invalid_argument for a bad option, std::runtime_error when the address
// cannot be bound.
void serve(const ServeOptions& options, const std::function<void(const std::string&)>& on_listening,
           const std::function<bool()>& stop_requested);

}  // namespace twinbench::serve
