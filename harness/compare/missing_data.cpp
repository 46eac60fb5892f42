// Stopped series (see missing_data.h).
#include "harness/compare/missing_data.h"

#include <map>
#include <set>

namespace twinbench::compare {

std::string since_last_good(const StoppedSeries& s) {
  if (!s.latest_status) return "no runs";
  return std::string(to_string(*s.latest_status)) + (s.latest_reason.empty() ? "" : ": " + s.latest_reason);
}

MissingData find_missing_data(const std::vector<RunView>& runs, const std::string& first_day) {
  std::map<std::string, std::string> group_day;  // a group's night: the day of its first run
  std::map<std::string, std::set<std::string>> group_cases;
  for (const auto& v : runs) {
    if (v.run.started_at.size() < 10 || v.run.started_at.substr(0, 10) < first_day) continue;
    group_day.try_emplace(v.run.group_id, v.run.started_at.substr(0, 10));
    group_cases[v.run.group_id].insert(v.run.case_name);
  }
  std::set<std::string> nights;
  for (const auto& [group, cases] : group_cases)
    if (cases.size() > 1) nights.insert(group_day.at(group));
  return find_missing_data(runs, group_day, nights);
}

MissingData find_missing_data(const std::vector<RunView>& runs, const std::map<std::string, std::string>& group_day,
                              const std::set<std::string>& nights) {
  MissingData out;
  out.nights = nights.size();
  if (nights.empty()) return out;
  out.newest_night = *nights.rbegin();

  struct Key {
    std::string good_day, good_group;
    const RunView* latest = nullptr;  // the newest run of the key
  };
  std::map<std::pair<std::string, std::string>, Key> keys;
  std::vector<std::pair<std::string, std::string>> order;
  for (const auto& v : runs) {
    const auto day = group_day.find(v.run.group_id);
    if (day == group_day.end()) continue;
    const std::pair<std::string, std::string> key{v.run.case_name, v.run.variant};
    auto [it, added] = keys.try_emplace(key);
    if (added) order.push_back(key);
    it->second.latest = &v;
    if (v.run.status == RunStatus::completed && day->second >= it->second.good_day) {
      it->second.good_day = day->second;
      it->second.good_group = v.run.group_id;
    }
  }
  for (const auto& key : order) {
    const Key& k = keys.at(key);
    if (k.good_day.empty() || k.good_day >= out.newest_night) continue;
    StoppedSeries s;
    s.case_name = key.first;
    s.variant = key.second;
    s.last_good_night = k.good_day;
    s.last_good_group = k.good_group;
    for (const auto& night : nights) s.nights_missed += night > k.good_day ? 1 : 0;
    const RunView& latest = *k.latest;
    if (latest.run.group_id != k.good_group) {  // else nothing at all after its last good night
      s.latest_status = latest.run.status;
      s.latest_reason = latest.run.reason;
    }
    out.stopped.push_back(std::move(s));
  }
  return out;
}

}  // namespace twinbench::compare
