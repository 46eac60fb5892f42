// Sessions of interleaved pairs in the store (see sessions.h).
#include "harness/compare/sessions.h"

#include <set>

namespace twinbench::compare {

bool interleaved(const std::vector<const RunView*>& a, const std::vector<const RunView*>& b) {
  if (a.empty() || b.empty()) return false;
  const std::string& group = a.front()->run.group_id;
  std::set<int> repeats_a;
  for (const RunView* r : a) {
    if (r->run.group_id != group) return false;
    repeats_a.insert(r->run.repeat_index);
  }
  std::set<int> shared;
  for (const RunView* r : b) {
    if (r->run.group_id != group) return false;
    if (repeats_a.count(r->run.repeat_index)) shared.insert(r->run.repeat_index);
  }
  return shared.size() >= 2;
}

}  // namespace twinbench::compare
