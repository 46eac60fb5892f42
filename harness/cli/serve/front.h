// The server's front door (docs/serve.md, "Security"): an accept loop of its
// own in front of cpp-httplib, which is used through its public interface
// alone and listens on a loopback port only the front talks to. The front
// holds every limit whatever a client sends: how many connections are open
// (more are closed at once), a request's line and headers (bytes and lines:
// 431), its body (413; a body needs a Content-Length: 411), the time from a
// request's first byte to its last (the connection is closed), the time a
// kept-alive connection may stay idle and how many requests it may carry, and
// each write of an answer. A request is read whole before httplib sees a byte
// of it, so no server thread ever waits on a slow client.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>

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
  size_t threads = 32;                // requests served at once by the server behind (the others wait)
};

// The header the front adds to each request it passes on: the client's
// address. A client's own header of that name is dropped first, so the
// server behind can take it as the peer (its own peer is the front).
inline constexpr const char* kPeerHeader = "X-Twinbench-Peer";

class Front {
 public:
  explicit Front(const Limits& limits);
  ~Front();
  Front(const Front&) = delete;
  Front& operator=(const Front&) = delete;

  // Listens on HOST:PORT (port 0: a free one); the port, or -1 when it cannot.
  int bind(const std::string& host, int port);
  // Accepts connections until stop(), one thread each: every request read
  // whole within the limits and passed to the server on 127.0.0.1:`backend`
  // over a connection of its own, the answer passed back. Returns once every
  // connection has ended.
  void run(int backend);
  void stop();

 private:
  void serve_connection(int client, int backend);
  Limits limits_;
  int listener_ = -1;
  std::atomic<bool> running_{true};
  std::atomic<size_t> open_{0};
};

}  // namespace twinbench::serve
