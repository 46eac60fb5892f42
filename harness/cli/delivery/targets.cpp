// Notification targets (see targets.h).
#include "harness/cli/delivery/targets.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <cstdlib>
#include <map>
#include <regex>
#include <stdexcept>

#include "harness/logs/sha256.h"

#include "harness/base/url_coding.h"

namespace twinbench::cli::delivery {

namespace {

// "https://hooks.example.com/***": the scheme and host of a URL, its path hidden.
std::string url_shown(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos) return "***";
  const size_t path = url.find('/', scheme + 3);
  return url.substr(0, path) + "/***";
}

std::string env_or(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}

Target webhook(const std::string& value, Secrets& secrets) {
  Target t;
  t.kind = TargetKind::kWebhook;
  t.url = read_secret(value, "--notify webhook", secrets);
  if (t.url.rfind("http://", 0) != 0 && t.url.rfind("https://", 0) != 0)
    throw std::invalid_argument(
        secrets.mask(fmt::format("--notify webhook={}: expected an http:// or https:// URL", value)));
  t.id = "webhook:" + logs::sha256_hex(t.url).substr(0, 16);
  t.shown = "webhook " + url_shown(t.url);
  return t;
}

Target smtp(const std::string& value, Secrets& secrets) {
  static const std::regex form(R"(^(smtps?)://(?:([^@/:?]+)(:[^@/?]*)?@)?([^/?:@]+)(?::(\d+))?/?(?:\?(.*))?$)");
  std::smatch m;
  const std::string what = "--notify smtp=" + value;
  if (!std::regex_match(value, m, form))
    throw std::invalid_argument(fmt::format("{}: expected smtp://[USER@]HOST[:PORT]?from=ADDR&to=ADDR[,ADDR...]", what));
  if (m[3].matched)
    throw std::invalid_argument(fmt::format("--notify smtp={}://{}:***@...: a password does not go in the URL; give it "
                                            "as ?password=env:VAR or file:PATH, or in $TWINBENCH_SMTP_PASSWORD",
                                            m[1].str(), m[2].str()));
  Target t;
  t.kind = TargetKind::kSmtp;
  const std::string port = m[5].matched ? ":" + m[5].str() : "";
  t.mail.url = m[1].str() + "://" + m[4].str() + port;
  t.mail.user = percent_decode(m[2].str());
  std::map<std::string, std::string> query;
  const std::string q = m[6].str();
  for (size_t at = 0; at < q.size();) {
    const size_t amp = std::min(q.find('&', at), q.size());
    const std::string pair = q.substr(at, amp - at);
    const size_t eq = pair.find('=');
    if (eq == std::string::npos) throw std::invalid_argument(fmt::format("{}: '{}' is not key=value", what, pair));
    query[pair.substr(0, eq)] = percent_decode(pair.substr(eq + 1));
    at = amp + 1;
  }
  for (const auto& [key, v] : query)
    if (key != "from" && key != "to" && key != "tls" && key != "password")
      throw std::invalid_argument(fmt::format("{}: unknown parameter '{}' (from, to, tls, password)", what, key));
  t.mail.from = query["from"];
  for (size_t at = 0; at < query["to"].size();) {
    const size_t comma = std::min(query["to"].find(',', at), query["to"].size());
    if (comma > at) t.mail.to.push_back(query["to"].substr(at, comma - at));
    at = comma + 1;
  }
  if (t.mail.from.empty() || t.mail.to.empty())
    throw std::invalid_argument(fmt::format("{}: give ?from=ADDR&to=ADDR[,ADDR...]", what));
  if (query.count("tls") && query["tls"] != "none" && query["tls"] != "starttls")
    throw std::invalid_argument(fmt::format("{}: tls is starttls (the default) or none", what));
  t.mail.tls = query["tls"] != "none";
  if (!t.mail.user.empty()) {
    t.mail.password = query.count("password")
                          ? read_secret(query["password"], "--notify smtp password", secrets, /*literal_allowed=*/false)
                          : secret_from_env({"TWINBENCH_SMTP_PASSWORD"}, "TWINBENCH_SMTP_PASSWORD_FILE", secrets);
    if (t.mail.password.empty())
      throw std::invalid_argument(fmt::format("{}: user {} needs a password: $TWINBENCH_SMTP_PASSWORD, "
                                              "$TWINBENCH_SMTP_PASSWORD_FILE or ?password=env:VAR",
                                              what, t.mail.user));
  }
  std::string to;
  for (const auto& r : t.mail.to) to += (to.empty() ? "" : ",") + r;
  t.id = "smtp:" + m[4].str() + port + "/" + to;
  t.shown = "email to " + to + " via " + t.mail.url;
  return t;
}

Target github(const std::string& value, Secrets& secrets) {
  static const std::regex repo(R"(^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$)");
  if (!std::regex_match(value, repo))
    throw std::invalid_argument(fmt::format("--notify github={}: expected OWNER/REPO", value));
  Target t;
  t.kind = TargetKind::kGithub;
  t.repo = value;
  t.url = env_or("GITHUB_API_URL", "https://api.github.com");
  t.token = secret_from_env({"TWINBENCH_GITHUB_TOKEN", "GITHUB_TOKEN"}, "TWINBENCH_GITHUB_TOKEN_FILE", secrets);
  if (t.token.empty())
    throw std::invalid_argument(fmt::format("--notify github={}: no token: set $TWINBENCH_GITHUB_TOKEN or "
                                            "$GITHUB_TOKEN, or $TWINBENCH_GITHUB_TOKEN_FILE",
                                            value));
  t.id = "github:" + value;
  t.shown = "GitHub issues of " + value;
  return t;
}

}  // namespace

