// Allocation sites and the peak tracker (see attribution.h).
#include "models/device/attribution.h"

#include <algorithm>

namespace twinbench::device {

namespace {

struct SiteTable {
  std::mutex mutex;
  std::unordered_map<std::string, SiteId> ids;
  std::vector<std::string> names{""};  // index 0: kNoSite
};

SiteTable& sites() {
  static SiteTable* table = new SiteTable();  // never destroyed: allocators may ask during exit
  return *table;
}

thread_local SiteId t_current_site = kNoSite;

}  // namespace

SiteId intern_site(std::string_view name) {
  if (name.empty()) return kNoSite;
  SiteTable& t = sites();
  std::lock_guard<std::mutex> lock(t.mutex);
  const auto [it, added] = t.ids.try_emplace(std::string(name), static_cast<SiteId>(t.names.size()));
  if (added) t.names.emplace_back(name);
  return it->second;
}

std::string site_name(SiteId id) {
  SiteTable& t = sites();
  std::lock_guard<std::mutex> lock(t.mutex);
  return id > 0 && static_cast<size_t>(id) < t.names.size() ? t.names[static_cast<size_t>(id)] : std::string();
}

void set_current_site(SiteId id) { t_current_site = id; }
SiteId current_site() { return t_current_site; }

void PeakTracker::begin(int64_t live_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  live_.clear();
  untracked_ = std::max<int64_t>(0, live_bytes);
  tracked_ = 0;
  peak_ = untracked_;
  peak_site_ = kNoSite;
  peak_pending_ = true;  // nothing may ever exceed what is held now
  at_peak_ = PeakSnapshot{};
  active_.store(true, std::memory_order_relaxed);
}

void PeakTracker::snapshot_locked() {
  at_peak_.peak_bytes = peak_;
  at_peak_.untracked_bytes = untracked_;
  at_peak_.peak_site = peak_site_;
  at_peak_.at_peak.clear();
  at_peak_.at_peak.reserve(live_.size());
  for (const auto& [address, block] : live_) at_peak_.at_peak.push_back(block);
  peak_pending_ = false;
}

void PeakTracker::on_alloc(uintptr_t address, int64_t bytes) {
  if (!active()) return;
  const SiteId site = current_site();
  std::lock_guard<std::mutex> lock(mutex_);
  live_[address] = LiveBlock{next_serial_++, address, bytes, site};
  tracked_ += bytes;
  if (untracked_ + tracked_ > peak_) {
    peak_ = untracked_ + tracked_;
    peak_site_ = site;
    peak_pending_ = true;
  }
}

void PeakTracker::on_free(uintptr_t address, int64_t bytes) {
  if (!active()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (peak_pending_) snapshot_locked();  // the total is about to fall below its peak
  const auto it = live_.find(address);
  if (it == live_.end()) {
    untracked_ = std::max<int64_t>(0, untracked_ - bytes);
    return;
  }
  tracked_ -= it->second.bytes;
  live_.erase(it);
}

PeakSnapshot PeakTracker::end() {
  std::lock_guard<std::mutex> lock(mutex_);
  active_.store(false, std::memory_order_relaxed);
  if (peak_pending_) snapshot_locked();
  PeakSnapshot out = std::move(at_peak_);
  out.live_now.reserve(live_.size());
  for (const auto& [address, block] : live_) out.live_now.push_back(block);
  live_.clear();
  at_peak_ = PeakSnapshot{};
  return out;
}

}  // namespace twinbench::device
