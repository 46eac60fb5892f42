// Token shard files in the seed trainers' format: 256 little-endian int32 header
// words (magic 20240520, version 1, token count, rest zero), then `count` uint16
// tokens. Plus a byte-level tokenizer that turns any text into such a shard.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace twinbench {

inline constexpr int32_t kShardMagic = 20240520;
inline constexpr int32_t kShardVersion = 1;
inline constexpr int kShardHeaderWords = 256;

class ShardError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads and checks a shard; every error names the file and what is wrong.
std::vector<uint16_t> read_token_shard(const std::string& path);
void write_token_shard(const std::string& path, const std::vector<uint16_t>& tokens);

// Byte-level tokenizer: token = byte value (vocabulary 256).
std::vector<uint16_t> byte_tokens(const std::string& text);

}  // namespace twinbench
