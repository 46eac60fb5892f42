// The why of a verdict (see explain_analysis.h).
#include "harness/compare/explain_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "harness/compare/family.h"
#include "harness/metrics/op_categories.h"
#include "harness/stats/difference.h"

namespace twinbench::compare {

namespace {

constexpr const char* kOutsideOps = "outside ops";

// One side's profiled runs, parsed, by repeat index.
struct SideProfiles {
  std::vector<const RunView*> runs;
  std::vector<RunProfile> profiles;
  std::vector<int> repeats;
};

SideProfiles parse(const std::vector<const RunView*>& runs) {
  SideProfiles s;
  for (const RunView* r : runs) {
    if (r->run.status != RunStatus::completed) continue;
    auto p = profile_of(*r);
    if (!p || p->steps <= 0) continue;
    s.runs.push_back(r);
    s.profiles.push_back(std::move(*p));
    s.repeats.push_back(r->run.repeat_index);
  }
  return s;
}

// Per-run values of one quantity on both sides, and how to compare them.
struct Sample {
  std::vector<double> a, b;
};

// The runs both sides share by repeat index, in order; empty when fewer than 2 (then unpaired).
std::vector<std::pair<size_t, size_t>> pairing(const SideProfiles& a, const SideProfiles& b) {
  std::vector<std::pair<size_t, size_t>> out;
  std::set<int> seen;
  for (size_t i = 0; i < a.repeats.size(); ++i)
    for (size_t j = 0; j < b.repeats.size(); ++j)
      if (a.repeats[i] == b.repeats[j] && seen.insert(a.repeats[i]).second) out.emplace_back(i, j);
  if (out.size() < 2) out.clear();
  return out;
}

Contribution contribution(const Sample& s, const std::vector<std::pair<size_t, size_t>>& pairs, double confidence) {
  Contribution c;
  const auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return v.empty() ? 0.0 : sum / static_cast<double>(v.size());
  };
  c.a = mean(s.a);
  c.b = mean(s.b);
  stats::DifferenceEstimate d;
  if (!pairs.empty()) {
    std::vector<stats::RunPair> p;
    for (const auto& [i, j] : pairs) p.push_back({s.a[i], s.b[j]});
    d = stats::difference_paired(p, confidence);
  } else {
    d = stats::difference_unpaired(s.a, s.b, confidence);
  }
  c.change = std::isfinite(d.mean) ? d.mean : c.b - c.a;
  if (std::isfinite(d.low) && std::isfinite(d.high)) {
    c.low = d.low;
    c.high = d.high;
    c.significant = d.excludes_zero();
  }
  return c;
}

// Ranked by their part of the change: in the change's direction, largest first.
void rank(std::vector<Contribution>& list, double step_change) {
  const double sign = step_change < 0 ? -1.0 : 1.0;
  std::stable_sort(list.begin(), list.end(), [&](const Contribution& x, const Contribution& y) {
    if (step_change == 0) return std::abs(x.change) > std::abs(y.change);
    return sign * x.change > sign * y.change;
  });
}

std::optional<TimeWhy> explain_time(const SideProfiles& A, const SideProfiles& B, double family) {
  if (A.profiles.empty() || B.profiles.empty()) return std::nullopt;
  const auto pairs = pairing(A, B);
  using Key = std::pair<std::string, std::string>;  // (phase, op)
  std::map<Key, Sample> ops;
  std::map<Key, std::pair<bool, bool>> present;
  const auto fill = [&](const SideProfiles& side, bool is_a) {
    for (size_t r = 0; r < side.profiles.size(); ++r)
      for (const auto& op : side.profiles[r].ops) {
        auto& s = ops[{op.phase, op.op}];
        auto& v = is_a ? s.a : s.b;
        v.resize(side.profiles.size(), 0.0);  // an op a run never called: 0 s
        v[r] += op.seconds;
        (is_a ? present[{op.phase, op.op}].first : present[{op.phase, op.op}].second) = true;
      }
  };
  fill(A, true);
  fill(B, false);
  Sample step, remainder;
  std::map<std::string, Sample> categories, phases;
  for (const auto& [side, is_a] : {std::pair{&A, true}, std::pair{&B, false}}) {
    const size_t n = side->profiles.size();
    auto& st = is_a ? step.a : step.b;
    auto& rem = is_a ? remainder.a : remainder.b;
    for (size_t r = 0; r < n; ++r) {
      st.push_back(side->profiles[r].step_seconds);
      rem.push_back(side->profiles[r].step_seconds);
    }
    for (auto& [key, s] : ops) {
      auto& v = is_a ? s.a : s.b;
      v.resize(n, 0.0);
      auto& cat = categories[op_category(key.first, key.second)];
      auto& ph = phases[key.first.empty() ? "(no phase)" : short_phase(key.first)];
      auto& cv = is_a ? cat.a : cat.b;
      auto& pv = is_a ? ph.a : ph.b;
      cv.resize(n, 0.0);
      pv.resize(n, 0.0);
      for (size_t r = 0; r < n; ++r) {
        cv[r] += v[r];
        pv[r] += v[r];
        rem[r] -= v[r];
      }
    }
  }
  TimeWhy w;
  w.runs_a = A.profiles.size();
  w.runs_b = B.profiles.size();
  w.pairs = pairs.size();
  w.device_time = A.profiles.front().device_time || B.profiles.front().device_time;
  w.step = contribution(step, pairs, family);
  w.step.name = w.metric;
  const double pooled_step = (w.step.a + w.step.b) / 2;
  const auto tested = [&](const Sample& s) {
    double pooled = 0;  // the mean of the sides' means: blind to which side is larger
    for (double x : s.a) pooled += x / static_cast<double>(s.a.size()) / 2;
    for (double x : s.b) pooled += x / static_cast<double>(s.b.size()) / 2;
    return pooled >= w.min_share_tested * pooled_step;
  };
  size_t tested_ops = 0;
  for (const auto& [key, s] : ops) tested_ops += tested(s) ? 1 : 0;
  w.tests = tested_ops + categories.size() + phases.size() + 1;
  w.confidence = family_of_tests(family, w.tests).per_test_confidence();
  // Shares of a change that is itself not there mean nothing.
  const double total = w.step.change;
  const bool has_change = w.step.low && w.step.high ? (*w.step.low > 0 || *w.step.high < 0) : total != 0;
  const auto finish = [&](Contribution c) {
    c.share = has_change && total != 0 ? c.change / total : std::numeric_limits<double>::quiet_NaN();
    return c;
  };
  const auto untested = [](Contribution c) {
    c.tested = false;
    c.significant = false;
    c.low.reset();
    c.high.reset();
    return c;
  };
  for (const auto& [key, s] : ops) {
    Contribution c = contribution(s, pairs, w.confidence);
    if (!tested(s)) c = untested(c);
    c.phase = key.first.empty() ? "" : short_phase(key.first);
    c.name = key.second;
    const auto [in_a, in_b] = present[key];
    c.where = in_a && in_b ? "both" : (in_a ? "only A" : "only B");
    w.ops.push_back(finish(c));
  }
  for (const auto& [name, s] : categories) {
    Contribution c = contribution(s, pairs, w.confidence);
    c.name = name;
    w.categories.push_back(finish(c));
  }
  for (const char* phase : {"forward", "backward", "clip", "optimizer", "(no phase)"}) {
    const auto it = phases.find(phase);
    if (it == phases.end()) continue;
    Contribution c = contribution(it->second, pairs, w.confidence);
    c.name = phase;
    w.phases.push_back(finish(c));
  }
  w.remainder = finish(contribution(remainder, pairs, w.confidence));
  w.remainder.name = kOutsideOps;
  w.phases.push_back(w.remainder);
  rank(w.ops, total);
  rank(w.categories, total);
  if (!w.ops.empty()) {
    const Contribution& top = w.ops.front();
    w.headline = std::isfinite(top.share)
                     ? fmt::format("{:.0f}% from {}", 100 * top.share, op_label(top.phase, top.name))
                     : fmt::format("{:+.3g} ms/step from {}", 1e3 * top.change, op_label(top.phase, top.name));
    if (top.where != "both") w.headline += fmt::format(" ({})", top.where);
    if (!top.significant) w.headline += " (not significant)";
  }
  return w;
}

std::optional<MemoryWhy> explain_memory(const SideProfiles& A, const SideProfiles& B, const Comparison& timed,
                                        std::string& note) {
  const auto first = [](const SideProfiles& s) -> const RunProfile* {
    const RunProfile* best = nullptr;
    int repeat = 0;
    for (size_t i = 0; i < s.profiles.size(); ++i)
      if (s.profiles[i].peak_bytes && (!best || s.repeats[i] < repeat)) best = &s.profiles[i], repeat = s.repeats[i];
    return best;
  };
  const RunProfile* pa = first(A);
  const RunProfile* pb = first(B);
  if (!pa || !pb) return std::nullopt;
  for (const auto* side : {&A, &B})
    for (const auto& p : side->profiles)
      if (p.peak_bytes && *p.peak_bytes != *(side == &A ? pa : pb)->peak_bytes) {
        note += (note.empty() ? "" : " ") + std::string("The profiled runs' peaks differ between runs of one side: "
                                                        "the first run of each side is shown.");
        break;
      }
  MemoryWhy m;
  m.peak_a = *pa->peak_bytes;
  m.peak_b = *pb->peak_bytes;
  for (const auto& metric : timed.metrics)
    if (metric.spec.name == "peak_memory_bytes" && metric.diff) m.timed_diff = static_cast<int64_t>(std::llround(*metric.diff));
  // Named tensors by name, the rest by site (see MemoryEntry).
  using Key = std::tuple<std::string, std::string, std::string>;
  std::map<Key, MemoryEntry> entries;
  std::map<std::pair<std::string, std::string>, MemoryEntry> sites;
  for (const auto& [p, is_a] : {std::pair{pa, true}, std::pair{pb, false}})
    for (const auto& l : p->live_at_peak) {
      const std::string phase = l.phase.empty() ? "" : short_phase(l.phase);
      const Key key = l.tensor.empty() ? Key{phase, l.ops, ""} : Key{"", "", l.tensor};
      auto& e = entries[key];
      auto& s = sites[{phase, l.ops}];
      s.phase = phase;
      s.ops = l.ops;
      (is_a ? s.a : s.b) += l.bytes;
      (is_a ? e.a : e.b) += l.bytes;
      e.tensor = l.tensor;
      if (is_a) {
        e.site_a = op_label(phase, l.ops.empty() ? "(outside ops)" : l.ops);
        if (e.ops.empty() && e.phase.empty()) e.phase = phase, e.ops = l.ops;  // until B names its own
      } else {
        e.phase = phase;
        e.ops = l.ops;
      }
    }
  for (auto& [key, e] : entries)
    if (e.tensor.empty() || e.site_a == op_label(e.phase, e.ops.empty() ? "(outside ops)" : e.ops) || e.b == 0)
      e.site_a.clear();
  const auto where = [](const RunProfile& p) {
    const std::string phase = p.peak_phase.empty() ? "" : short_phase(p.peak_phase);
    return op_label(phase, p.peak_ops.empty() ? "(outside ops)" : p.peak_ops);
  };
  m.peak_at_a = where(*pa);
  m.peak_at_b = where(*pb);
  const int64_t total = m.peak_b - m.peak_a;
  int64_t held = 0;
  const auto finish = [&](MemoryEntry e) {
    e.diff = e.b - e.a;
    e.where = e.a > 0 && e.b > 0 ? "both" : (e.a > 0 ? "only A" : "only B");
    e.share = total != 0 ? static_cast<double>(e.diff) / static_cast<double>(total)
                         : std::numeric_limits<double>::quiet_NaN();
    return e;
  };
  for (const auto& [key, e] : entries) {
    MemoryEntry x = finish(e);
    held += x.diff;
    if (x.diff != 0) m.entries.push_back(x);
  }
  for (const auto& [key, e] : sites) {
    MemoryEntry x = finish(e);
    if (x.diff != 0) m.by_site.push_back(x);
  }
  m.unexplained = total - held;
  const auto order = [&](const MemoryEntry& x, const MemoryEntry& y) {
    const int64_t sx = total < 0 ? -x.diff : x.diff, sy = total < 0 ? -y.diff : y.diff;
    return total != 0 ? sx > sy : std::llabs(x.diff) > std::llabs(y.diff);
  };
  std::stable_sort(m.entries.begin(), m.entries.end(), order);
  std::stable_sort(m.by_site.begin(), m.by_site.end(), order);
  if (!m.entries.empty()) {
    const MemoryEntry& top = m.entries.front();
    m.headline = fmt::format("{} at the peak: ", format_bytes(total, true));
    m.headline += std::isfinite(top.share) ? fmt::format("{:.0f}% from ", 100 * top.share)
                                           : format_bytes(top.diff, true) + " from ";
    m.headline += top.tensor.empty() ? op_label(top.phase, top.ops.empty() ? "(outside ops)" : top.ops) : top.tensor;
  } else {
    m.headline = fmt::format("{} at the peak: the same blocks on both sides", format_bytes(total, true));
  }
  return m;
}

std::string trigger_of(const Comparison& c) {
  std::string out;
  for (const auto& m : c.metrics) {
    const bool decisive = is_decisive(m.verdict);
    if (!decisive) continue;
    if (m.spec.name == "step_time_median_s")
      out += (out.empty() ? "" : "; ") + fmt::format("step time {} {}", to_string(m.verdict), m.change);
    else if (m.spec.name == "peak_memory_bytes" && m.diff)
      out += (out.empty() ? "" : "; ") +
             fmt::format("peak memory {} {}", to_string(m.verdict), format_bytes(std::llround(*m.diff), true));
  }
  return out.empty() ? "profiled on request (no decisive time or memory verdict)" : out;
}

}  // namespace

