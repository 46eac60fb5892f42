// The limited HTTP server (see http_server.h).
#include "harness/cli/serve/http_server.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

namespace twinbench::serve {

namespace {

using Clock = std::chrono::steady_clock;

// Waits until `sock` is readable (or writable) for at most `wait`; false on
// timeout or error.
bool wait_for(int sock, short events, std::chrono::milliseconds wait) {
  pollfd p{sock, events, 0};
  const int ms = static_cast<int>(std::max<int64_t>(0, wait.count()));
  for (;;) {
    const int r = ::poll(&p, 1, ms);
    if (r < 0 && errno == EINTR) continue;
    return r > 0 && (p.revents & (events | POLLHUP | POLLERR)) != 0;
  }
}

void address_of(int sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  const int r = peer ? ::getpeername(sock, reinterpret_cast<sockaddr*>(&addr), &len)
                     : ::getsockname(sock, reinterpret_cast<sockaddr*>(&addr), &len);
  if (r != 0) return;
  char host[NI_MAXHOST] = {0}, serv[NI_MAXSERV] = {0};
  if (::getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof(host), serv, sizeof(serv),
                    NI_NUMERICHOST | NI_NUMERICSERV) == 0) {
    ip = host;
    port = std::atoi(serv);
  }
}

// One request's reading and its answer's writing: reads are buffered, stop at
// the request's byte budget (headers and body) and at its deadline; writes
// wait at most the write time each.
class LimitedStream : public httplib::Stream {
 public:
  LimitedStream(int sock, const Limits& limits)
      : sock_(sock),
        limits_(limits),
        budget_(limits.header_bytes + limits.body_bytes),
        deadline_(Clock::now() + limits.request_time) {}

  bool is_readable() const override { return pos_ < len_ || wait_for(sock_, POLLIN, left()); }
  bool is_writable() const override { return wait_for(sock_, POLLOUT, limits_.write_time); }

  ssize_t read(char* ptr, size_t size) override {
    if (budget_ == 0) return -1;  // more than a request may hold: the connection ends
    if (pos_ == len_) {
      if (!wait_for(sock_, POLLIN, left())) return -1;  // the request's time is up
      const ssize_t n = ::recv(sock_, buf_, sizeof(buf_), 0);
      if (n <= 0) return n;
      pos_ = 0;
      len_ = static_cast<size_t>(n);
    }
    const size_t n = std::min({size, len_ - pos_, budget_});
    std::memcpy(ptr, buf_ + pos_, n);
    pos_ += n;
    budget_ -= n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!wait_for(sock_, POLLOUT, limits_.write_time)) return -1;
    return ::send(sock_, ptr, size, MSG_NOSIGNAL);
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address_of(sock_, true, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address_of(sock_, false, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  std::chrono::milliseconds left() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
  }

  int sock_;
  const Limits& limits_;
  size_t budget_;
  Clock::time_point deadline_;
  char buf_[4096];
  size_t pos_ = 0, len_ = 0;
};

}  // namespace

LimitedServer::LimitedServer(const Limits& limits) : limits_(limits) {
  const size_t threads = limits_.threads;
  new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  set_payload_max_length(limits_.body_bytes);
}

bool LimitedServer::within_limits(const httplib::Request& req, httplib::Response& res) const {
  // httplib adds the peer's and its own address as headers; the client's lines are the rest.
  size_t sent = 0;
  for (const auto& [key, value] : req.headers)
    if (key != "REMOTE_ADDR" && key != "REMOTE_PORT" && key != "LOCAL_ADDR" && key != "LOCAL_PORT") ++sent;
  if (sent <= limits_.headers) return true;
  res.status = 431;
  res.set_content("too many header lines (at most " + std::to_string(limits_.headers) + ")\n", "text/plain");
  res.set_header("Connection", "close");
  return false;
}

bool LimitedServer::process_and_close_socket(socket_t sock) {
  struct Count {
    std::atomic<size_t>& n;
    explicit Count(std::atomic<size_t>& c) : n(c) { ++n; }
    ~Count() { --n; }
  } count(open_);
  if (open_ <= limits_.connections) {
    const int one = 1;
    ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    for (size_t left = limits_.requests_per_connection; left > 0 && is_running(); --left) {
      // Idle: wait for the next request in short steps, so that stopping the server ends the wait.
      const auto idle_until = Clock::now() + limits_.idle_time;
      bool readable = false;
      while (!readable && is_running() && Clock::now() < idle_until)
        readable = wait_for(sock, POLLIN, std::chrono::milliseconds(100));
      if (!readable) break;
      LimitedStream stream(sock, limits_);
      bool closed = false;
      const bool close_connection = left == 1 || !is_running();
      if (!process_request(stream, close_connection, closed, nullptr) || closed) break;
    }
  }
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return true;
}

}  // namespace twinbench::serve
