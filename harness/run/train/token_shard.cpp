// Token shard I/O (see token_shard.h).
#include "harness/run/train/token_shard.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace twinbench {

std::vector<uint16_t> read_token_shard(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw ShardError(fmt::format("{}: cannot open token shard: {}", path, std::strerror(errno)));
  const auto size = static_cast<uint64_t>(in.tellg());
  in.seekg(0);
  constexpr uint64_t header_bytes = kShardHeaderWords * sizeof(int32_t);
  if (size < header_bytes)
    throw ShardError(fmt::format("{}: file is {} bytes, shorter than the {}-byte shard header", path, size,
                                 header_bytes));
  int32_t header[kShardHeaderWords];
  in.read(reinterpret_cast<char*>(header), header_bytes);
  if (header[0] != kShardMagic)
    throw ShardError(fmt::format("{}: bad magic {} (expected {}): not a token shard", path, header[0], kShardMagic));
  if (header[1] != kShardVersion)
    throw ShardError(fmt::format("{}: unsupported version {} (expected {})", path, header[1], kShardVersion));
  if (header[2] < 0) throw ShardError(fmt::format("{}: negative token count {}", path, header[2]));
  const auto count = static_cast<uint64_t>(header[2]);
  const uint64_t have = (size - header_bytes) / sizeof(uint16_t);
  if (have < count)
    throw ShardError(fmt::format("{}: header says {} tokens but the file holds only {} (truncated)", path, count,
                                 have));
  std::vector<uint16_t> tokens(count);
  in.read(reinterpret_cast<char*>(tokens.data()), static_cast<std::streamsize>(count * sizeof(uint16_t)));
  if (!in) throw ShardError(fmt::format("{}: read failed", path));
  return tokens;
}

void write_token_shard(const std::string& path, const std::vector<uint16_t>& tokens) {
  if (tokens.size() > static_cast<size_t>(INT32_MAX))
    throw ShardError(fmt::format("{}: {} tokens do not fit the header's int32 count", path, tokens.size()));
  int32_t header[kShardHeaderWords] = {};
  header[0] = kShardMagic;
  header[1] = kShardVersion;
  header[2] = static_cast<int32_t>(tokens.size());
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw ShardError(fmt::format("{}: cannot open for writing: {}", tmp, std::strerror(errno)));
    out.write(reinterpret_cast<const char*>(header), sizeof header);
    out.write(reinterpret_cast<const char*>(tokens.data()),
              static_cast<std::streamsize>(tokens.size() * sizeof(uint16_t)));
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw ShardError(fmt::format("{}: write failed (disk full?)", path));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw ShardError(fmt::format("{}: cannot rename into place: {}", path, std::strerror(errno)));
}

std::vector<uint16_t> byte_tokens(const std::string& text) {
  std::vector<uint16_t> out;
  out.reserve(text.size());
  for (unsigned char c : text) out.push_back(c);
  return out;
}

}  // namespace twinbench
