// Sha256 over OpenSSL's EVP interface (libcrypto), the one digest API that is
// not deprecated in OpenSSL 3.
#include "harness/logs/sha256.h"

#include <stdexcept>

#include <openssl/evp.h>

namespace twinbench::logs {

namespace {

EVP_MD_CTX* as_ctx(void* p) { return static_cast<EVP_MD_CTX*>(p); }

}  // namespace

Sha256::Sha256() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(as_ctx(ctx_), EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(as_ctx(ctx_));
    throw std::runtime_error("SHA-256: OpenSSL could not initialise a digest");
  }
}

Sha256::~Sha256() { EVP_MD_CTX_free(as_ctx(ctx_)); }

void Sha256::update(const void* data, size_t size) {
  if (finished_) throw std::logic_error("SHA-256: update after hex_digest()");
  if (size > 0 && EVP_DigestUpdate(as_ctx(ctx_), data, size) != 1)
    throw std::runtime_error("SHA-256: digest update failed");
}

std::string Sha256::hex_digest() {
  if (finished_) throw std::logic_error("SHA-256: hex_digest() called twice");
  finished_ = true;
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_DigestFinal_ex(as_ctx(ctx_), digest, &length) != 1)
    throw std::runtime_error("SHA-256: digest final failed");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * length);
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

std::string sha256_hex(std::string_view text) {
  Sha256 hash;
  hash.update(text);
  return hash.hex_digest();
}

}  // namespace twinbench::logs
