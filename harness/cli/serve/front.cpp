// The front door (see front.h). Each connection is one thread: read a request
// whole under the limits, pass it on over a loopback connection of its own,
// pass the answer back, and again while the connection is kept alive. The few things read of a request's head are
// its framing (where the head ends, the Content-Length) and its line count;
// everything else about HTTP is httplib's, behind.
#include "harness/cli/serve/front.h"

#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>
#include <thread>
#include <vector>

namespace twinbench::serve {

namespace {

using Clock = std::chrono::steady_clock;
// Waits are taken in steps this long, so that stop() ends them.
constexpr std::chrono::milliseconds kStep{100};

// Waits until `fd` is ready for `events` (or hung up) before `until`; false
// when the time is up or the front stops.
bool wait_for(int fd, short events, Clock::time_point until, const std::atomic<bool>& running) {
  for (;;) {
    if (!running) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, static_cast<int>(std::min(left, kStep).count()) + 1);
    if (r > 0) return true;  // ready, or hung up: the next read or write tells
    if (r < 0 && errno != EINTR) return false;
  }
}

// Appends what `fd` has to `buffer`; false at its end or on an error.
bool fill(int fd, std::string& buffer) {
  char chunk[16384];
  for (;;) {
    const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
    if (n > 0) {
      buffer.append(chunk, static_cast<size_t>(n));
      return true;
    }
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

bool send_all(int fd, std::string_view data, std::chrono::milliseconds per_write, const std::atomic<bool>& running) {
  while (!data.empty()) {
    if (!wait_for(fd, POLLOUT, Clock::now() + per_write, running)) return false;
    const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(x) == std::tolower(y); });
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A message's head (through its blank line) as lines: the first line, then
// each header as name and value, viewed in the buffer it was read into.
struct Head {
  std::string_view first;
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  bool malformed = false;  // a header line without a colon
  std::string_view value(std::string_view name) const {
    for (const auto& [n, v] : fields)
      if (same_name(n, name)) return v;
    return {};
  }
  bool has(std::string_view name) const {
    return std::any_of(fields.begin(), fields.end(), [&](const auto& f) { return same_name(f.first, name); });
  }
};

Head parse_head(std::string_view head) {
  Head h;
  size_t at = head.find("\r\n");
  h.first = head.substr(0, at);
  for (at += 2; at < head.size();) {
    const size_t end = head.find("\r\n", at);
    const std::string_view line = head.substr(at, end - at);
    at = end + 2;
    if (line.empty()) break;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      h.malformed = true;
      continue;
    }
    h.fields.emplace_back(line.substr(0, colon), trimmed(line.substr(colon + 1)));
  }
  return h;
}

// A Content-Length: digits alone (nullopt otherwise; 0 when there is none).
std::optional<size_t> content_length(const Head& h) {
  if (!h.has("Content-Length")) return 0;
  const std::string_view v = h.value("Content-Length");
  if (v.empty() || v.size() > 18 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::stoull(std::string(v));
}

std::string_view refusal_reason(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 431: return "Request Header Fields Too Large";
    case 502: return "Bad Gateway";
    default: return "Error";
  }
}

// The front's own refusal: one line, the server's security headers, and the connection closes.
void refuse(int client, int status, const std::string& why, std::chrono::milliseconds per_write,
            const std::atomic<bool>& running) {
  const std::string body = why + "\n";
  send_all(client,
           fmt::format("HTTP/1.1 {} {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n"
                       "Content-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\n"
                       "X-Content-Type-Options: nosniff\r\nX-Frame-Options: DENY\r\nCache-Control: no-store\r\n"
                       "Connection: close\r\n\r\n{}",
                       status, refusal_reason(status), body.size(), body),
           per_write, running);
}

std::string peer_address(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  char host[NI_MAXHOST] = {0};
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      ::getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) != 0)
    return "unknown";
  return host;
}

