// Token shards: round trip and every malformed-file error names file and problem.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "harness/run/train/token_shard.h"

namespace twinbench {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) {
  const auto dir = fs::temp_directory_path() / "twinbench_shard_test";
  fs::create_directories(dir);
  return (dir / name).string();
}

void write_raw(const std::string& path, int32_t magic, int32_t version, int32_t count, size_t tokens) {
  int32_t header[256] = {};
  header[0] = magic;
  header[1] = version;
  header[2] = count;
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(header), sizeof header);
  std::vector<uint16_t> data(tokens, 7);
  out.write(reinterpret_cast<const char*>(data.data()), static_cast<std::streamsize>(data.size() * 2));
}

std::string error_of(const std::string& path) {
  try {
    read_token_shard(path);
  } catch (const ShardError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(TokenShard, RoundTrip) {
  const auto path = temp_path("ok.bin");
  const std::vector<uint16_t> tokens = {1, 2, 65535, 0, 42};
  write_token_shard(path, tokens);
  EXPECT_EQ(read_token_shard(path), tokens);
  EXPECT_EQ(fs::file_size(path), 1024u + 10u);
}

TEST(TokenShard, ByteTokenizer) {
  EXPECT_EQ(byte_tokens("Hi\xff"), (std::vector<uint16_t>{72, 105, 255}));
}

TEST(TokenShard, BadMagic) {
  const auto path = temp_path("magic.bin");
  write_raw(path, 1234, 1, 4, 4);
  const auto msg = error_of(path);
  EXPECT_NE(msg.find(path), std::string::npos);
  EXPECT_NE(msg.find("bad magic 1234"), std::string::npos) << msg;
}

TEST(TokenShard, BadVersion) {
  const auto path = temp_path("version.bin");
  write_raw(path, kShardMagic, 2, 4, 4);
  EXPECT_NE(error_of(path).find("unsupported version 2"), std::string::npos);
}

TEST(TokenShard, CountBeyondFile) {
  const auto path = temp_path("count.bin");
  write_raw(path, kShardMagic, 1, 100, 10);
  const auto msg = error_of(path);
  EXPECT_NE(msg.find("header says 100 tokens but the file holds only 10"), std::string::npos) << msg;
}

TEST(TokenShard, ShorterThanHeader) {
  const auto path = temp_path("short.bin");
  std::ofstream(path) << "tiny";
  EXPECT_NE(error_of(path).find("shorter than the 1024-byte shard header"), std::string::npos);
}

TEST(TokenShard, Missing) {
  EXPECT_NE(error_of(temp_path("does-not-exist.bin")).find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace twinbench
