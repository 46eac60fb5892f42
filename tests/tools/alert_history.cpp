// twinbench_alert_history: writes a fixed 30-night history into a store, with
// the findings of every alert kind, for the store fixtures of an earlier schema
// (tests/data/store/README.md, v7): nights 2026-10-01 .. 2026-10-30 of a
// nightly matrix, and branch runs.
//
//   01_base / functional   0.100 s, +10% from night 15     -> a change alert
//   02_bf16 / module       0.150 s, no runs after night 25  -> a missing alert
//   03_dropout / module    0.120 s, fails from night 29     -> a failure alert
//   02_bf16 / functional   0.080 s, flat
//   branch feat (3 runs of 01_base / functional at 0.130 s) against main's
//   3 at 0.100 s                                            -> a branch alert
//
//   twinbench_alert_history STORE
#include <fmt/format.h>

#include <cstdio>
#include <exception>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/store/store.h"

namespace {

using namespace twinbench;

store::RunBundle run(const std::string& case_name, const std::string& variant, const std::string& group,
                     const std::string& started_at, const std::string& commit, const std::string& branch,
                     double step_time, RunStatus status, int repeat = 0) {
  store::RunBundle b;
  b.run.run_id = store::new_uuid();
  b.run.group_id = group;
  b.run.case_name = case_name;
  b.run.variant = variant;
  b.run.repeat_index = repeat;
  b.run.status = status;
  b.run.reason = status == RunStatus::completed ? "" : "planted failure";
  b.run.started_at = started_at;
  b.run.git_commit = commit;
  b.run.git_branch = branch;
  b.run.provenance_json = nlohmann::json({{"git_commit", commit}, {"git_branch", branch}, {"device_name", "cpu"},
                                          {"host_cores", 2}, {"cpu_model", "test cpu"}})
                              .dump();
  if (status == RunStatus::completed)
    b.metrics = {{"step_time_median_s", step_time}, {"final_loss", 2.5}, {"peak_memory_bytes", 1048576}};
  return b;
}

// A deterministic wobble of +-0.5% (never a level change).
double wobble(int k, int series) { return 1 + 0.005 * (((k * 7 + series * 3) % 5) - 2) / 2.0; }

std::string commit_of(int k) { return fmt::format("{:07x}{}", 0xa000000 + k, std::string(33, 'c')); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: twinbench_alert_history STORE\n");
    return 2;
  }
  try {
    std::vector<store::RunBundle> runs;
    for (int k = 1; k <= 30; ++k) {
      int n = 0;
      const std::string group = fmt::format("nightly-{}", k);
      const auto add = [&](const char* c, const char* v, double t, int series, RunStatus status) {
        runs.push_back(run(c, v, group, fmt::format("2026-10-{:02}T02:{:02}:00.000Z", k, n++), commit_of(k), "main",
                           t * wobble(k, series), status));
      };
      add("01_base", "functional", k >= 15 ? 0.110 : 0.100, 0, RunStatus::completed);
      if (k <= 25) add("02_bf16", "module", 0.150, 1, RunStatus::completed);
      add("03_dropout", "module", 0.120, 2, k >= 29 ? RunStatus::failed : RunStatus::completed);
      add("02_bf16", "functional", 0.080, 3, RunStatus::completed);
    }
    const std::string main_head = std::string(40, '1'), feat_head = std::string(40, '2');
    for (int r = 0; r < 3; ++r) {
      runs.push_back(run("01_base", "functional", "main-1", fmt::format("2026-10-31T10:0{}:00.000Z", r), main_head,
                         "main", 0.100 * wobble(r, 0), RunStatus::completed, r));
      runs.push_back(run("01_base", "functional", "feat-1", fmt::format("2026-10-31T11:0{}:00.000Z", r), feat_head,
                         "feat", 0.130 * wobble(r, 1), RunStatus::completed, r));
    }
    store::Store db(argv[1]);
    db.import_runs(runs);
    std::printf("%zu runs written\n", runs.size());
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "twinbench_alert_history: %s\n", e.what());
    return 1;
  }
}
