// Email over SMTP (see mail.h).
#include "harness/cli/delivery/mail.h"

#include <curl/curl.h>
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <memory>

namespace twinbench::cli::delivery {

namespace {

bool ascii(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) < 128; });
}

// RFC 2045 base64 (OpenSSL's EVP_EncodeBlock: no line breaks, '=' padding).
std::string base64(const std::string& in) {
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

// An RFC 2047 encoded word for a header that is not ASCII.
std::string header_text(const std::string& s) { return ascii(s) ? s : "=?UTF-8?B?" + base64(s) + "?="; }

struct Upload {
  std::string text;
  size_t at = 0;
};

size_t feed(char* buffer, size_t size, size_t n, void* data) {
  auto* u = static_cast<Upload*>(data);
  const size_t count = std::min(size * n, u->text.size() - u->at);
  std::memcpy(buffer, u->text.data() + u->at, count);
  u->at += count;
  return count;
}

size_t discard(char*, size_t size, size_t n, void*) { return size * n; }

}  // namespace

std::string mail_message(const MailServer& server, const std::string& subject, const std::string& body,
                         const std::string& message_id) {
  std::string to;
  for (const auto& r : server.to) to += (to.empty() ? "" : ", ") + r;
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::string out = fmt::format(
      "Date: {:%a, %d %b %Y %H:%M:%S} +0000\r\nFrom: {}\r\nTo: {}\r\nSubject: {}\r\nMessage-ID: <{}>\r\n"
      "MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n"
      "X-Mailer: twinbench\r\n\r\n",
      tm, server.from, to, header_text(subject), message_id);
  for (const char c : body) {
    if (c == '\n') out += "\r\n";
    else out += c;
  }
  if (out.size() < 2 || out.compare(out.size() - 2, 2, "\r\n") != 0) out += "\r\n";
  return out;
}

MailResult send_mail(const MailServer& server, const std::string& subject, const std::string& body,
                     const std::string& message_id, const HttpPolicy& policy, const Secrets& secrets) {
  init_curl();
  MailResult out;
  std::unique_ptr<CURL, void (*)(CURL*)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) {
    out.error = "libcurl could not start";
    out.transient = true;
    return out;
  }
  CURL* c = curl.get();
  Upload upload{mail_message(server, subject, body, message_id)};
  std::unique_ptr<curl_slist, void (*)(curl_slist*)> rcpt(nullptr, curl_slist_free_all);
  for (const auto& r : server.to) rcpt.reset(curl_slist_append(rcpt.release(), ("<" + r + ">").c_str()));
  char error[CURL_ERROR_SIZE] = {0};
  const std::string from = "<" + server.from + ">";
  curl_easy_setopt(c, CURLOPT_URL, server.url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
  curl_easy_setopt(c, CURLOPT_MAIL_FROM, from.c_str());
  curl_easy_setopt(c, CURLOPT_MAIL_RCPT, rcpt.get());
  curl_easy_setopt(c, CURLOPT_READFUNCTION, feed);
  curl_easy_setopt(c, CURLOPT_READDATA, &upload);
  curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
  curl_easy_setopt(c, CURLOPT_USE_SSL, static_cast<long>(server.tls ? CURLUSESSL_ALL : CURLUSESSL_NONE));
  if (!server.user.empty()) {
    curl_easy_setopt(c, CURLOPT_USERNAME, server.user.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, server.password.c_str());
  }
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(policy.timeout_s * 1000));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  if (!policy.ca_bundle.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, policy.ca_bundle.c_str());
  const CURLcode rc = curl_easy_perform(c);
  long code = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
  if (rc == CURLE_OK) {
    out.ok = true;
    out.receipt = fmt::format("SMTP {}", code);
    return out;
  }
  out.error = secrets.mask(fmt::format("{}{}", *error ? error : curl_easy_strerror(rc),
                                       code ? fmt::format(" (SMTP {})", code) : ""));
  out.transient = rc == CURLE_COULDNT_CONNECT || rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_COULDNT_RESOLVE_HOST ||
                  rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR || (code >= 400 && code < 500);
  return out;
}

}  // namespace twinbench::cli::delivery
