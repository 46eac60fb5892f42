// Who may read and who may write through `twinbench serve` (docs/serve.md,
// "Access"): writes (acting on alerts) need the write token
// (TWINBENCH_SERVE_TOKEN); reads need none unless the server was started with
// --read-token (then the write token or TWINBENCH_SERVE_READ_TOKEN). A token
// comes as `Authorization: Bearer TOKEN` (scripts) or, for a browser, as a
// session cookie the login form sets: signed by a secret the server draws at
// start (HMAC-SHA-256), HttpOnly, SameSite=Strict, valid 12 hours. A form
// that writes carries a CSRF token derived from the session (and a foreign
// Origin is refused). Behind a TLS-terminating proxy (`--public-url https://…`)
// the Origin a browser sends is https and the cookie is Secure: the rules
// follow the public URL's scheme. Tokens are compared in constant time and
// never logged.
#pragma once

#include <httplib.h>

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace twinbench::serve {

enum class Right { kNone, kRead, kWrite };

// Compares two secrets in time that depends on neither (their SHA-256
// digests, compared with CRYPTO_memcmp).
bool same_secret(std::string_view given, std::string_view expected);

class Access {
 public:
  // `write_token` "": nothing can be written; `read_token` "": only the write
  // token reads when reads need one. `public_url` (--public-url, "" for
  // none): its scheme is the one a browser's Origin carries (http without
  // one), and https makes the session cookie Secure.
  Access(std::string write_token, std::string read_token, bool reads_need_token, const std::string& public_url = "");

  bool writes_enabled() const { return !write_token_.empty(); }
  bool reads_need_token() const { return reads_need_token_; }

  // What a request may do: its bearer token's right (kNone for a wrong one),
  // else its session cookie's, else kRead where reads are open.
  Right right_of(const httplib::Request& req) const;
  // Whether the request's right came from a cookie (then a write needs the CSRF token).
  bool by_cookie(const httplib::Request& req) const;

  // A session cookie's value for `token`, nullopt for a token that is neither.
  std::optional<std::string> login(std::string_view token) const;
  // The Set-Cookie header value that sets (or, with "", clears) the session.
  std::string cookie_header(const std::string& session) const;
  // Whether the request's Origin, when sent, is this server as the browser
  // reaches it: the public URL's scheme with the request's Host, or the
  // public URL's own origin. The one Origin rule of sign-in and writes.
  bool same_origin(const httplib::Request& req) const;
  // The CSRF token a form of this request's session carries ("" without one).
  std::string csrf_of(const httplib::Request& req) const;
  // Whether a cookie-authorised write may go ahead: the form's `csrf` field is
  // the session's and the Origin, when sent, is this server's Host.
  bool csrf_ok(const httplib::Request& req, std::string_view csrf) const;

 private:
  std::string sign(std::string_view text) const;  // hex HMAC-SHA-256 under secret_
  std::string session_of(const httplib::Request& req) const;  // the cookie's value, ""
  Right session_right(const std::string& session) const;

  std::string write_token_, read_token_;
  bool reads_need_token_;
  std::string scheme_ = "http";  // the public URL's
  std::string public_origin_;    // scheme://host[:port] of the public URL, "" without one
  std::array<unsigned char, 32> secret_{};
};

}  // namespace twinbench::serve