bool wants_why(const Comparison& c) {
  for (const auto& m : c.metrics)
    if ((m.spec.name == "step_time_median_s" || m.spec.name == "peak_memory_bytes") &&
        is_decisive(m.verdict))
      return true;
  return false;
}

Explanation explain(const Comparison& timed, std::vector<const RunView*> profiles_a,
                    std::vector<const RunView*> profiles_b, double confidence) {
  Explanation e;
  e.case_name = timed.case_name;
  e.label_a = timed.label_a;
  e.label_b = timed.label_b;
  e.trigger = trigger_of(timed);
  for (const auto& m : timed.metrics) {
    const bool decisive = is_decisive(m.verdict);
    if (decisive && m.spec.name == "step_time_median_s") e.time_decided = true;
    if (decisive && m.spec.name == "peak_memory_bytes") e.memory_decided = true;
  }
  const SideProfiles A = parse(profiles_a), B = parse(profiles_b);
  e.runs_a = A.runs;
  e.runs_b = B.runs;
  if (A.profiles.empty() || B.profiles.empty()) {
    e.note = fmt::format("no profiled run of {} stored: `twinbench run`/`matrix` and `ab` make them after a decisive "
                         "verdict (--why-runs); `run --why-always` makes them for every case",
                         A.profiles.empty() && B.profiles.empty() ? "either side"
                                                                  : (A.profiles.empty() ? e.label_a : e.label_b));
    return e;
  }
  e.time = explain_time(A, B, confidence);
  e.memory = explain_memory(A, B, timed, e.note);
  if (e.time && e.time->pairs == 0 && (A.profiles.size() < 2 || B.profiles.size() < 2))
    e.note += (e.note.empty() ? "" : " ") + std::string("One profiled run a side shows no noise: no intervals.");
  return e;
}

