// Choosing the sides of a branch comparison (see baseline.h).
#include "harness/compare/baseline.h"

#include "harness/compare/runs.h"
#include "harness/compare/run_lookup.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>

#include "harness/base/git.h"
#include "harness/compare/sessions.h"

namespace twinbench::compare {

namespace {

constexpr size_t kAncestorsSearched = 1000;

std::string short_hash(const std::string& commit) { return commit.substr(0, 9); }

// For each (case, variant): the runs of the newest group among `runs` that `keep` accepts.
std::vector<RunView> newest_groups(const std::vector<RunView>& all, const std::function<bool(const RunView&)>& keep) {
  std::map<std::pair<std::string, std::string>, std::string> newest;
  for (const auto& v : all)
    if (keep(v)) newest[{v.run.case_name, v.run.variant}] = v.run.group_id;
  std::vector<RunView> out;
  for (const auto& v : all) {
    const auto it = newest.find({v.run.case_name, v.run.variant});
    if (it != newest.end() && it->second == v.run.group_id && keep(v)) out.push_back(v);
  }
  return out;
}

std::string commit_of(const std::vector<RunView>& runs) {
  std::set<std::string> commits;
  for (const auto& v : runs) commits.insert(v.run.git_commit);
  return commits.size() == 1 ? *commits.begin() : "";
}

// Whether every (case, variant) the candidate has is, on both sides, one interleaved session.
bool one_session(const std::vector<RunView>& base, const std::vector<RunView>& cand) {
  if (base.empty() || cand.empty()) return false;
  for (const auto& name : case_names(cand)) {
    std::set<std::string> variants;
    for (const auto& v : cand)
      if (v.run.case_name == name) variants.insert(v.run.variant);
    for (const auto& variant : variants)
      if (!interleaved(select(base, name, variant), select(cand, name, variant))) return false;
  }
  return true;
}

}  // namespace

bool same_commit(const std::string& stored, const std::string& commit) {
  if (stored.empty() || commit.empty()) return false;
  return stored == commit || (stored.size() >= 7 && commit.rfind(stored, 0) == 0);
}

namespace {

// The sides among the runs `hidden` leaves (imported runs set aside).
BranchSides choose_sides(const RunLookup& runs, const Hidden& hidden, const std::string& baseline_ref,
                         const std::string& candidate_ref, BaselineAt at) {
  BranchSides s;
  const std::string cand_key = resolve_ref(runs, candidate_ref, "candidate", hidden);
  s.candidate = runs.latest_of_ref(cand_key, hidden);
  if (s.candidate.empty())
    throw std::invalid_argument(fmt::format("no runs of candidate ref '{}' in the store", candidate_ref));
  s.candidate_commit = s.candidate.back().run.git_commit;  // the newest candidate run's

  // A run made with a planted-cause test hook is never a baseline (run_view.h test_hooks).
  Hidden base_hidden = hidden;
  base_hidden.test_hooks = true;
  std::string base_key;
  try {
    base_key = resolve_ref(runs, baseline_ref, "baseline", hidden);
  } catch (const std::invalid_argument&) {
    // At the merge-base, a ref git knows needs no runs of its own at its tip.
    if (at == BaselineAt::kTip || !git_commit_of(baseline_ref)) throw;
    base_key = baseline_ref;
  }
  const auto tip = runs.latest_of_ref(base_key, base_hidden);
  // An interleaved session (ab, the branch gate): both sides as the session made them.
  if (one_session(tip, s.candidate)) {
    s.baseline = tip;
    s.session = true;
    s.baseline_commit = commit_of(tip);
    s.how = fmt::format("both sides from the interleaved session {} (baseline {} at {}, candidate {} at {})",
                        s.candidate.front().run.group_id, baseline_ref, short_hash(s.baseline_commit), candidate_ref,
                        short_hash(s.candidate_commit));
    return s;
  }
  if (at == BaselineAt::kTip) {
    if (tip.empty())
      throw std::invalid_argument(fmt::format(
          "no runs of baseline ref '{}' in the store that can be a baseline (runs made with test hooks never are)",
          baseline_ref));
    s.baseline = tip;
    s.baseline_commit = commit_of(tip);
    s.how = fmt::format("baseline: the newest runs of {}{} (--baseline-at tip)", baseline_ref,
                        s.baseline_commit.empty() ? "" : " at " + short_hash(s.baseline_commit));
    return s;
  }

  // The merge-base of the candidate's commit and the baseline's tip.
  const auto git_tip = git_commit_of(baseline_ref);
  const std::string base_tip = git_tip ? *git_tip : (tip.empty() ? "" : tip.back().run.git_commit);
  if (s.candidate_commit.empty() && base_tip.empty()) {
    // Neither side records a commit (imported logs, labelled directories): there is
    // no history to take a merge-base in, only the baseline's newest runs.
    if (tip.empty()) throw std::invalid_argument(fmt::format("no runs of baseline ref '{}' in the store", baseline_ref));
    s.baseline = tip;
    s.how = fmt::format("baseline: the newest runs of {} (no commits recorded, so no merge-base)", baseline_ref);
    return s;
  }
  // One commit on both sides is its own merge-base, whether or not git is at hand.
  const auto merge_base = same_commit(s.candidate_commit, base_tip) ? std::optional<std::string>(base_tip)
                                                                    : git_merge_base(s.candidate_commit, base_tip);
  if (!merge_base)
    throw std::invalid_argument(fmt::format(
        "cannot find the merge-base of baseline {} ({}) and candidate {} ({}) here: git does not know both commits "
        "(run inside the repository's checkout), or compare with the baseline's newest runs: --baseline-at tip",
        baseline_ref, base_tip.empty() ? "no commit" : short_hash(base_tip), candidate_ref,
        short_hash(s.candidate_commit)));
  // The baseline ref's own runs at the merge-base; else any runs made at that commit
  // (the same code, under another label), never the candidate's own.
  const auto at_merge_base = runs.at_commit(*merge_base, base_hidden);
  s.baseline = newest_groups(at_merge_base, [&](const RunView& v) { return matches_ref(v.run, base_key); });
  if (s.baseline.empty())
    s.baseline = newest_groups(at_merge_base, [&](const RunView& v) { return !matches_ref(v.run, cand_key); });
  if (s.baseline.empty()) {
    const auto ancestors = git_ancestors(*merge_base, kAncestorsSearched);
    std::string nearest;
    size_t distance = 0;
    for (size_t i = 1; i < ancestors.size() && nearest.empty(); ++i)
      if (runs.has_commit(ancestors[i], base_hidden)) {
        nearest = ancestors[i];
        distance = i;
      }
    const std::string where = fmt::format("no runs at the merge-base {} of baseline {} and candidate {}",
                                          short_hash(*merge_base), baseline_ref, candidate_ref);
    if (nearest.empty())
      throw std::invalid_argument(fmt::format("{}, nor at any of its {} nearest ancestors; run the baseline at {}, or "
                                              "compare with the baseline's newest runs: --baseline-at tip",
                                              where, ancestors.size(), short_hash(*merge_base)));
    throw std::invalid_argument(fmt::format(
        "{}; the nearest ancestor with runs is {} ({} commit{} earlier): compare with it explicitly (--baseline {}), "
        "run the baseline at {}, or compare with the baseline's newest runs: --baseline-at tip",
        where, short_hash(nearest), distance, distance == 1 ? "" : "s", short_hash(nearest), short_hash(*merge_base)));
  }
  s.baseline_commit = *merge_base;
  s.how = fmt::format("baseline: runs at the merge-base {} of {} and {} (candidate at {}){}", short_hash(*merge_base),
                      baseline_ref, candidate_ref, short_hash(s.candidate_commit),
                      same_commit(base_tip, *merge_base) ? "" : fmt::format("; {} has moved on to {} since (--baseline-at tip compares with that)",
                                                                            baseline_ref, short_hash(base_tip)));
  return s;
}

}  // namespace

BranchSides select_branch_sides(const RunLookup& runs, const std::string& baseline_ref,
                                const std::string& candidate_ref, BaselineAt at, bool with_imported) {
  // A ref's imported runs stand aside when it has runs twinbench made.
  const bool own_baseline = runs.has_ref(baseline_ref, /*made_here=*/true, {});
  const bool own_candidate = runs.has_ref(candidate_ref, /*made_here=*/true, {});
  Hidden hidden;
  size_t left_base = 0, left_cand = 0;  // imported runs set aside, per ref
  if (!with_imported) {
    if (own_baseline) {
      hidden.refs.push_back(baseline_ref);
      left_base = runs.imported_of_ref(baseline_ref).size();
    }
    if (own_candidate) {
      hidden.refs.push_back(candidate_ref);
      for (const auto& r : runs.imported_of_ref(candidate_ref))
        if (!(own_baseline && matches_ref(r, baseline_ref))) ++left_cand;
    }
  }
  BranchSides s = choose_sides(runs, hidden, baseline_ref, candidate_ref, at);
  s.imported_left_out = left_base + left_cand;
  std::string left;
  for (const auto& [n, ref] : {std::pair{left_base, baseline_ref}, std::pair{left_cand, candidate_ref}})
    if (n > 0) left += fmt::format("{}{} imported run{} of {}", left.empty() ? "" : " and ", n, n == 1 ? "" : "s", ref);
  if (!left.empty()) s.how += "; " + left + " left out (--with-imported)";
  return s;
}

}  // namespace twinbench::compare
