// One `twinbench bisect` (see bisect.h).
#include "harness/cli/bisect/bisect.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <sstream>

#include "harness/base/config.h"
#include "harness/base/interrupt.h"
#include "harness/cli/ab/error.h"
#include "harness/cli/bisect/trees.h"
#include "harness/compare/runs.h"
#include "harness/logs/formats.h"
#include "harness/logs/sha256.h"
#include "harness/metrics/catalogue.h"
#include "harness/store/store.h"

namespace twinbench::bisect {

namespace fs = std::filesystem;
using ab::AbError;
using ab::Stop;
using compare::BisectCommit;
using compare::Probe;
using compare::ProbeClass;

namespace {

std::string label_of(const std::string& sha) { return "bisect:" + short_sha(sha); }

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// What makes two sessions' runs the same measurement: the workload, how it is
// built and run, the threads and this host (times of different hosts are never
// judged against each other). 12 hex digits of its SHA-256.
std::string workload_key(const BisectOptions& o, const std::string& case_file) {
  const char* threads = std::getenv("TWINBENCH_THREADS");
  std::string text = "case\n" + read_file(case_file) + "\nvariant\n" + o.variant + "\noverrides\n";
  for (const auto& v : o.overrides) text += v + "\n";
  if (o.reduced) text += "reduced\n";  // only then: keys of sessions stored before --reduced existed stay
  // "duet" names the simultaneous pairing, as keys stored before lockstep duets did; lockstep is its own measurement.
  text += fmt::format("threads\n{}\nduet\n{}\nbuild\n{}\nrun\n{}\nhost\n{}\n", threads ? threads : "",
                      o.pairing == ab::Pairing::kSimultaneous, o.build_cmd, o.run_cmd, store::host_name());
  if (o.pairing == ab::Pairing::kLockstep) text += "pairing\nlockstep\n";
  return logs::sha256_hex(text).substr(0, 12);
}

// The stored sessions of one (workload, good end, commit), newest first.
std::vector<std::string> stored_groups(const store::Store& db, const std::string& prefix, const std::string& case_name,
                                       const std::string& variant) {
  store::RunFilter filter;
  filter.case_name = case_name;
  filter.variant = variant;
  filter.group_prefix = prefix;
  std::vector<std::string> groups;  // runs come newest first
  for (const auto& r : db.runs(filter))
    if (std::find(groups.begin(), groups.end(), r.group_id) == groups.end()) groups.push_back(r.group_id);
  return groups;
}

// The workload key of the newest stored confirm session (bad against good): what
// `report bisect` replays, whatever build, run command, threads or host it had.
std::optional<std::string> newest_key(const store::Store& db, const std::string& good, const std::string& bad,
                                      const std::string& case_name, const std::string& variant) {
  store::RunFilter filter;
  filter.case_name = case_name;
  filter.variant = variant;
  filter.group_prefix = "bisect:";
  const std::string ends = fmt::format(":{}:{}:", short_sha(good), short_sha(bad));
  for (const auto& r : db.runs(filter)) {  // newest first
    const auto at = r.group_id.find(ends);
    if (r.group_id.rfind("bisect:", 0) == 0 && at != std::string::npos && at > 7) return r.group_id.substr(7, at - 7);
  }
  return std::nullopt;
}

bool decided(ProbeClass c) { return c == ProbeClass::kGood || c == ProbeClass::kBad; }

class Bisector {
 public:
  Bisector(const BisectOptions& o, std::ostream& log) : o_(o), log_(log) {}

  compare::BisectResult run();

