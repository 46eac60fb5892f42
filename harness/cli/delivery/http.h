// HTTP through libcurl for the delivery (docs/alerts.md): one exchange, and
// the same with the two things a delivery must survive — a transient failure
// (no answer: refused, timed out; 408, 429, 5xx) retried with back-off, and a
// rate limit (429, or 403 with Retry-After or X-RateLimit-Remaining: 0)
// waited out within a bound. What the server answered comes back as it is;
// deciding what it means is the caller's.
#pragma once

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/cli/delivery/secrets.h"

namespace twinbench::cli::delivery {

struct HttpRequest {
  std::string method = "GET";  // GET, POST, PATCH, PUT
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;                  // sent when not empty (or the method is not GET)
};

struct HttpResponse {
  long status = 0;    // 0: no response (`error` says why)
  std::string error;  // libcurl's, e.g. "Couldn't connect to server", "Timeout was reached"
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  bool ok() const { return status >= 200 && status < 300; }
  // Worth trying again later: no response, 408, 429 or 5xx.
  bool transient() const;
  std::string header(const std::string& lower_case_name) const;
};

// How patient a delivery is, from the environment (docs/alerts.md):
// TWINBENCH_HTTP_TIMEOUT_S (10), TWINBENCH_HTTP_ATTEMPTS (3),
// TWINBENCH_HTTP_BACKOFF_S (1: then 2, 4, ...), TWINBENCH_RATE_LIMIT_WAIT_S
// (60: the most a call waits out rate limits in all), TWINBENCH_CA_BUNDLE (a CA
// file for servers with a private certificate; default: the system's).
struct HttpPolicy {
  double timeout_s = 10;
  int attempts = 3;
  double backoff_s = 1;
  double rate_limit_wait_s = 60;
  std::string ca_bundle;
  static HttpPolicy from_env();
};

// One exchange, no retry.
HttpResponse http_once(const HttpRequest& request, const HttpPolicy& policy);

// The seconds a rate-limited answer asks to wait (Retry-After, or
// X-RateLimit-Reset when X-RateLimit-Remaining is 0); nullopt when it is no
// rate limit.
std::optional<double> rate_limit_wait(const HttpResponse& response);

// http_once, trying again after a transient failure (policy.attempts in all,
// with back-off) and after a rate limit when its wait fits in what is left of
// policy.rate_limit_wait_s. Each wait is one line on `log`, masked.
HttpResponse http_send(const HttpRequest& request, const HttpPolicy& policy, const Secrets& secrets,
                       std::ostream& log);

// "HTTP 403: Resource not accessible by integration", "no answer: Timeout was reached", masked.
std::string describe(const HttpResponse& response, const Secrets& secrets);

// libcurl set up once per process (curl_global_init).
void init_curl();

}  // namespace twinbench::cli::delivery
