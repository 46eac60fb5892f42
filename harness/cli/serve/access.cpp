// Tokens, sessions and CSRF (see access.h).
#include "harness/cli/serve/access.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <cctype>
#include <stdexcept>

namespace twinbench::serve {

namespace {

constexpr const char* kCookie = "twinbench_session";
constexpr auto kSessionLife = std::chrono::hours(12);

std::string hex(const unsigned char* bytes, size_t n) {
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; ++i) {
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 15];
  }
  return out;
}

int64_t now_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

bool same_secret(std::string_view given, std::string_view expected) {
  unsigned char a[SHA256_DIGEST_LENGTH], b[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(given.data()), given.size(), a);
  SHA256(reinterpret_cast<const unsigned char*>(expected.data()), expected.size(), b);
  return CRYPTO_memcmp(a, b, sizeof(a)) == 0;
}

Access::Access(std::string write_token, std::string read_token, bool reads_need_token, const std::string& public_url)
    : write_token_(std::move(write_token)), read_token_(std::move(read_token)), reads_need_token_(reads_need_token) {
  if (const size_t colon = public_url.find("://"); colon != std::string::npos) {
    scheme_ = public_url.substr(0, colon);
    for (char& c : scheme_) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const size_t path = public_url.find('/', colon + 3);
    public_origin_ = scheme_ + public_url.substr(colon, (path == std::string::npos ? public_url.size() : path) - colon);
  }
  if (RAND_bytes(secret_.data(), static_cast<int>(secret_.size())) != 1)
    throw std::runtime_error("serve: no random bytes for the session secret (OpenSSL RAND_bytes failed)");
}

std::string Access::sign(std::string_view text) const {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()), reinterpret_cast<const unsigned char*>(text.data()),
       text.size(), mac, &len);
  return hex(mac, len);
}

std::optional<std::string> Access::login(std::string_view token) const {
  // Both comparisons always run: the time says nothing of which token matched.
  const bool write = !write_token_.empty() && same_secret(token, write_token_);
  const bool read = !read_token_.empty() && same_secret(token, read_token_);
  if (!write && !read) return std::nullopt;
  unsigned char nonce[16];
  if (RAND_bytes(nonce, sizeof(nonce)) != 1) throw std::runtime_error("serve: no random bytes for a session");
  // nonce.right.expiry.mac: the server keeps no state, the secret makes it unforgeable.
  const std::string body =
      hex(nonce, sizeof(nonce)) + "." + (write ? "w" : "r") + "." +
      std::to_string(now_s() + std::chrono::duration_cast<std::chrono::seconds>(kSessionLife).count());
  return body + "." + sign(body);
}

std::string Access::cookie_header(const std::string& session) const {
  return std::string(kCookie) + "=" + session + "; Path=/; HttpOnly; SameSite=Strict" +
         (scheme_ == "https" ? "; Secure" : "") + (session.empty() ? "; Max-Age=0" : "");
}

bool Access::same_origin(const httplib::Request& req) const {
  const std::string origin = req.get_header_value("Origin");
  return origin.empty() || origin == scheme_ + "://" + req.get_header_value("Host") ||
         (!public_origin_.empty() && origin == public_origin_);
}

std::string Access::session_of(const httplib::Request& req) const {
  const std::string cookies = req.get_header_value("Cookie");
  const std::string key = std::string(kCookie) + "=";
  for (size_t at = 0; at < cookies.size();) {
    while (at < cookies.size() && (cookies[at] == ' ' || cookies[at] == ';')) ++at;
    const size_t end = std::min(cookies.find(';', at), cookies.size());
    if (cookies.compare(at, key.size(), key) == 0) return cookies.substr(at + key.size(), end - at - key.size());
    at = end;
  }
  return "";
}

Right Access::session_right(const std::string& session) const {
  const size_t mac_at = session.rfind('.');
  if (session.empty() || mac_at == std::string::npos || mac_at > 200) return Right::kNone;
  const std::string body = session.substr(0, mac_at);
  if (!same_secret(session.substr(mac_at + 1), sign(body))) return Right::kNone;
  // body = nonce.right.expiry (signed: well formed)
  const size_t a = body.find('.'), b = body.rfind('.');
  if (a == std::string::npos || b == a) return Right::kNone;
  if (std::stoll(body.substr(b + 1)) < now_s()) return Right::kNone;
  return body.substr(a + 1, b - a - 1) == "w" ? Right::kWrite : Right::kRead;
}

Right Access::right_of(const httplib::Request& req) const {
  const std::string auth = req.get_header_value("Authorization");
  if (!auth.empty()) {
    constexpr std::string_view kBearer = "Bearer ";
    if (auth.compare(0, kBearer.size(), kBearer) != 0) return Right::kNone;
    const std::string_view token = std::string_view(auth).substr(kBearer.size());
    const bool write = !write_token_.empty() && same_secret(token, write_token_);
    const bool read = !read_token_.empty() && same_secret(token, read_token_);
    return write ? Right::kWrite : read ? Right::kRead : Right::kNone;
  }
  const Right session = session_right(session_of(req));
  if (session != Right::kNone) return session;
  return reads_need_token_ ? Right::kNone : Right::kRead;
}

bool Access::by_cookie(const httplib::Request& req) const {
  return req.get_header_value("Authorization").empty() && session_right(session_of(req)) != Right::kNone;
}

std::string Access::csrf_of(const httplib::Request& req) const {
  const std::string session = session_of(req);
  return session_right(session) == Right::kNone ? std::string() : sign("csrf:" + session);
}

bool Access::csrf_ok(const httplib::Request& req, std::string_view csrf) const {
  const std::string expected = csrf_of(req);
  return !expected.empty() && same_secret(csrf, expected) && same_origin(req);
}

}  // namespace twinbench::serve