int connect_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  // Closed by a reset once its answer is read: no TIME_WAIT for a loopback
  // connection a request, and httplib's thread for it ends at once.
  const linger reset{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
  return fd;
}

// Whether the client asked for its connection to end after this request.
bool client_closes(const Head& h) {
  const std::string_view connection = h.value("Connection");
  const bool http10 = h.first.size() >= 8 && h.first.substr(h.first.size() - 8) == "HTTP/1.0";
  return same_name(connection, "close") || (http10 && !same_name(connection, "keep-alive"));
}

// A head with the connection's own fields (Connection, Keep-Alive: hop by
// hop, each side's its own) and `drop` left out, and `add` (lines) added.
std::string rewritten(const Head& h, std::string_view drop, const std::string& add) {
  std::string out;
  out.append(h.first).append("\r\n");
  for (const auto& [name, value] : h.fields) {
    if (same_name(name, "Connection") || same_name(name, "Keep-Alive") || same_name(name, drop)) continue;
    out.append(name).append(": ").append(value).append("\r\n");
  }
  return out.append(add).append("\r\n");
}

// Passes the server's answer to a request back to the client: its head, then
// as many bytes as its Content-Length says (none for HEAD, 1xx, 204 and 304),
// or, without one, all until the server closes. `keep` (the requests the
// client's connection may still carry; 0: it ends) is what the head tells the
// client. True when the connection carries on.
bool pass_back(int backend, int client, bool head_request, size_t keep, std::chrono::milliseconds idle,
               std::chrono::milliseconds per_write, const std::atomic<bool>& running) {
  const auto forever = Clock::time_point::max();
  std::string in;
  size_t head_end;
  while ((head_end = in.find("\r\n\r\n")) == std::string::npos)
    if (!wait_for(backend, POLLIN, forever, running) || !fill(backend, in)) return false;
  head_end += 4;
  const Head h = parse_head(std::string_view(in).substr(0, head_end));
  const size_t space = h.first.find(' ');
  const int status = space == std::string_view::npos ? 0 : std::atoi(std::string(h.first.substr(space + 1, 3)).c_str());
  const bool no_body = head_request || status / 100 == 1 || status == 204 || status == 304;
  const std::optional<size_t> length = h.has("Content-Length") ? content_length(h) : std::nullopt;
  const bool framed = no_body || length;  // else the body runs to the server's close, and so does the connection
  if (!framed) keep = 0;
  const std::string head =
      rewritten(h, "", keep == 0 ? "Connection: close\r\n"
                                 : fmt::format("Keep-Alive: timeout={}, max={}\r\n",
                                               std::chrono::duration_cast<std::chrono::seconds>(idle).count(), keep));
  in.erase(0, head_end);
  if (!send_all(client, head, per_write, running)) return false;
  if (framed) {
    const size_t body = no_body ? 0 : *length;
    while (in.size() < body)
      if (!wait_for(backend, POLLIN, forever, running) || !fill(backend, in)) return false;
    return send_all(client, std::string_view(in).substr(0, body), per_write, running) && keep > 0;
  }
  do {
    if (!send_all(client, in, per_write, running)) return false;
    in.clear();
  } while (wait_for(backend, POLLIN, forever, running) && fill(backend, in));
  return false;
}

}  // namespace

Front::Front(const Limits& limits) : limits_(limits) {}

Front::~Front() {
  if (listener_ >= 0) ::close(listener_);
}

int Front::bind(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return -1;
  for (addrinfo* a = found; a && listener_ < 0; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, SOMAXCONN) == 0)
      listener_ = fd;
    else
      ::close(fd);
  }
  ::freeaddrinfo(found);
  if (listener_ < 0) return -1;
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  char serv[NI_MAXSERV] = {0};
  if (::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len) != 0 ||
      ::getnameinfo(reinterpret_cast<sockaddr*>(&addr), len, nullptr, 0, serv, sizeof serv, NI_NUMERICSERV) != 0)
    return -1;
  return std::atoi(serv);
}

