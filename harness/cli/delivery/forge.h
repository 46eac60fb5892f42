// The REST APIs of the forges the delivery speaks to (docs/alerts.md): GitHub
// (issues, issue comments, check runs) and GitLab (commit statuses, merge
// request notes), each request authenticated with the forge's header, sent
// through http_send (retries, rate limits) and every failure described with
// its secrets masked. Each call is one of the operations written down in
// tests/data/delivery/*_contract.json, which the test server checks.
#pragma once

#include <optional>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/cli/delivery/http.h"

namespace twinbench::cli::delivery {

class ForgeApi {
 public:
  enum class Kind { kGitHub, kGitLab };
  // `base`: https://api.github.com, or GitLab's .../api/v4.
  ForgeApi(Kind kind, std::string base, std::string token, HttpPolicy policy, const Secrets& secrets,
           std::ostream& log);

  // `path` below the base ("/repos/o/r/issues"), `body` JSON or null.
  HttpResponse call(const std::string& method, const std::string& path, const nlohmann::json& body = nullptr) const;
  // A GET of a list, following the pages (Link: rel="next", at most `max_pages`), until `found` says stop;
  // the items are handed to `found` one at a time. The response of a failed page, else nullopt.
  template <typename Found>
  std::optional<HttpResponse> scan(const std::string& path, Found&& found, int max_pages = 20) const;
  // The first item of the list at `path` whose "body" holds `marker` (an
  // issue, a comment or a note, found again by the marker twinbench wrote in
  // it), nullopt when none; the response of a failed page comes back in `failed`.
  std::optional<nlohmann::json> find_marked(const std::string& path, const std::string& marker,
                                            std::optional<HttpResponse>& failed) const;

  std::string describe(const HttpResponse& r) const { return delivery::describe(r, secrets_); }

 private:
  HttpResponse call_url(const std::string& method, const std::string& url, const nlohmann::json& body) const;
  HttpResponse get_url(const std::string& url) const;
  Kind kind_;
  std::string base_, token_;
  HttpPolicy policy_;
  const Secrets& secrets_;
  std::ostream& log_;
};

// The URL of rel="next" in a Link header, "" when there is none.
std::string next_link(const std::string& link_header);

template <typename Found>
std::optional<HttpResponse> ForgeApi::scan(const std::string& path, Found&& found, int max_pages) const {
  std::string url = base_ + path;
  for (int page = 0; page < max_pages && !url.empty(); ++page) {
    const HttpResponse r = get_url(url);
    if (!r.ok()) return r;
    const auto items = nlohmann::json::parse(r.body, nullptr, false);
    if (!items.is_array()) {
      HttpResponse bad = r;
      bad.status = 0;
      bad.error = "the answer is not a JSON list";
      return bad;
    }
    for (const auto& item : items)
      if (found(item)) return std::nullopt;
    url = next_link(r.header("link"));
  }
  return std::nullopt;
}

}  // namespace twinbench::cli::delivery
