// Asking git in the current checkout what a revision names, so that users can
// type the refs they know (`HEAD`, `HEAD~1`, a tag, any branch) where twinbench
// stores a branch label and a commit hash, and where two refs' histories meet
// (the merge-base a branch is compared at).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace twinbench {

// The full commit hash `git rev-parse --verify --quiet REV^{commit}` prints in
// the current directory; nullopt when git is missing, this is not a checkout or
// REV names no commit. Never throws.
std::optional<std::string> git_commit_of(const std::string& revision);

// `git merge-base A B`: the best common ancestor of two commits (full hash);
// nullopt when git cannot tell (not a checkout, an unknown commit, unrelated
// histories). Never throws.
std::optional<std::string> git_merge_base(const std::string& a, const std::string& b);

// `git rev-list --topo-order --max-count=LIMIT REV`: REV and its ancestors, the
// nearest first (full hashes); empty when git cannot tell. Never throws.
std::vector<std::string> git_ancestors(const std::string& revision, size_t limit);

}  // namespace twinbench