void Front::stop() { running_ = false; }

void Front::run(int backend) {
  while (running_) {
    pollfd p{listener_, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(kStep.count())) <= 0) continue;
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    if (open_ >= limits_.connections) {  // over the cap: closed at once, nothing read
      ::close(client);
      continue;
    }
    ++open_;
    std::thread([this, client, backend] {
      serve_connection(client, backend);
      --open_;  // the thread's last touch of this Front: run() waits for it
    }).detach();
  }
  while (open_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
}

void Front::serve_connection(int client, int backend_port) {
  const int one = 1;
  ::setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  const std::string peer = peer_address(client);
  const auto refuse_with = [&](int status, const std::string& why) {
    refuse(client, status, why, limits_.write_time, running_);
  };
  std::string in;  // what the client sent that is not passed on yet
  for (size_t n = 1; n <= limits_.requests_per_connection; ++n) {
    if (in.empty() && !(wait_for(client, POLLIN, Clock::now() + limits_.idle_time, running_) && fill(client, in)))
      break;  // idle too long, or the client closed
    const auto deadline = Clock::now() + limits_.request_time;
    size_t head_end;
    bool whole = true;
    while ((head_end = in.find("\r\n\r\n")) == std::string::npos && in.size() <= limits_.header_bytes)
      if (!(wait_for(client, POLLIN, deadline, running_) && fill(client, in))) {
        whole = false;  // the request's time is up, or the client closed
        break;
      }
    if (!whole) break;
    if (head_end == std::string::npos || head_end + 4 > limits_.header_bytes) {
      refuse_with(431, fmt::format("the request line and headers are larger than {} bytes", limits_.header_bytes));
      break;
    }
    head_end += 4;
    Head h = parse_head(std::string_view(in).substr(0, head_end));
    if (h.malformed) {
      refuse_with(400, "a header line without a colon");
      break;
    }
    if (h.fields.size() > limits_.headers) {
      refuse_with(431, fmt::format("too many header lines (at most {})", limits_.headers));
      break;
    }
    if (h.has("Transfer-Encoding")) {
      refuse_with(411, "a request body needs a Content-Length");
      break;
    }
    const std::optional<size_t> length = content_length(h);
    if (!length) {
      refuse_with(400, "the Content-Length is not a number");
      break;
    }
    if (*length > limits_.body_bytes) {
      refuse_with(413, fmt::format("the body is larger than {} bytes", limits_.body_bytes));
      break;
    }
    while (in.size() < head_end + *length)
      if (!(wait_for(client, POLLIN, deadline, running_) && fill(client, in))) {
        whole = false;
        break;
      }
    if (!whole) break;
    h = parse_head(std::string_view(in).substr(0, head_end));  // its views into `in`, which reading the body may have moved
    // Passed on with the client's address, and "Connection: close": httplib
    // may answer before it reads a body (a refusal), and the unread rest must
    // never be read as a request, so each request has a connection of its own.
    const std::string request =
        rewritten(h, kPeerHeader, fmt::format("{}: {}\r\nConnection: close\r\n", kPeerHeader, peer))
            .append(std::string_view(in).substr(head_end, *length));
    const size_t keep = client_closes(h) || !running_ ? 0 : limits_.requests_per_connection - n;
    const bool head_request = h.first.rfind("HEAD ", 0) == 0;
    in.erase(0, head_end + *length);
    const int backend = connect_loopback(backend_port);
    if (backend < 0 || !send_all(backend, request, limits_.write_time, running_)) {
      if (backend >= 0) ::close(backend);
      refuse_with(502, "the server behind is not answering");
      break;
    }
    const bool again = pass_back(backend, client, head_request, keep, limits_.idle_time, limits_.write_time, running_);
    ::close(backend);
    if (!again) break;
  }
  ::shutdown(client, SHUT_RDWR);
  ::close(client);
}

}  // namespace twinbench::serve