void add_notify_options(CLI::App* cmd, NotifyOptions& o) {
  cmd->add_option("--notify", o.notify,
                  "send each new alert, once, to KIND=TARGET (repeatable): webhook=URL|env:VAR|file:PATH, "
                  "smtp=smtp://[USER@]HOST[:PORT]?from=ADDR&to=ADDR, github=OWNER/REPO (docs/alerts.md)");
  cmd->add_option("--notify-config", o.config,
                  "a TOML file of targets: notify = [\"KIND=TARGET\", ...] and report_url (default "
                  "$TWINBENCH_NOTIFY_CONFIG)")
      ->envname("TWINBENCH_NOTIFY_CONFIG");
  cmd->add_option("--report-url", o.report_url,
                  "where the report folder is published: the links in messages (default $TWINBENCH_REPORT_URL)")
      ->envname("TWINBENCH_REPORT_URL");
}

Target parse_target(const std::string& spec, Secrets& secrets) {
  const size_t eq = spec.find('=');
  const std::string kind = spec.substr(0, eq);
  if (eq == std::string::npos || eq + 1 == spec.size())
    throw std::invalid_argument(fmt::format("--notify {}: expected KIND=TARGET (webhook, smtp, github)",
                                            secrets.mask(spec)));
  const std::string value = spec.substr(eq + 1);
  if (kind == "webhook") return webhook(value, secrets);
  if (kind == "smtp") return smtp(value, secrets);
  if (kind == "github") return github(value, secrets);
  throw std::invalid_argument(fmt::format("--notify {}=...: unknown kind '{}' (webhook, smtp, github)", kind, kind));
}

Targets resolve_targets(const NotifyOptions& o, Secrets& secrets) {
  Targets out;
  std::vector<std::string> specs = o.notify;
  if (!o.config.empty()) {
    toml::table file;
    try {
      file = toml::parse_file(o.config);
    } catch (const toml::parse_error& e) {
      throw std::invalid_argument(fmt::format("{}:{}: {}", o.config, e.source().begin.line, e.description()));
    }
    for (const auto& [key, node] : file) {
      if (key == "report_url" && node.is_string()) {
        out.report_url = node.value<std::string>().value();
      } else if (key == "notify" && node.is_array()) {
        for (const auto& item : *node.as_array()) {
          if (!item.is_string()) throw std::invalid_argument(fmt::format("{}: notify holds strings KIND=TARGET", o.config));
          specs.push_back(item.value<std::string>().value());
        }
      } else {
        throw std::invalid_argument(fmt::format("{}: unknown key '{}' (notify = [\"KIND=TARGET\", ...], report_url = "
                                                "\"URL\")",
                                                o.config, std::string(key.str())));
      }
    }
  }
  if (!o.report_url.empty()) out.report_url = o.report_url;
  for (const auto& spec : specs) {
    Target t = parse_target(spec, secrets);
    bool seen = false;
    for (const auto& other : out.list) seen = seen || other.id == t.id;
    if (!seen) out.list.push_back(std::move(t));
  }
  return out;
}

}  // namespace twinbench::cli::delivery
