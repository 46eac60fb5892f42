// Where notifications go (docs/alerts.md, "Targets"): `--notify KIND=TARGET`
// (repeatable) and a config file (`--notify-config FILE`, else
// $TWINBENCH_NOTIFY_CONFIG), read into targets whose secrets come from the
// environment or a file and never reach the store: the outbox knows a target
// by an id without its secret.
//   webhook=URL | webhook=env:VAR | webhook=file:PATH   a JSON POST (Slack, Mattermost, Teams)
//   smtp=smtp://[USER@]HOST[:PORT]?from=ADDR&to=ADDR[,ADDR...][&tls=none][&password=env:VAR|file:PATH]
//        (smtps:// for TLS from the start; the password defaults to $TWINBENCH_SMTP_PASSWORD,
//        else the file $TWINBENCH_SMTP_PASSWORD_FILE names)
//   github=OWNER/REPO   an issue per alert (token: $TWINBENCH_GITHUB_TOKEN, else $GITHUB_TOKEN,
//        else the file $TWINBENCH_GITHUB_TOKEN_FILE names; API: $GITHUB_API_URL, else api.github.com)
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "harness/cli/delivery/mail.h"
#include "harness/cli/delivery/secrets.h"

namespace twinbench::cli::delivery {

enum class TargetKind { kWebhook, kSmtp, kGithub };

struct Target {
  TargetKind kind = TargetKind::kWebhook;
  std::string id;     // the outbox's name for it, no secret: "webhook:1a2b...", "smtp:host:25/a@x", "github:o/r"
  std::string shown;  // what messages call it: "webhook https://hooks.example.com/***"
  std::string url;    // the webhook URL (a secret), or the GitHub API's base URL
  std::string repo;   // github: owner/repo
  std::string token;  // github
  MailServer mail;    // smtp
};

struct NotifyOptions {
  std::vector<std::string> notify;  // KIND=TARGET
  std::string config;               // a TOML file: notify = ["KIND=TARGET", ...], report_url = "..."
  std::string report_url;           // where the report folder is published (links in messages)
};

// --notify, --notify-config, --report-url (with $TWINBENCH_NOTIFY_CONFIG, $TWINBENCH_REPORT_URL).
void add_notify_options(CLI::App* cmd, NotifyOptions& options);

struct Targets {
  std::vector<Target> list;
  std::string report_url;  // --report-url, else the config file's
};

// The targets of the flags and the config file (std::invalid_argument for a
// bad one, naming it with its secrets masked).
Targets resolve_targets(const NotifyOptions& options, Secrets& secrets);
Target parse_target(const std::string& spec, Secrets& secrets);

}  // namespace twinbench::cli::delivery
