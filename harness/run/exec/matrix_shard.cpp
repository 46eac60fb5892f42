// Matrix shards (see matrix_shard.h).
#include "harness/run/exec/matrix_shard.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

namespace twinbench {

namespace {

// A whole non-negative decimal number, or nullopt.
std::optional<long> whole(const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::strtol(text.c_str(), nullptr, 10);
}

}  // namespace

MatrixShard parse_matrix_shard(const std::string& text) {
  const auto slash = text.find('/');
  const auto k = slash == std::string::npos ? std::nullopt : whole(text.substr(0, slash));
  const auto n = slash == std::string::npos ? std::nullopt : whole(text.substr(slash + 1));
  if (!k || !n || *n < 1 || *k < 1 || *k > *n)
    throw ConfigError("command line", "--shard",
                      fmt::format("'{}' is not K/N with 1 <= K <= N (e.g. --shard 2/3: the second of three)", text));
  return {static_cast<int>(*k), static_cast<int>(*n), "--shard"};
}

std::optional<MatrixShard> slurm_matrix_shard(const std::map<std::string, std::string>& env) {
  const auto get = [&](const char* name) -> std::string {
    const auto it = env.find(name);
    return it == env.end() ? "" : it->second;
  };
  const std::string id_text = get("SLURM_ARRAY_TASK_ID");
  if (id_text.empty()) return std::nullopt;
  const auto number = [&](const char* name, long fallback) {
    const std::string text = get(name);
    if (text.empty()) return fallback;
    const auto v = whole(text);
    if (!v) throw ConfigError("environment", name, fmt::format("'{}' is not a whole number", text));
    return *v;
  };
  const long id = number("SLURM_ARRAY_TASK_ID", 0), min = number("SLURM_ARRAY_TASK_MIN", 0);
  const long step = number("SLURM_ARRAY_TASK_STEP", 1), count = number("SLURM_ARRAY_TASK_COUNT", 0);
  if (count < 1)
    throw ConfigError("environment", "SLURM_ARRAY_TASK_COUNT",
                      "SLURM_ARRAY_TASK_ID is set but the array's task count is not (Slurm 17.11 or newer sets both)");
  if (step < 1 || id < min || (id - min) % step != 0 || (id - min) / step >= count)
    throw ConfigError("environment", "SLURM_ARRAY_TASK_ID",
                      fmt::format("task {} is not one of the {} tasks from {} in steps of {}", id, count, min, step));
  return MatrixShard{static_cast<int>((id - min) / step + 1), static_cast<int>(count), "SLURM_ARRAY_TASK_ID"};
}

std::vector<std::string> cases_of_shard(std::vector<std::string> names, const MatrixShard& shard) {
  std::sort(names.begin(), names.end());
  std::vector<std::string> out;
  for (size_t i = 0; i < names.size(); ++i)
    if (static_cast<int>(i % static_cast<size_t>(shard.count)) + 1 == shard.index) out.push_back(names[i]);
  return out;
}

std::vector<RunConfig> select_matrix_shard(const std::vector<RunConfig>& configs, const MatrixShard& shard) {
  std::vector<std::string> names;
  for (const auto& c : configs) names.push_back(c.case_name);
  const auto mine = cases_of_shard(names, shard);
  std::vector<RunConfig> out;
  for (const auto& c : configs)
    if (std::find(mine.begin(), mine.end(), c.case_name) != mine.end()) out.push_back(c);
  return out;
}

std::string shard_group(const std::string& group, const std::map<std::string, std::string>& env) {
  if (!group.empty()) return group;
  const auto job = env.find("SLURM_ARRAY_JOB_ID");
  if (job == env.end() || job->second.empty())
    throw ConfigError("command line", "--group",
                      "a sharded matrix needs --group ID, the same for every shard (e.g. the CI run id), so "
                      "that the shards' runs form one group");
  return "slurm-" + job->second;
}

std::map<std::string, std::string> process_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string::npos) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

}  // namespace twinbench
