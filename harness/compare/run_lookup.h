// What a branch comparison asks of the stored runs (baseline.h), as
// questions rather than a vector of every run: the store answers each in a
// few statements whatever it holds (runs.h: StoreRuns, the one answerer). The
// questions stand apart from the store so that baseline.h, which reports
// read, carries no store in.
#pragma once

#include <string>
#include <vector>

#include "harness/compare/run_view.h"

namespace twinbench::compare {

// Runs set aside from a comparison: imported runs that match (matches_ref)
// any of these refs (baseline.h: a ref's imported runs stand aside when it
// has runs twinbench made), and with `test_hooks` every run made with a
// planted-cause test hook (run_view.h): never a baseline.
struct Hidden {
  std::vector<std::string> refs;
  bool test_hooks = false;
  bool hides(const store::RunRecord& run) const;
};

class RunLookup {
 public:
  virtual ~RunLookup() = default;
  // Whether a run matches `ref` (matches_ref) and is not hidden; with
  // `made_here`, one that is not imported either.
  virtual bool has_ref(const std::string& ref, bool made_here, const Hidden& hidden) const = 0;
  // The imported runs that match `ref` (rows only, newest first).
  virtual std::vector<store::RunRecord> imported_of_ref(const std::string& ref) const = 0;
  // For each (case, variant, hardware): the runs of the newest group among
  // the runs that match `ref` and are not hidden; oldest first, with metrics.
  virtual std::vector<RunView> latest_of_ref(const std::string& ref, const Hidden& hidden) const = 0;
  // The runs made at `commit` (same_commit), not hidden; oldest first, with metrics.
  virtual std::vector<RunView> at_commit(const std::string& commit, const Hidden& hidden) const = 0;
  virtual bool has_commit(const std::string& commit, const Hidden& hidden) const = 0;
  // Refs of the newest runs — branch labels, commits' first 9 characters —
  // each once, newest last, at most `limit` (an error message's list).
  virtual std::vector<std::string> recent_refs(size_t limit) const = 0;
};

}  // namespace twinbench::compare