 private:
  // One session of `history_[index]` against the good end (or the bad end,
  // `against_bad`): a stored one, or (not replaying) a new one. nullopt when
  // replaying and nothing is stored. A commit that cannot be measured is a
  // skipped probe, except an end of the range (`end`), whose failure ends the bisect.
  std::optional<Probe> measure(size_t index, bool against_bad, std::optional<double> threshold, bool end);
  Probe judge(size_t index, size_t reference, const std::string& group, std::optional<double> threshold) const;
  Probe skip(size_t index, size_t reference, const std::string& reason);
  // Found: the culprit's why from profiled rounds of it and the commit before it
  // (stored ones when there are, else new ones unless replaying).
  void explain_culprit(compare::BisectResult& res);
  // The options every session of the bisection shares: commit `ia` (built as
  // `a`) against commit `ib` (built as `b`), their labels, the workload, the store.
  ab::AbOptions session_of(size_t ia, const TreeBuild& a, size_t ib, const TreeBuild& b) const {
    ab::AbOptions o;
    o.a = a.runner;
    o.b = b.runner;
    o.case_name = case_file_;
    o.overrides = o_.overrides;
    o.reduced = o_.reduced;
    o.variant = o_.variant;
    o.seed = o_.seed == 0 ? 0 : o_.seed + sessions_;
    o.db = o_.db;
    o.label_a = label_of(history_[ia].sha);
    o.label_b = label_of(history_[ib].sha);
    return o;
  }
  const TreeBuild& built(size_t index);
  // A probe's threshold against either end: --threshold's, else from the confirmed change.
  std::optional<double> threshold_of(bool against_bad) const {
    if (fixed_) return fixed_;
    return confirmed_ ? compare::probe_threshold(*metric_, *confirmed_, against_bad) : std::nullopt;
  }
  std::string new_group(size_t index, size_t reference) const {
    return fmt::format("{}{}", prefix(index, reference), store::new_uuid().substr(0, 8));
  }
  // Sessions are named by the workload, the reference end and the commit.
  std::string prefix(size_t index, size_t reference) const {
    return fmt::format("bisect:{}:{}:{}:", key_, short_sha(history_[reference].sha), short_sha(history_[index].sha));
  }
  std::string name(size_t index) const {
    return fmt::format("{} {}", short_sha(history_[index].sha).substr(0, 9), history_[index].subject);
  }

