// Spreading a matrix across machines through the scheduler the user already
// has (a CI matrix, a Slurm job array; docs/fleet.md): `matrix --shard K/N`
// runs a deterministic part of the matrix. The unit is a case: every variant
// and repeat of a case runs in the same shard, so its interleaved pairs stay
// on one host and its paired verdicts stay paired. Cases sorted by name, the
// i-th (from 0) belongs to shard i mod N + 1, so the N shards together run
// exactly the unsharded matrix, each case once.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/base/config.h"

namespace twinbench {

struct MatrixShard {
  int index = 1;  // K, from 1
  int count = 1;  // N
  std::string source;  // "--shard" or "SLURM_ARRAY_TASK_ID": what chose it, for messages
};

// "K/N" with 1 <= K <= N; ConfigError naming --shard otherwise.
MatrixShard parse_matrix_shard(const std::string& text);

// The shard of a Slurm array task: K from SLURM_ARRAY_TASK_ID (less
// SLURM_ARRAY_TASK_MIN, over SLURM_ARRAY_TASK_STEP), N from
// SLURM_ARRAY_TASK_COUNT; nullopt outside an array. `env` maps variable names
// to values (the process environment in the CLI). ConfigError for values that
// do not make a shard.
std::optional<MatrixShard> slurm_matrix_shard(const std::map<std::string, std::string>& env);

// The case names of shard K of N, from all of them (any order, no duplicates).
std::vector<std::string> cases_of_shard(std::vector<std::string> names, const MatrixShard& shard);

// The configs whose case belongs to the shard, in the given order.
std::vector<RunConfig> select_matrix_shard(const std::vector<RunConfig>& configs, const MatrixShard& shard);

// The group a sharded matrix's runs share with the other shards' wherever
// they ran: `group` when given, else the Slurm array job's
// ("slurm-<SLURM_ARRAY_JOB_ID>"), else a ConfigError naming --group.
std::string shard_group(const std::string& group, const std::map<std::string, std::string>& env);

// This process's environment as a map (what slurm_matrix_shard and shard_group read).
std::map<std::string, std::string> process_environment();

}  // namespace twinbench
