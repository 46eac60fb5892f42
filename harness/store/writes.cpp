// Writing a store (store.h): a run's row, its steps in batches and its end;
// whole finished runs (`import`, `db push`) many to a transaction; recovering
// the runs whose writer is gone. Rows go in bulk — one COPY per table and
// batch on PostgreSQL, multi-row INSERTs on SQLite — so that an upload costs
// a few round trips per batch of runs, not several per run. On a server
// store, what a run cannot write because the server went away is kept in
// the local spill (spill.h) instead of failing the run.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "harness/base/hardware.h"
#include "harness/store/causes.h"
#include "harness/store/spill.h"
#include "harness/store/store_impl.h"

namespace twinbench::store {

namespace {

using backend::Transaction;
using backend::Value;

// The columns of a run row the store writes, in the order of run_values().
constexpr std::array<std::string_view, 19> kRunRowColumns = {
    "run_id",      "group_id",     "case_name",   "variant",         "repeat_index",
    "status",      "reason",       "started_at",  "finished_at",     "host",
    "pid",         "config_json",  "provenance_json", "git_commit",  "git_branch",
    "device_name", "world_size",   "hardware_fingerprint", "source"};

constexpr std::array<std::string_view, 10> kStepRowColumns = {
    "run_id", "step", "loss", "step_time_s", "tokens", "is_warmup", "is_eval", "is_checkpoint", "eval_loss", "is_stall"};
constexpr std::array<std::string_view, 3> kMetricRowColumns = {"run_id", "name", "value"};

constexpr size_t kRowsPerInsert = 100;  // rows per multi-row INSERT where there is no COPY

// INSERT INTO runs ... VALUES (...), ... for `rows` rows; a running run on a
// server holds a lease (?20 its length, one row only). `if_absent`: a run of an
// id already stored is left as it is, and RETURNING names the rows written.
std::string insert_runs_sql(const Dialect& dialect, size_t rows, bool lease, bool if_absent) {
  std::string sql = "INSERT INTO runs (";
  for (const auto& c : kRunRowColumns) sql += std::string(c) + ", ";
  sql += "lease_expires_at) VALUES ";
  const size_t n = kRunRowColumns.size();
  for (size_t r = 0; r < rows; ++r) {
    sql += r ? ", (" : "(";
    for (size_t c = 1; c <= n; ++c) sql += fmt::format("?{}, ", r * n + c);
    sql += lease ? dialect.lease_until_sql(static_cast<int>(n + 1)) : "NULL";
    sql += ')';
  }
  if (if_absent) sql += " ON CONFLICT (run_id) DO NOTHING RETURNING run_id";
  return sql;
}

std::string insert_rows_sql(std::string_view table, const std::vector<std::string_view>& columns, size_t rows) {
  std::string sql = fmt::format("INSERT INTO {} (", table);
  for (size_t c = 0; c < columns.size(); ++c) sql += fmt::format("{}{}", c ? ", " : "", columns[c]);
  sql += ") VALUES ";
  for (size_t r = 0; r < rows; ++r) {
    sql += r ? ", (" : "(";
    for (size_t c = 1; c <= columns.size(); ++c) sql += fmt::format("{}?{}", c > 1 ? ", " : "", r * columns.size() + c);
    sql += ')';
  }
  return sql;
}

std::string upsert_metrics_sql(size_t rows) {
  std::string sql = "INSERT INTO run_metrics (run_id, name, value) VALUES ";
  for (size_t r = 0; r < rows; ++r) sql += fmt::format("{}(?{}, ?{}, ?{})", r ? ", " : "", 3 * r + 1, 3 * r + 2, 3 * r + 3);
  return sql + " ON CONFLICT (run_id, name) DO UPDATE SET value = excluded.value";
}

constexpr std::string_view kFinishRun =
    "UPDATE runs SET status = ?2, reason = ?3, finished_at = ?4, lease_expires_at = NULL WHERE run_id = ?1";

bool process_is_gone(int64_t pid) {
  if (pid <= 0 || pid > INT_MAX) return false;  // cannot tell: leave it alone
  return kill(static_cast<pid_t>(pid), 0) == -1 && errno == ESRCH;
}

// The last value of each metric name, in first-seen order: a metric listed twice
// is stored once (a multi-row upsert may not touch a row twice).
MetricList last_of_each(const MetricList& metrics) {
  MetricList out;
  std::map<std::string, size_t> at;
  for (const auto& [name, value] : metrics) {
    if (const auto it = at.find(name); it != at.end()) {
      out[it->second].second = value;
    } else {
      at.emplace(name, out.size());
      out.emplace_back(name, value);
    }
  }
  return out;
}

std::string last_step_text(const std::optional<int64_t>& step) {
  return step ? fmt::format("last stored step {}", *step) : std::string("no step stored");
}

void append_step_values(std::vector<Value>& out, const std::string& run_id, const StepRecord& s) {
  out.insert(out.end(), {Value(std::string_view(run_id)), Value(s.step), Value(s.loss),
                         Value(s.seconds),  // NaN (unknown time) is stored as NULL
                         Value(s.tokens), Value(int64_t{s.warmup}), Value(int64_t{s.eval}), Value(int64_t{s.checkpoint}),
                         s.eval_loss ? Value(*s.eval_loss) : Value(), Value(int64_t{s.stall})});
}

void bind_value(backend::Statement& q, int index, const Value& v) {
  if (const auto* n = std::get_if<int64_t>(&v)) q.bind(index, *n);
  else if (const auto* x = std::get_if<double>(&v)) q.bind(index, *x);
  else if (const auto* t = std::get_if<std::string_view>(&v)) q.bind(index, *t);
  else q.bind_null(index);
}

}  // namespace

bool left_by_lost_writer(std::string_view status, std::string_view reason) {
  return status == "running" ||
         (status == "interrupted" && (reason.substr(0, kLapsedLease.size()) == kLapsedLease ||
                                      reason.substr(0, kEndedAway.size()) == kEndedAway));
}

// ---- inside a caller's transaction ----------------------------------------------

void Store::Impl::insert_rows(std::string_view table, const std::vector<std::string_view>& columns,
                              const std::vector<Value>& values, std::string_view doing) {
  if (values.empty() || db->copy_rows(table, columns, values, doing)) return;
  const size_t rows = values.size() / columns.size();
  for (size_t first = 0; first < rows; first += kRowsPerInsert) {
    const size_t n = std::min(kRowsPerInsert, rows - first);
    auto q = query(insert_rows_sql(table, columns, n), doing);
    for (size_t i = 0; i < n * columns.size(); ++i)
      bind_value(*q, static_cast<int>(i + 1), values[first * columns.size() + i]);
    q->run();
  }
}

void Store::Impl::check_run_row(const RunRecord& run, std::string_view doing) const {
  if (run.run_id.empty()) db->fail(doing, "run_id is empty");
  if (run.case_name.empty()) db->fail(doing, "case_name is empty");
  if (run.variant.empty()) db->fail(doing, "variant is empty");
  if (run.repeat_index < 0) db->fail(doing, "repeat_index is negative");
  if (run.world_size < 1) db->fail(doing, "world_size is less than 1");
  require_json_object(run.config_json, "config_json", doing);
  require_json_object(run.provenance_json, "provenance_json", doing);
}

void Store::Impl::bind_run_row(backend::Statement& q, int first, const RunRecord& run, RunStatus status,
                               const std::string& reason, const std::optional<std::string>& finished_at,
                               std::string_view doing) const {
  q.bind(first + 1, run.run_id);
  q.bind(first + 2, run.group_id);
  q.bind(first + 3, run.case_name);
  q.bind(first + 4, run.variant);
  q.bind(first + 5, run.repeat_index);
  q.bind(first + 6, status_name(status, doing));
  q.bind(first + 7, reason);
  q.bind(first + 8, run.started_at.empty() ? now_utc() : run.started_at);
  q.bind(first + 9, finished_at);
  q.bind(first + 10, run.host.empty() ? host_name() : run.host);
  q.bind(first + 11, run.pid == 0 ? int64_t{getpid()} : run.pid);
  q.bind(first + 12, run.config_json);
  q.bind(first + 13, run.provenance_json);
  q.bind(first + 14, run.git_commit);
  q.bind(first + 15, run.git_branch);
  q.bind(first + 16, run.device_name);
  q.bind(first + 17, run.world_size);
  q.bind(first + 18, run.hardware_fingerprint.empty() ? hardware_fingerprint(run.provenance_json).id
                                                      : run.hardware_fingerprint);
  q.bind(first + 19, source_of(run.provenance_json));
}

bool Store::Impl::insert_run_row(const RunRecord& run, RunStatus status, const std::string& reason,
                                 const std::optional<std::string>& finished_at, std::string_view doing,
                                 bool if_absent) {
  check_run_row(run, doing);
  status_name(status, doing);
  // A running run on a server holds a lease (lease.h).
  const bool lease = status == RunStatus::running && dialect().leases;
  auto q = query(insert_runs_sql(dialect(), 1, lease, if_absent), doing);
  bind_run_row(*q, 0, run, status, reason, finished_at, doing);
  if (lease) q->bind(static_cast<int>(kRunRowColumns.size() + 1), lease_seconds());
  if (!if_absent) {
    q->run();
    return true;
  }
  return q->step();  // RETURNING names the row when it was written
}

void Store::Impl::insert_steps(const std::string& run_id, const std::vector<StepRecord>& steps,
                               std::string_view doing) {
  std::vector<Value> values;
  values.reserve(steps.size() * kStepRowColumns.size());
  for (const StepRecord& s : steps) append_step_values(values, run_id, s);
  try {
    insert_rows("steps", {kStepRowColumns.begin(), kStepRowColumns.end()}, values, doing);
  } catch (const StoreError& e) {
    if (e.fault() == StoreFault::kConnectionLost) throw;
    // Name the first step of the batch that repeats an earlier one, else the range.
    std::string which = steps.size() == 1 ? fmt::format("step {}", steps.front().step)
                                          : fmt::format("steps {} to {}", steps.front().step, steps.back().step);
    std::set<int64_t> seen;
    for (const StepRecord& s : steps)
      if (!seen.insert(s.step).second) {
        which = fmt::format("step {}", s.step);
        break;
      }
    throw StoreError(fmt::format("{} ({} of run {}; none of the batch was stored)", e.what(), which, run_id),
                     e.sqlite_code(), e.fault());
  }
}

void Store::Impl::check_metrics(const MetricList& metrics, std::string_view doing) const {
  for (const auto& metric : metrics)
    if (metric.first.empty()) db->fail(doing, "a metric has an empty name");
}

void Store::Impl::upsert_metrics(const std::string& run_id, const MetricList& all, std::string_view doing) {
  check_metrics(all, doing);
  const MetricList metrics = last_of_each(all);
  for (size_t first = 0; first < metrics.size(); first += kRowsPerInsert) {
    const size_t rows = std::min(kRowsPerInsert, metrics.size() - first);
    auto q = query(upsert_metrics_sql(rows), doing);
    for (size_t r = 0; r < rows; ++r) {
      const int base = static_cast<int>(r) * 3;
      q->bind(base + 1, run_id);
      q->bind(base + 2, metrics[first + r].first);
      q->bind(base + 3, metrics[first + r].second);
    }
    q->run();
  }
}

void Store::Impl::finish_row(const std::string& run_id, RunStatus status, const std::string& reason,
                             const std::string& finished_at, std::string_view doing) {
  auto q = query(kFinishRun, doing);
  q->bind(1, run_id);
  q->bind(2, status_name(status, doing));
  q->bind(3, reason);
  q->bind(4, finished_at);
  q->run();
}

// ---- a run, step by step ----------------------------------------------------------

std::string Store::begin_run(const RunRecord& run) {
  Impl& self = *impl_;
  RunRecord row = run;
  if (row.run_id.empty()) row.run_id = new_uuid();
  if (row.started_at.empty()) row.started_at = now_utc();
  if (row.host.empty()) row.host = host_name();
  if (row.pid == 0) row.pid = getpid();
  const std::string doing = run.run_id.empty() ? std::string("begin run") : fmt::format("begin run {}", run.run_id);
  const auto write = [&] {
    self.retrying([&](bool again) {
      if (again && self.has_run(row.run_id, doing)) return;  // the lost attempt committed
      Transaction tx(*self.db, doing);
      self.insert_run_row(row, RunStatus::running, "", std::nullopt, fmt::format("begin run {}", row.run_id));
      tx.commit();
    });
  };
  if (self.dialect().leases) {
    self.live[row.run_id] = row;  // kept for the spill, should the server go away
    self.keeper().hold(row.run_id);
    if (self.server_write(write, /*wait=*/true))
      self.remember_calibrations();
    else
      self.spill_run(row.run_id, "could not begin it");
  } else {
    write();
  }
  causes::reserve(self.causes, row.run_id);  // space for a cause, while the disk has room
  return row.run_id;
}

std::string Store::record_skipped(const RunRecord& run, const std::string& reason) {
  Impl& self = *impl_;
  const std::string now = now_utc();
  RunRecord skipped = run;
  if (skipped.run_id.empty()) skipped.run_id = new_uuid();
  if (skipped.started_at.empty()) skipped.started_at = now;
  const std::string doing = fmt::format("record skipped run {}", skipped.run_id);
  const auto write = [&] {
    self.retrying([&](bool again) {
      if (again && self.has_run(skipped.run_id, doing)) return;
      Transaction tx(*self.db, doing);
      self.insert_run_row(skipped, RunStatus::skipped, reason, now, doing);
      tx.commit();
    });
  };
  if (!self.dialect().leases) {
    write();
  } else if (!self.server_write(write, /*wait=*/true)) {
    self.open_spill().keep_skipped(skipped, reason);
    self.kept.insert(skipped.run_id);
    self.tell(fmt::format("the skipped run {} is kept in {} and nowhere else; {}", skipped.run_id,
                          self.spill->path(), self.spill->upload_hint()));
  }
  return skipped.run_id;
}

void Store::append_steps(const std::string& run_id, const std::vector<StepRecord>& steps) {
  if (steps.empty()) return;
  Impl& self = *impl_;
  const std::string doing = fmt::format("append {} steps", steps.size());
  const auto write = [&] {
    self.retrying([&](bool again) {
      if (again) {  // all or nothing: the batch's first step tells whether it committed
        auto q = self.query("SELECT 1 FROM steps WHERE run_id = ?1 AND step = ?2", doing);
        q->bind(1, run_id);
        q->bind(2, steps.front().step);
        if (q->step()) return;
      }
      Transaction tx(*self.db, doing);
      self.require_running(run_id, doing);
      self.insert_steps(run_id, steps, doing);
      tx.commit();
    });
  };
  if (!self.live.count(run_id)) return write();
  // A run of this Store on a server: while the server is away, into the spill;
  // once it is back, what the spill kept goes first.
  if (self.spilled.count(run_id) && !self.flush_spilled(run_id, /*wait=*/false)) {
    self.spill->keep_steps(run_id, steps);
    return;
  }
  if (!self.server_write(write, /*wait=*/false)) {
    self.spill_run(run_id, "could not store its steps");
    self.spill->keep_steps(run_id, steps);
  }
}

void Store::finish_run(const std::string& run_id, RunStatus status, const std::string& reason,
                       const MetricList& metrics) {
  Impl& self = *impl_;
  const std::string doing = fmt::format("finish run {}", run_id);
  self.status_name(status, doing);
  if (status == RunStatus::running) self.db->fail(doing, "a run cannot be finished as running");
  self.check_metrics(metrics, doing);
  const auto write = [&] {
    self.retrying([&](bool again) {
      if (again && self.status_of(run_id, doing) == status) return;  // the lost attempt committed
      Transaction tx(*self.db, doing);
      self.require_running(run_id, doing);
      self.finish_row(run_id, status, reason, now_utc(), doing);
      self.upsert_metrics(run_id, metrics, doing);
      tx.commit();
    });
  };
  if (!self.live.count(run_id)) {
    write();
  } else {
    // The end of a run is worth waiting for the server (up to the reconnect
    // patience); without it, the run ends in the spill, for `db push`.
    const bool stored = (!self.spilled.count(run_id) || self.flush_spilled(run_id, /*wait=*/true)) &&
                        self.server_write(write, /*wait=*/true);
    if (!stored) {
      self.spill_run(run_id, "could not store its end");
      self.spill->keep_finish(run_id, status, reason, metrics);
      self.keep_ended(run_id, status);
    }
    self.live.erase(run_id);
    self.spilled.erase(run_id);
    self.close_spill();
  }
  if (self.leases) self.leases->release(run_id);
  if (!self.kept.count(run_id)) causes::remove(self.causes, run_id);  // a kept run's cause is for its row
}

bool Store::finish_run_or_keep_cause(const std::string& run_id, RunStatus status,
                                     const std::string& reason) noexcept {
  try {
    finish_run(run_id, status, reason);
    return true;
  } catch (...) {  // the store error itself, or memory: keep the cause for later
  }
  if (impl_->leases) impl_->leases->release(run_id);  // the lease lapses; the cause tells why
  causes::write(impl_->causes, run_id, status, reason);
  return false;
}

// ---- whole runs -----------------------------------------------------------------

ImportOutcome Store::import_run(const RunRecord& run, const std::vector<StepRecord>& steps,
                                const MetricList& metrics, bool replace) {
  return import_runs({RunBundle{run, steps, metrics}}, replace).front();
}

std::vector<ImportOutcome> Store::import_runs(const std::vector<RunBundle>& bundles, bool replace) {
  Impl& self = *impl_;
  const std::string doing =
      bundles.size() == 1 ? fmt::format("import run {}", bundles.front().run.run_id)
                          : fmt::format("import {} runs", bundles.size());
  for (const RunBundle& b : bundles) {
    const std::string what = fmt::format("import run {}", b.run.run_id);
    if (b.run.run_id.empty()) self.db->fail(what, "an imported run needs a run_id");
    if (b.run.status == RunStatus::running) self.db->fail(what, "an imported run must be finished, not running");
    self.check_metrics(b.metrics, what);
    self.check_run_row(b.run, what);
  }
  if (bundles.empty()) return {};
  return self.retrying([&](bool) {
    Transaction tx(*self.db, doing);
    const std::string now = now_utc();
    std::set<std::string> replaced;
    if (replace) {
      // Foreign keys cascade: the old steps and metrics go with the rows.
      for (const RunBundle& b : bundles) {
        auto q = self.query("DELETE FROM runs WHERE run_id = ?1", fmt::format("import run {}", b.run.run_id));
        q->bind(1, b.run.run_id);
        q->run();
        if (q->changes() > 0) replaced.insert(b.run.run_id);
      }
    }
    // The rows, many to a statement; RETURNING names those written (absent before).
    std::set<std::string> added;
    constexpr size_t kRunsPerInsert = 100;
    for (size_t first = 0; first < bundles.size(); first += kRunsPerInsert) {
      const size_t n = std::min(kRunsPerInsert, bundles.size() - first);
      auto q = self.query(insert_runs_sql(self.dialect(), n, false, true), doing);
      for (size_t i = 0; i < n; ++i) {
        const RunRecord& run = bundles[first + i].run;
        RunRecord row = run;
        if (row.started_at.empty()) row.started_at = now;  // never after finished_at
        self.bind_run_row(*q, static_cast<int>(i * kRunRowColumns.size()), row, row.status, row.reason,
                          row.finished_at ? *row.finished_at : now, doing);
      }
      while (q->step()) added.insert(q->text(0));
    }
    // What the new runs hold, one bulk write per table.
    std::vector<Value> steps, metrics;
    std::vector<MetricList> kept_metrics;
    kept_metrics.reserve(bundles.size());
    std::set<std::string> written;  // a run listed twice is written once
    std::vector<ImportOutcome> outcomes;
    std::vector<const RunBundle*> present;
    for (const RunBundle& b : bundles) {
      const std::string& id = b.run.run_id;
      if (!added.count(id) || !written.insert(id).second) {
        outcomes.push_back(ImportOutcome::kPresent);
        present.push_back(&b);
        continue;
      }
      outcomes.push_back(replaced.count(id) ? ImportOutcome::kReplaced : ImportOutcome::kAdded);
      for (const StepRecord& s : b.steps) append_step_values(steps, id, s);
      kept_metrics.push_back(last_of_each(b.metrics));
      for (const auto& [name, value] : kept_metrics.back())
        metrics.insert(metrics.end(), {Value(std::string_view(id)), Value(std::string_view(name)),
                                       value ? Value(*value) : Value()});
    }
    try {
      self.insert_rows("steps", {kStepRowColumns.begin(), kStepRowColumns.end()}, steps, doing);
    } catch (const StoreError& e) {
      if (e.fault() == StoreFault::kConnectionLost) throw;
      // Name the run and step that repeat one (a new run's steps can clash only among themselves).
      for (const RunBundle& b : bundles) {
        std::set<int64_t> seen;
        for (const StepRecord& st : b.steps)
          if (added.count(b.run.run_id) && !seen.insert(st.step).second)
            throw StoreError(fmt::format("{} (import run {}: step {} twice; none of the runs was stored)", e.what(),
                                         b.run.run_id, st.step),
                             e.sqlite_code(), e.fault());
      }
      throw;
    }
    self.insert_rows("run_metrics", {kMetricRowColumns.begin(), kMetricRowColumns.end()}, metrics, doing);
    // A run stored unfinished by a writer that lost its server, and finished
    // here (its spill, pushed): completed with what the store lacks.
    size_t at = 0;
    for (size_t i = 0; i < bundles.size(); ++i) {
      if (outcomes[i] != ImportOutcome::kPresent) continue;
      if (self.complete_run(*present[at++], doing)) outcomes[i] = ImportOutcome::kCompleted;
    }
    tx.commit();
    // A completed run's cause, left here by its writer for the row, is said and done.
    for (size_t i = 0; i < bundles.size(); ++i)
      if (outcomes[i] == ImportOutcome::kCompleted) causes::remove(self.causes, bundles[i].run.run_id);
    return outcomes;
  });
}

bool Store::Impl::complete_run(const RunBundle& b, std::string_view doing) {
  const RunRecord& run = b.run;
  {
    auto q = query("SELECT status, reason, host, pid FROM runs WHERE run_id = ?1", doing);
    q->bind(1, run.run_id);
    if (!q->step()) return false;
    if (!left_by_lost_writer(q->text(0), q->text(1)) || q->text(2) != run.host || q->int64(3) != run.pid) return false;
  }
  std::set<int64_t> stored;
  {
    auto q = query("SELECT step FROM steps WHERE run_id = ?1", doing);
    q->bind(1, run.run_id);
    while (q->step()) stored.insert(q->int64(0));
  }
  std::vector<StepRecord> missing;
  for (const StepRecord& s : b.steps)
    if (stored.insert(s.step).second) missing.push_back(s);
  insert_steps(run.run_id, missing, doing);
  upsert_metrics(run.run_id, b.metrics, doing);
  finish_row(run.run_id, run.status, run.reason, run.finished_at ? *run.finished_at : now_utc(), doing);
  return true;
}

// ---- runs whose writer is gone ----------------------------------------------------

int Store::recover_stale_runs() {
  Impl& self = *impl_;
  struct Stale {
    std::string run_id;
    RunStatus status;
    std::string reason;
  };
  const std::string host = host_name();
  const std::string doing = "recover stale runs";
  std::vector<Stale> stale;
  std::vector<std::string> obsolete;  // causes of runs finished since
  const int recovered = self.retrying([&](bool) {
    stale.clear();
    obsolete.clear();
    Transaction tx(*self.db, doing);
    std::set<std::string> found;
    // The runs this host's processes gave up on, leaving the cause in a file.
    std::vector<std::pair<std::string, int64_t>> here;
    {
      auto q = self.query("SELECT run_id, pid FROM runs WHERE status = 'running' AND host = ?1", doing);
      q->bind(1, host);
      while (q->step()) here.emplace_back(q->text(0), q->int64(1));
    }
    for (const auto& [run_id, pid] : here)
      if (const auto cause = causes::read(self.causes, run_id)) {
        stale.push_back({run_id, cause->status, cause->reason});
        found.insert(run_id);
      }
    // And those interrupted meanwhile for their lapsed lease: the cause says more
    // (a run ended while its server was away: where the rest of it is).
    for (const std::string& run_id : causes::written(self.causes)) {
      if (found.count(run_id)) continue;
      auto q = self.query("SELECT status, reason, host FROM runs WHERE run_id = ?1", doing);
      q->bind(1, run_id);
      if (!q->step()) continue;
      if (!left_by_lost_writer(q->text(0), q->text(1))) obsolete.push_back(run_id);  // finished since (pushed)
      if (q->text(0) != "interrupted" || q->text(1).rfind(kLapsedLease, 0) != 0 || q->text(2) != host) continue;
      q.reset();
      if (const auto cause = causes::read(self.causes, run_id)) {
        stale.push_back({run_id, cause->status, cause->reason});
        found.insert(run_id);
      }
    }
    const auto last_step = [&](const std::string& run_id) -> std::optional<int64_t> {
      auto q = self.query("SELECT max(step) FROM steps WHERE run_id = ?1", doing);
      q->bind(1, run_id);
      if (!q->step() || q->is_null(0)) return std::nullopt;
      return q->int64(0);
    };
    if (self.dialect().leases) {
      // Any host's run whose lease lapsed on the server's clock.
      std::vector<std::array<std::string, 4>> lapsed;
      {
        auto q = self.query(fmt::format("SELECT run_id, host, pid, lease_expires_at FROM runs WHERE status = "
                                        "'running' AND lease_expires_at IS NOT NULL AND lease_expires_at < {}",
                                        self.dialect().now_sql),
                            doing);
        while (q->step()) lapsed.push_back({q->text(0), q->text(1), q->text(2), q->text(3)});
      }
      for (const auto& [run_id, run_host, pid, expired] : lapsed)
        if (!found.count(run_id))
          stale.push_back({run_id, RunStatus::interrupted,
                           fmt::format("{}{} on {} lapsed at {} without the run finishing ({})", kLapsedLease, pid,
                                       run_host, expired, last_step_text(last_step(run_id)))});
    } else {
      // This host's runs whose process no longer exists.
      for (const auto& [run_id, pid] : here)
        if (!found.count(run_id) && process_is_gone(pid))
          stale.push_back({run_id, RunStatus::interrupted,
                           fmt::format("process {} on {} exited without finishing the run ({})", pid, host,
                                       last_step_text(last_step(run_id)))});
    }
    int changed = 0;
    if (!stale.empty()) {
      const std::string now = now_utc();
      auto q = self.query(
          fmt::format("UPDATE runs SET status = ?4, reason = ?2, finished_at = ?3, lease_expires_at = NULL"
                      " WHERE run_id = ?1 AND (status = 'running' OR (status = 'interrupted' AND"
                      " substr(reason, 1, {}) = ?5))",
                      kLapsedLease.size()),
          doing);
      for (const Stale& s : stale) {
        q->reset();
        q->bind(1, s.run_id);
        q->bind(2, s.reason);
        q->bind(3, now);
        q->bind(4, to_string(s.status));
        q->bind(5, kLapsedLease);
        q->run();
        changed += static_cast<int>(q->changes());
      }
    }
    tx.commit();
    return changed;
  });
  for (const Stale& s : stale) causes::remove(self.causes, s.run_id);
  for (const std::string& run_id : obsolete) causes::remove(self.causes, run_id);
  return recovered;
}

}  // namespace twinbench::store
