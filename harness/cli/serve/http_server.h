// The HTTP server under `twinbench serve`: cpp-httplib's request parsing and
// routing over connections this file reads itself, so that every limit holds
// whatever a client sends (docs/serve.md, "Security"): the bytes of a
// request's line and headers, its body, the time to send a whole request, the
// time a connection may stay idle and how many requests it may carry, and how
// many connections are open at once. A request over a limit is answered with
// its status (400, 413, 431) or its connection closed; it never reaches a page.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <cstddef>

namespace twinbench::serve {

struct Limits {
  size_t header_bytes = 16 * 1024;    // request line and headers together
  size_t headers = 64;                // header lines
  size_t body_bytes = 64 * 1024;      // a POST's body (forms and JSON are small)
  std::chrono::milliseconds request_time{10000};  // from a request's first byte to its last
  std::chrono::milliseconds idle_time{5000};      // a kept-alive connection without a request
  std::chrono::milliseconds write_time{10000};    // one write of the answer
  size_t requests_per_connection = 100;
  size_t connections = 128;           // open at once; more are closed at once
  size_t threads = 32;                // connections served at once (the others wait)
};

// An httplib::Server whose connections are read through a stream that
// enforces `limits` (headers, body and time; the header count is checked
// before routing, with 431).
class LimitedServer : public httplib::Server {
 public:
  explicit LimitedServer(const Limits& limits);
  // False, with `res` answered (431), when `req` has more header lines than
  // the limits allow: the first thing a pre-routing handler asks.
  bool within_limits(const httplib::Request& req, httplib::Response& res) const;

 private:
  bool process_and_close_socket(socket_t sock) override;
  Limits limits_;
  std::atomic<size_t> open_{0};
};

}  // namespace twinbench::serve
