// The forges' REST APIs (see forge.h).
#include "harness/cli/delivery/forge.h"

#include <regex>

namespace twinbench::cli::delivery {

ForgeApi::ForgeApi(Kind kind, std::string base, std::string token, HttpPolicy policy, const Secrets& secrets,
                   std::ostream& log)
    : kind_(kind), base_(std::move(base)), token_(std::move(token)), policy_(policy), secrets_(secrets), log_(log) {
  while (!base_.empty() && base_.back() == '/') base_.pop_back();
}

HttpResponse ForgeApi::call(const std::string& method, const std::string& path, const nlohmann::json& body) const {
  return call_url(method, base_ + path, body);
}

HttpResponse ForgeApi::call_url(const std::string& method, const std::string& url, const nlohmann::json& body) const {
  HttpRequest r;
  r.method = method;
  r.url = url;
  if (kind_ == Kind::kGitHub) {
    r.headers = {"Accept: application/vnd.github+json", "X-GitHub-Api-Version: 2022-11-28",
                 "Authorization: Bearer " + token_};
  } else {
    r.headers = {"Accept: application/json", "PRIVATE-TOKEN: " + token_};
  }
  if (!body.is_null()) {
    r.headers.push_back("Content-Type: application/json");
    r.body = body.dump();
  }
  return http_send(r, policy_, secrets_, log_);
}

HttpResponse ForgeApi::get_url(const std::string& url) const { return call_url("GET", url, nullptr); }

std::optional<nlohmann::json> ForgeApi::find_marked(const std::string& path, const std::string& marker,
                                                    std::optional<HttpResponse>& failed) const {
  std::optional<nlohmann::json> item;
  failed = scan(path, [&](const nlohmann::json& c) {
    const auto body = c.is_object() ? c.find("body") : c.end();
    if (body == c.end() || !body->is_string() || body->get<std::string>().find(marker) == std::string::npos)
      return false;
    item = c;
    return true;
  });
  return item;
}

std::string next_link(const std::string& link) {
  static const std::regex next(R"re(<([^>]+)>\s*;\s*rel="next")re");
  std::smatch m;
  return std::regex_search(link, m, next) ? m[1].str() : "";
}

}  // namespace twinbench::cli::delivery
