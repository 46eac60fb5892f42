// Sessions of interleaved pairs in the store (see sessions.h).
#include "harness/compare/sessions.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

namespace twinbench::compare {

namespace {

size_t looks_of(const RunView& run) {
  const auto j = nlohmann::json::parse(run.run.provenance_json, nullptr, false);
  if (!j.is_object() || !j.contains("sequential_looks") || !j["sequential_looks"].is_number_integer()) return 0;
  return static_cast<size_t>(std::max<int64_t>(0, j["sequential_looks"].get<int64_t>()));
}

}  // namespace

size_t sequential_looks(const std::vector<const RunView*>& a, const std::vector<const RunView*>& b) {
  size_t looks = 0;
  for (const auto* side : {&a, &b})
    for (const RunView* r : *side) looks = std::max(looks, looks_of(*r));
  return looks;
}

size_t sequential_looks(const std::vector<RunView>& runs) {
  size_t looks = 0;
  for (const RunView& r : runs) looks = std::max(looks, looks_of(r));
  return looks;
}

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
