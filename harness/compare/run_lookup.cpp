// A branch comparison's questions answered from runs in memory (see run_lookup.h).
#include "harness/compare/run_lookup.h"

#include <algorithm>

#include "harness/compare/baseline.h"
#include "harness/compare/runs.h"

namespace twinbench::compare {

bool Hidden::hides(const store::RunRecord& run) const {
  if (test_hooks && !compare::test_hooks(run).empty()) return true;
  return !refs.empty() && imported(run) &&
         std::any_of(refs.begin(), refs.end(), [&](const std::string& ref) { return matches_ref(run, ref); });
}

namespace {

std::vector<RunView> visible(const std::vector<RunView>& all, const Hidden& hidden) {
  std::vector<RunView> out;
  for (const auto& v : all)
    if (!hidden.hides(v.run)) out.push_back(v);
  return out;
}

}  // namespace

bool VectorRuns::has_ref(const std::string& ref, bool made_here, const Hidden& hidden) const {
  return std::any_of(all_.begin(), all_.end(), [&](const RunView& v) {
    return matches_ref(v.run, ref) && !hidden.hides(v.run) && !(made_here && imported(v));
  });
}

std::vector<store::RunRecord> VectorRuns::imported_of_ref(const std::string& ref) const {
  std::vector<store::RunRecord> out;
  for (auto it = all_.rbegin(); it != all_.rend(); ++it)
    if (imported(*it) && matches_ref(it->run, ref)) out.push_back(it->run);
  return out;
}

std::vector<RunView> VectorRuns::latest_of_ref(const std::string& ref, const Hidden& hidden) const {
  return latest_runs_of_ref(visible(all_, hidden), ref);
}

std::vector<RunView> VectorRuns::at_commit(const std::string& commit, const Hidden& hidden) const {
  std::vector<RunView> out;
  for (const auto& v : all_)
    if (same_commit(v.run.git_commit, commit) && !hidden.hides(v.run)) out.push_back(v);
  return out;
}

bool VectorRuns::has_commit(const std::string& commit, const Hidden& hidden) const {
  return std::any_of(all_.begin(), all_.end(),
                     [&](const RunView& v) { return same_commit(v.run.git_commit, commit) && !hidden.hides(v.run); });
}

std::vector<std::string> VectorRuns::recent_refs(size_t limit) const {
  std::vector<store::RunRecord> newest_first;
  for (auto it = all_.rbegin(); it != all_.rend(); ++it) newest_first.push_back(it->run);
  return refs_of(newest_first, limit);
}

}  // namespace twinbench::compare
