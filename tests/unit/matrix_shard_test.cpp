// run/exec/matrix_shard: `matrix --shard K/N` and Slurm array tasks split the matrix by
// whole cases; the shards together are exactly the unsharded matrix.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/run/exec/matrix_shard.h"

namespace twinbench {
namespace {

std::vector<std::string> case_list(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("case_" + std::string(1, static_cast<char>('a' + (i * 7) % 26)) +
                                            std::to_string(i));
  return out;
}

TEST(MatrixShard, UnionOfTheShardsIsTheMatrixEachCaseOnce) {
  for (int cases = 0; cases <= 12; ++cases) {
    const auto names = case_list(cases);
    for (int n = 1; n <= 9; ++n) {
      std::multiset<std::string> seen;
      size_t largest = 0, smallest = names.size();
      for (int k = 1; k <= n; ++k) {
        const auto part = cases_of_shard(names, {k, n, "--shard"});
        seen.insert(part.begin(), part.end());
        largest = std::max(largest, part.size());
        smallest = std::min(smallest, part.size());
      }
      EXPECT_EQ(seen, std::multiset<std::string>(names.begin(), names.end())) << cases << " cases, " << n << " shards";
      EXPECT_LE(largest - std::min(largest, smallest), 1u) << "shards differ by at most one case";
    }
  }
}

TEST(MatrixShard, DeterministicWhateverTheOrderGiven) {
  auto names = case_list(8);
  const auto first = cases_of_shard(names, {2, 3, ""});
  std::reverse(names.begin(), names.end());
  EXPECT_EQ(cases_of_shard(names, {2, 3, ""}), first);
  // The repository's eight cases over three shards, by name.
  const std::vector<std::string> repo = {"01_base", "02_bf16", "03_dropout", "04_int8", "05_fp8", "06_1b", "07_8b",
                                         "08_ddp"};
  EXPECT_EQ(cases_of_shard(repo, {1, 3, ""}), (std::vector<std::string>{"01_base", "04_int8", "07_8b"}));
  EXPECT_EQ(cases_of_shard(repo, {2, 3, ""}), (std::vector<std::string>{"02_bf16", "05_fp8", "08_ddp"}));
  EXPECT_EQ(cases_of_shard(repo, {3, 3, ""}), (std::vector<std::string>{"03_dropout", "06_1b"}));
}

TEST(MatrixShard, WholeCasesKeepTheirPairsTogether) {
  // Every variant and repeat of a case (its interleaved pairs) lands in one shard.
  std::vector<RunConfig> configs(5);
  for (size_t i = 0; i < configs.size(); ++i) configs[i].case_name = "c" + std::to_string(i);
  std::map<std::string, int> shard_of;
  for (int k = 1; k <= 2; ++k)
    for (const auto& c : select_matrix_shard(configs, {k, 2, ""})) {
      EXPECT_FALSE(shard_of.count(c.case_name)) << c.case_name << " in two shards";
      shard_of[c.case_name] = k;
    }
  EXPECT_EQ(shard_of.size(), configs.size());
}

TEST(MatrixShard, ParsesKOfNAndRefusesTheRest) {
  const auto s = parse_matrix_shard("2/3");
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 3);
  for (const char* bad : {"0/3", "4/3", "3", "/3", "1/", "a/b", "1/0", "-1/3", "1/3/5", ""})
    EXPECT_THROW(parse_matrix_shard(bad), ConfigError) << bad;
}

TEST(MatrixShard, SlurmArrayTasksBecomeShards) {
  EXPECT_FALSE(slurm_matrix_shard({}));
  const auto first = slurm_matrix_shard({{"SLURM_ARRAY_TASK_ID", "0"}, {"SLURM_ARRAY_TASK_COUNT", "4"}});
  ASSERT_TRUE(first);
  EXPECT_EQ(first->index, 1);
  EXPECT_EQ(first->count, 4);
  // --array=1-4: ids from 1.
  const auto last = slurm_matrix_shard(
      {{"SLURM_ARRAY_TASK_ID", "4"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_COUNT", "4"}});
  ASSERT_TRUE(last);
  EXPECT_EQ(last->index, 4);
  // --array=0-8:4 (ids 0, 4, 8).
  const auto stepped = slurm_matrix_shard({{"SLURM_ARRAY_TASK_ID", "8"}, {"SLURM_ARRAY_TASK_MIN", "0"},
                                           {"SLURM_ARRAY_TASK_STEP", "4"}, {"SLURM_ARRAY_TASK_COUNT", "3"}});
  ASSERT_TRUE(stepped);
  EXPECT_EQ(stepped->index, 3);
  EXPECT_THROW(slurm_matrix_shard({{"SLURM_ARRAY_TASK_ID", "1"}}), ConfigError);  // no count
  EXPECT_THROW(slurm_matrix_shard({{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "2"}}), ConfigError);
  EXPECT_THROW(slurm_matrix_shard({{"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_ARRAY_TASK_COUNT", "2"}}), ConfigError);
}

}  // namespace
}  // namespace twinbench
