// Email over SMTP through libcurl (docs/alerts.md): STARTTLS (or SMTPS) and
// AUTH when the server asks for them, one plain-text message to a list of
// recipients. A failure says whether it is worth trying again (the server
// could not be reached, timed out, or answered 4xx) or not (5xx, a refused login).
#pragma once

#include <string>
#include <vector>

#include "harness/cli/delivery/http.h"

namespace twinbench::cli::delivery {

struct MailServer {
  std::string url;  // smtp://host[:port] (STARTTLS when `tls`) or smtps://host[:port]
  std::string user, password;  // AUTH when user is set
  bool tls = true;  // STARTTLS is required on smtp:// (tls=none in the target turns it off)
  std::string from;
  std::vector<std::string> to;
};

struct MailResult {
  bool ok = false;
  bool transient = false;
  std::string error;  // masked
  std::string receipt;  // "250 ... queued as ..." when the server says so
};

// The message as sent: headers (Date, From, To, Subject encoded when not
// ASCII, Message-ID, MIME) and the body with CRLF line ends.
std::string mail_message(const MailServer& server, const std::string& subject, const std::string& body,
                         const std::string& message_id);

MailResult send_mail(const MailServer& server, const std::string& subject, const std::string& body,
                     const std::string& message_id, const HttpPolicy& policy, const Secrets& secrets);

}  // namespace twinbench::cli::delivery
