// HTTP through libcurl (see http.h).
#include "harness/cli/delivery/http.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "harness/base/env_number.h"

namespace twinbench::cli::delivery {

namespace {

size_t collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

size_t collect_header(char* data, size_t size, size_t n, void* out) {
  const std::string line(data, size * n);
  const size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = line.substr(0, colon);
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string value = line.substr(colon + 1);
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.front()))) value.erase(0, 1);
    while (!value.empty() && std::isspace(static_cast<unsigned char>(value.back()))) value.pop_back();
    (*static_cast<std::map<std::string, std::string>*>(out))[name] = value;
  }
  return size * n;
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct ListDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(s * 1000))); }

}  // namespace

void init_curl() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

bool HttpResponse::transient() const { return status == 0 || status == 408 || status == 429 || status >= 500; }

std::string HttpResponse::header(const std::string& name) const {
  const auto it = headers.find(name);
  return it == headers.end() ? "" : it->second;
}

HttpPolicy HttpPolicy::from_env() {
  HttpPolicy p;
  p.timeout_s = env_number("TWINBENCH_HTTP_TIMEOUT_S", p.timeout_s, 0.1, 3600);
  p.attempts = static_cast<int>(env_number("TWINBENCH_HTTP_ATTEMPTS", p.attempts, 1, 20));
  p.backoff_s = env_number("TWINBENCH_HTTP_BACKOFF_S", p.backoff_s, 0, 600);
  p.rate_limit_wait_s = env_number("TWINBENCH_RATE_LIMIT_WAIT_S", p.rate_limit_wait_s, 0, 3600);
  if (const char* ca = std::getenv("TWINBENCH_CA_BUNDLE"); ca && *ca) p.ca_bundle = ca;
  return p;
}

HttpResponse http_once(const HttpRequest& request, const HttpPolicy& policy) {
  init_curl();
  HttpResponse out;
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) {
    out.error = "libcurl could not start";
    return out;
  }
  std::unique_ptr<curl_slist, ListDeleter> headers;
  for (const auto& h : request.headers) headers.reset(curl_slist_append(headers.release(), h.c_str()));
  char error[CURL_ERROR_SIZE] = {0};
  CURL* c = curl.get();
  curl_easy_setopt(c, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  if (request.method != "GET") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(c, CURLOPT_USERAGENT, "twinbench");
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(policy.timeout_s * 1000));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(std::min(policy.timeout_s, 10.0) * 1000));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &out.body);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, collect_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &out.headers);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  if (!policy.ca_bundle.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, policy.ca_bundle.c_str());
  const CURLcode rc = curl_easy_perform(c);
  if (rc != CURLE_OK) {
    out.error = *error ? error : curl_easy_strerror(rc);
    out.body.clear();
    return out;
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out.status);
  return out;
}

std::optional<double> rate_limit_wait(const HttpResponse& r) {
  if (r.status != 429 && r.status != 403) return std::nullopt;
  if (const std::string after = r.header("retry-after"); !after.empty()) {
    char* end = nullptr;
    const double s = std::strtod(after.c_str(), &end);
    if (*end == '\0' && std::isfinite(s) && s >= 0) return s;
  }
  if (r.header("x-ratelimit-remaining") == "0") {
    const std::string reset = r.header("x-ratelimit-reset");
    char* end = nullptr;
    const double at = std::strtod(reset.c_str(), &end);
    if (!reset.empty() && *end == '\0') return std::max(0.0, at - static_cast<double>(std::time(nullptr)));
    return 60.0;  // no reset given: a minute, GitHub's secondary limit advice
  }
  if (r.status == 429) return 1.0;
  return std::nullopt;  // a 403 that is no rate limit: permission
}

HttpResponse http_send(const HttpRequest& request, const HttpPolicy& policy, const Secrets& secrets,
                       std::ostream& log) {
  double waited = 0, backoff = policy.backoff_s;
  int failures = 0;
  for (;;) {
    HttpResponse r = http_once(request, policy);
    if (const auto wait = rate_limit_wait(r)) {
      if (waited + *wait > policy.rate_limit_wait_s) {
        r.error = fmt::format("rate limited for {:.0f} s more, beyond the {:g} s this delivery waits "
                              "(TWINBENCH_RATE_LIMIT_WAIT_S)",
                              *wait, policy.rate_limit_wait_s);
        return r;
      }
      log << secrets.mask(fmt::format("twinbench: {} {}: rate limited (HTTP {}), waiting {:.1f} s\n", request.method,
                                      request.url, r.status, *wait));
      sleep_s(*wait);
      waited += *wait;
      continue;
    }
    if (!r.transient() || ++failures >= policy.attempts) return r;
    log << secrets.mask(fmt::format("twinbench: {} {}: {}; trying again in {:g} s\n", request.method, request.url,
                                    describe(r, secrets), backoff));
    sleep_s(backoff);
    backoff *= 2;
  }
}

std::string describe(const HttpResponse& r, const Secrets& secrets) {
  if (r.status == 0) return secrets.mask("no answer: " + r.error);
  std::string what = r.body;
  const auto j = nlohmann::json::parse(r.body, nullptr, false);
  if (j.is_object() && j.contains("message") && j["message"].is_string()) what = j["message"].get<std::string>();
  if (what.size() > 200) what = what.substr(0, 200) + "...";
  for (char& ch : what)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return secrets.mask(fmt::format("HTTP {}{}{}{}", r.status, what.empty() ? "" : ": ", what,
                                  r.error.empty() ? "" : " (" + r.error + ")"));
}

}  // namespace twinbench::cli::delivery
