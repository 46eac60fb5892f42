// Asking git in the current checkout what a revision names, so that users can
// type the refs they know (`HEAD`, `HEAD~1`, a tag, any branch) where twinbench
// stores a branch label and a commit hash.
#pragma once

#include <optional>
#include <string>

namespace twinbench {

// The full commit hash `git rev-parse --verify --quiet REV^{commit}` prints in
// the current directory; nullopt when git is missing, this is not a checkout or
// REV names no commit. Never throws.
std::optional<std::string> git_commit_of(const std::string& revision);

}  // namespace twinbench