  const BisectOptions& o_;
  std::ostream& log_;
  const metrics::Metric* metric_ = nullptr;
  std::vector<BisectCommit> history_;
  std::optional<store::Store> db_;
  std::optional<Trees> trees_;
  std::string case_file_, case_name_, key_;
  compare::LookSchedule schedule_;  // what each probe's `ab` session looks with
  size_t sessions_ = 0;  // sessions run now, for their seeds
  std::map<size_t, TreeBuild> builds_;  // the ends' builds, kept for every session
  std::optional<double> fixed_;                      // --threshold for the judged metric
  std::optional<stats::RatioEstimate> confirmed_;    // the confirm session's bad / good
};

Probe Bisector::judge(size_t index, size_t reference, const std::string& group,
                      std::optional<double> threshold) const {
  store::RunFilter filter;
  filter.group_id = group;
  const bool against_bad = reference != 0;
  const auto j = compare::judge_session(compare::load_runs(*db_, filter), label_of(history_[reference].sha),
                                        label_of(history_[index].sha), *metric_, threshold, o_.alpha, schedule_);
  Probe p;
  p.index = index;
  p.against_bad = against_bad;
  p.group_id = group;
  p.verdict = j.failure.empty() ? j.verdict : compare::Verdict::kNotComparable;
  p.cls = j.failure.empty() ? compare::classify(j.verdict, o_.find, against_bad) : ProbeClass::kSkipped;
  p.estimate = j.estimate;
  p.change = j.failure.empty() ? j.change : "";
  p.explanation = j.explanation;
  p.threshold = j.threshold;
  p.confidence = j.confidence;
  p.rounds = j.rounds;
  for (const auto& [label, hooks] : {std::pair{label_of(history_[reference].sha), j.test_hooks_good},
                                     std::pair{label_of(history_[index].sha), j.test_hooks_probe}})
    if (!hooks.empty()) p.test_hooks += (p.test_hooks.empty() ? "" : "; ") + label + ": " + hooks;
  // The good end's runs made with a planted-cause test hook are never a baseline.
  if (!against_bad && !j.test_hooks_good.empty()) {
    p.cls = ProbeClass::kSkipped;
    p.verdict = compare::Verdict::kNotComparable;
    p.change.clear();
    p.explanation = fmt::format("the good end's runs were made with test hooks ({}): never a baseline",
                                j.test_hooks_good);
  }
  return p;
}

// A commit that could not be measured, stored as a skipped run so that the
// report (and the next bisect) sees why.
Probe Bisector::skip(size_t index, size_t reference, const std::string& reason) {
  store::RunRecord r;
  r.group_id = new_group(index, reference);
  r.case_name = case_name_;
  r.variant = o_.variant;
  r.git_commit = history_[index].sha;
  r.git_branch = label_of(history_[index].sha);
  r.provenance_json = nlohmann::json{{"git_commit", history_[index].sha}, {"labels_overridden", true},
                                     {"bisect_skipped", reason}}.dump();
  db_->record_skipped(r, reason);
  Probe p;
  p.index = index;
  p.against_bad = reference != 0;
  p.cls = ProbeClass::kSkipped;
  p.explanation = reason;
  p.group_id = r.group_id;
  return p;
}

// A commit's build, made once per bisect (and once per work folder across bisects).
const TreeBuild& Bisector::built(size_t index) {
  auto it = builds_.find(index);
  if (it == builds_.end()) it = builds_.emplace(index, trees_->build(history_[index], log_)).first;
  return it->second;
}

std::optional<Probe> Bisector::measure(size_t index, bool against_bad, std::optional<double> threshold, bool end) {
  const size_t reference = against_bad ? history_.size() - 1 : 0;
  // A stored session: the newest decisive one is reused; when replaying, the newest of any kind.
  std::optional<Probe> newest;
  for (const auto& group : stored_groups(*db_, prefix(index, reference), case_name_, o_.variant)) {
    Probe p = judge(index, reference, group, threshold);
    p.reused = true;
    if (decided(p.cls)) return p;
    if (!newest) newest = p;
  }
  if (o_.replay) return newest;
  // An inconclusive stored session whose commit an earlier bisect then decided
  // against the bad end: reused, so that the caller reuses that decision too.
  if (newest && !against_bad && newest->cls == ProbeClass::kInconclusive &&
      metric_->judge == metrics::Judge::kTime) {
    const size_t bad_end = history_.size() - 1;
    for (const auto& group : stored_groups(*db_, prefix(index, bad_end), case_name_, o_.variant))
      if (decided(judge(index, bad_end, group, threshold_of(true)).cls)) return newest;
  }

  const auto start = std::chrono::steady_clock::now();
  const TreeBuild& ref = built(reference);
  if (!ref.ok)
    throw AbError(Stop::kFailure, fmt::format("the {} end {}: {}", reference == 0 ? "good" : "bad", name(reference),
                                              ref.reason));
  const TreeBuild& b = built(index);
  if (!b.ok) {
    if (end) throw AbError(Stop::kFailure, fmt::format("the bad end {}: {}", name(index), b.reason));
    return skip(index, reference, b.reason);
  }
  ab::AbOptions a = session_of(reference, ref, index, b);
  a.rounds = metric_->deterministic() ? 2 : 0;  // an exact metric needs no sequence of looks
  a.max_rounds = o_.max_rounds;
  a.budget_s = o_.budget_s;
  a.alpha = o_.alpha;
  a.pairing = o_.pairing;
  a.step_timeout_s = o_.step_timeout_s;
  a.thresholds = o_.thresholds;
  if (threshold) a.thresholds[metric_->name] = *threshold;
  a.group_id = new_group(index, reference);
  if (metric_->judge == metrics::Judge::kTime) a.look_metric = metric_->name;
  a.why_runs = 0;  // probes are not explained; the culprit is (explain_culprit)
  ++sessions_;
  try {
    ab::run_ab(a, log_);
  } catch (const AbError& e) {
    if (e.kind() == Stop::kInterrupted || end) throw;
    if (e.kind() == Stop::kBadInput) return skip(index, reference, fmt::format("refused: {}", e.what()));
    log_ << fmt::format("bisect: {}: {}\n", name(index), e.what());  // a failed run: stored, judged below as skipped
  }
  Probe p = judge(index, reference, a.group_id, threshold);
  p.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return p;
}

void Bisector::explain_culprit(compare::BisectResult& res) {
  const size_t before = res.last_good, culprit = res.first_bad;
  const std::string prefix = fmt::format("bisect-why:{}:{}:{}:", key_, short_sha(history_[before].sha),
                                         short_sha(history_[culprit].sha));
  std::string group;
  store::RunFilter by_prefix;  // the newest stored profiled rounds of the two
  by_prefix.case_name = case_name_;
  by_prefix.variant = o_.variant;
  by_prefix.group_prefix = prefix;
  by_prefix.limit = 1;
  for (const auto& r : db_->runs(by_prefix)) group = r.group_id;
  std::string note;
  if (group.empty() && !o_.replay && o_.why_runs > 0) {
    const TreeBuild& a_build = built(before);
    const TreeBuild& b_build = built(culprit);
    if (!a_build.ok || !b_build.ok) return;
    ab::AbOptions a = session_of(before, a_build, culprit, b_build);
    a.group_id = prefix + store::new_uuid().substr(0, 8);
    log_ << fmt::format("bisect: why: {} profiled rounds of {} against {}\n", o_.why_runs, name(culprit), name(before));
    note = ab::profile_rounds(a, o_.why_runs, log_);
    group = a.group_id;
  }
  if (group.empty()) return;
  store::RunFilter in_group;
  in_group.group_id = group;
  compare::LoadOptions load;
  load.profiles = true;
  res.why_runs = compare::load_runs(*db_, in_group, load);
  std::vector<const compare::RunView*> runs_a, runs_b;
  for (const auto& v : res.why_runs) {
    if (v.run.git_branch == label_of(history_[before].sha)) runs_a.push_back(&v);
    if (v.run.git_branch == label_of(history_[culprit].sha)) runs_b.push_back(&v);
  }
  compare::Comparison timed;  // the culprit against the commit before it, as its profiled rounds see it
  timed.case_name = case_name_;
  timed.label_a = short_sha(history_[before].sha).substr(0, 9);
  timed.label_b = short_sha(history_[culprit].sha).substr(0, 9);
  res.why = compare::explain(timed, runs_a, runs_b, 1 - o_.alpha);
  res.why->trigger = fmt::format("the first {} commit {} against the commit before it, {}", compare::sought_word(o_.find),
                                 timed.label_b, timed.label_a);
  res.why->time_decided = metric_->judge == metrics::Judge::kTime;
  res.why->memory_decided = metric_->name == "peak_memory_bytes";
  if (!note.empty()) res.why->note += (res.why->note.empty() ? "" : " ") + note;
}

compare::BisectResult Bisector::run() {
  const auto start = std::chrono::steady_clock::now();
  // Everything that needs no process first.
  if (!(o_.alpha > 0 && o_.alpha < 0.5)) throw std::invalid_argument(fmt::format("--alpha {} must be in (0, 0.5)", o_.alpha));
  if (!(o_.budget_s > 0)) throw std::invalid_argument(fmt::format("--budget {} must be positive", o_.budget_s));
  if (o_.max_rounds < 3)
    throw AbError(Stop::kBadInput, fmt::format("--max-rounds {} is too few: a sequential session needs at least 3", o_.max_rounds));
  metric_ = &compare::judged_metric(o_.metric);
  metrics::with_thresholds(metrics::shown_in(metrics::kVerdict), o_.thresholds);  // unknown names: invalid_argument
  if (o_.case_name.empty()) throw ConfigError("command line", "--case", "give the case to measure every commit with");
  case_file_ = fs::absolute(find_case_file(o_.case_name)).string();
  const RunConfig config = load_config(case_file_, o_.overrides, o_.reduced);
  metrics::check_thresholds(config);
  logs::check_external_formats(config.externals);
  case_name_ = config.case_name;
  schedule_ = compare::LookSchedule::spending(ab::session_plan(metric_->deterministic() ? 2 : 0, o_.max_rounds));

  const Repo repo = open_repo(o_.repo);
  const std::string good = resolve_commit(repo, o_.good, "--good"), bad = resolve_commit(repo, o_.bad, "--bad");
  history_ = first_parent_line(repo, good, bad);
  if (o_.replay && !fs::exists(o_.db)) throw std::invalid_argument(fmt::format("{}: no such database", o_.db));
  db_.emplace(o_.db);
  if (o_.replay) {
    const auto key = newest_key(*db_, good, bad, case_name_, o_.variant);
    if (!key)
      throw std::invalid_argument(fmt::format("{} holds no bisect of bad {} against good {} on {} / {}: run "
                                              "`twinbench bisect` first",
                                              o_.db, short_sha(bad), short_sha(good), case_name_, o_.variant));
    key_ = *key;
  } else {
    key_ = workload_key(o_, case_file_);
  }
  trees_.emplace(repo, o_.work_dir.empty() ? repo.git_dir + "/twinbench-bisect" : fs::absolute(o_.work_dir).string(),
                 o_.build_cmd, o_.run_cmd);
  if (!o_.replay) install_interrupt_handlers();

  compare::BisectResult res;
  res.history = history_;
  res.case_name = case_name_;
  res.variant = o_.variant;
  res.metric = metric_->name;
  res.find = o_.find;
  res.alpha = o_.alpha;
  res.db = o_.db;
  const size_t last = history_.size() - 1;
  log_ << fmt::format("bisect: {} commit{} after good {} up to bad {} (first-parent line); {} / {}, judging {}\n",
                      last, last == 1 ? "" : "s", short_sha(good).substr(0, 9), short_sha(bad).substr(0, 9),
                      case_name_, o_.variant, metric_->label);

  // 1. The bad end against the good end must be decisive in the direction looked for.
  const std::optional<double> fixed =
      o_.thresholds.count(metric_->name) ? std::optional<double>(o_.thresholds.at(metric_->name)) : std::nullopt;
  std::optional<Probe> confirm = measure(last, /*against_bad=*/false, fixed, /*end=*/true);
  if (!confirm) throw std::logic_error("bisect: the confirm session vanished");  // newest_key found it
  confirm->confirm = true;
  res.probes.push_back(*confirm);
  log_ << fmt::format("bisect: confirm: bad {} against good: {} {} ({} rounds{})\n", short_sha(bad).substr(0, 9),
                      confirm->change, compare::to_string(confirm->verdict), confirm->rounds,
                      confirm->reused ? ", stored" : "");
  if (confirm->cls == ProbeClass::kSkipped)
    throw AbError(Stop::kFailure, fmt::format("the bad end {}: {}", name(last), confirm->explanation));
  if (confirm->cls != ProbeClass::kBad) {
    res.outcome = compare::BisectOutcome::kNothingToBisect;
    res.reason = fmt::format("the bad end against the good end is {} ({}): not a decisive {}; nothing to bisect",
                             compare::to_string(confirm->verdict), confirm->change, compare::to_string(o_.find));
    res.last_good = 0;
    res.first_bad = last;
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return res;
  }

  // 2. The probes: each commit against the good end at half the confirmed change
  // (a regression there is sound ground for "bad", no change for "good"); when
  // that session cannot tell, against the bad end, where a change back is sound
  // ground for "good" and no change for "bad".
  fixed_ = fixed;
  confirmed_ = confirm->estimate;
  auto threshold = [&](bool against_bad) { return threshold_of(against_bad); };
  compare::BisectSearch search(history_.size());
  std::string stopped;
  size_t probes = 0;
  while (const auto next = search.next()) {
    if (o_.max_probes > 0 && probes == o_.max_probes) {
      stopped = fmt::format("--max-probes {} reached", o_.max_probes);
      break;
    }
    std::optional<Probe> p = measure(*next, false, threshold(false), /*end=*/false);
    if (!p) {
      stopped = fmt::format("no stored session for {}: the bisect stopped before it", name(*next));
      break;
    }
    ++probes;
    ProbeClass cls = p->cls;
    res.probes.push_back(*p);
    log_ << fmt::format("bisect: probe {}: {}: {} -> {}{}\n", probes, name(*next),
                        p->change.empty() ? p->explanation : p->change + " " + compare::to_string(p->verdict),
                        compare::to_string(p->cls), p->reused ? " (stored)" : "");
    if (cls == ProbeClass::kInconclusive && metric_->judge == metrics::Judge::kTime) {
      if (const std::optional<Probe> q = measure(*next, true, threshold(true), /*end=*/false)) {
        res.probes.push_back(*q);
        if (q->cls != ProbeClass::kSkipped) cls = q->cls;
        log_ << fmt::format("bisect: probe {}: {} against the bad end: {} -> {}{}\n", probes, name(*next),
                            q->change.empty() ? q->explanation : q->change + " " + compare::to_string(q->verdict),
                            compare::to_string(q->cls), q->reused ? " (stored)" : "");
      }
    }
    search.record(*next, cls);
    log_ << fmt::format("bisect: the first {} commit is in ({}, {}]\n", compare::sought_word(o_.find),
                        short_sha(history_[search.last_good()].sha).substr(0, 9),
                        short_sha(history_[search.first_bad()].sha).substr(0, 9));
  }

  // 3. The answer: one commit, or the range with the reason.
  res.last_good = search.last_good();
  res.first_bad = search.first_bad();
  if (search.found()) {
    res.outcome = compare::BisectOutcome::kFound;
    explain_culprit(res);
  } else {
    res.outcome = compare::BisectOutcome::kRange;
    std::string undecided;
    for (const size_t i : search.undecided()) {
      const Probe* p = res.probe_of(i);
      const bool inconclusive = p && p->cls == ProbeClass::kInconclusive;
      undecided += fmt::format("{}{} {}", undecided.empty() ? "" : ", ", short_sha(history_[i].sha).substr(0, 9),
                               inconclusive ? fmt::format("inconclusive ({} against the {} end)", p->change,
                                                          p->against_bad ? "bad" : "good")
                                            : "skipped");
    }
    res.reason = fmt::format("the first {} commit is one of {} commits", compare::sought_word(o_.find), res.first_bad - res.last_good);
    if (!undecided.empty()) res.reason += fmt::format(": {} could not be judged", undecided);
    if (!stopped.empty()) res.reason += fmt::format("{} {}", undecided.empty() ? ":" : ";", stopped);
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return res;
}

}  // namespace

compare::BisectResult run_bisect(const BisectOptions& options, std::ostream& log) {
  return Bisector(options, log).run();
}

}  // namespace twinbench::bisect
