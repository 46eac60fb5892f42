// SHA-256 of a byte stream, fed piece by piece (OpenSSL's EVP digest API), so
// that an imported log is hashed while it is read, never held whole.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace twinbench::logs {

class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;

  void update(const void* data, size_t size);
  void update(std::string_view text) { update(text.data(), text.size()); }
  // Lowercase hex digest of everything fed so far; the hasher is finished
  // afterwards (further updates are an error).
  std::string hex_digest();

 private:
  void* ctx_;  // EVP_MD_CTX*, kept opaque so that users need no OpenSSL headers
  bool finished_ = false;
};

// One-shot convenience: the lowercase hex SHA-256 of `text`.
std::string sha256_hex(std::string_view text);

}  // namespace twinbench::logs