std::vector<std::optional<Explanation>> explain_all(const std::vector<Comparison>& comparisons,
                                                    const std::vector<RunView>& profiles, double confidence) {
  // The side a profiled run belongs to: the same workload, build and hardware as
  // its first timed run (times of other hardware never explain these runs).
  const auto belongs = [](const std::vector<const RunView*>& timed, const RunView& p) {
    if (timed.empty()) return false;
    const auto& t = timed.front()->run;
    return p.run.case_name == t.case_name && p.run.variant == t.variant && p.run.git_commit == t.git_commit &&
           p.run.git_branch == t.git_branch && p.run.hardware_fingerprint == t.hardware_fingerprint;
  };
  std::vector<std::optional<Explanation>> out;
  for (const auto& c : comparisons) {
    std::vector<const RunView*> a, b;
    for (const auto& p : profiles) {
      if (belongs(c.runs_a, p)) a.push_back(&p);
      else if (belongs(c.runs_b, p)) b.push_back(&p);
    }
    if (a.empty() && b.empty() && !wants_why(c)) {
      out.emplace_back(std::nullopt);
      continue;
    }
    out.emplace_back(explain(c, std::move(a), std::move(b), confidence));
  }
  return out;
}

std::string format_bytes(int64_t bytes, bool sign) {
  const double v = static_cast<double>(std::llabs(bytes));
  const std::string s = sign ? (bytes < 0 ? "-" : "+") : (bytes < 0 ? "-" : "");
  if (v >= double(1LL << 30)) return s + fmt::format("{:.2f} GiB", v / double(1LL << 30));
  if (v >= double(1LL << 20)) return s + fmt::format("{:.1f} MiB", v / double(1LL << 20));
  if (v >= 1024) return s + fmt::format("{:.1f} KiB", v / 1024.0);
  return s + fmt::format("{} B", std::llabs(bytes));
}

std::string op_label(const std::string& phase, const std::string& name) {
  if (phase.empty()) return name;
  return name + " in " + phase;
}

}  // namespace twinbench::compare
