// Reading a store (store.h): runs selected in SQL, one statement per
// question whatever the store holds, and their metrics and steps read in
// batches of runs — so that a command reads what it shows, never the whole
// store (docs/fleet.md, "Scale"). Every query here has an index of schema v5
// to answer it (schema.cpp; the store suite checks the plans).
#include <algorithm>
#include <limits>
#include <set>
#include <variant>

#include <fmt/format.h>

#include "harness/base/hardware.h"
#include "harness/store/store_impl.h"

namespace twinbench::store {

namespace {

using backend::Query;

// Above every character a prefix may be followed by (U+10FFFF, a noncharacter):
// `col >= p AND col < p + kAfterPrefix` is an index range over the values that
// start with p, in byte order (SQLite's BINARY, PostgreSQL's COLLATE "C").
constexpr std::string_view kAfterPrefix = "\xf4\x8f\xbf\xbf";

// A WHERE clause built from the fields a filter sets, with numbered parameters:
// only the conditions asked for appear, so that the engine plans each form of
// the query with the index that serves it (a catch-all `(?1 IS NULL OR ...)`
// form would be planned once, for no index).
class Conditions {
 public:
  void equal(std::string_view column, const std::optional<std::string>& value) {
    if (value) add(fmt::format("{} = {}", column, param(*value)));
  }
  // `column` starts with `prefix`: an index range, then the exact test.
  void prefix(std::string_view column, const std::string& prefix) {
    const std::string p = param(prefix);
    add(fmt::format("{0} >= {1} AND {0} < {2} AND substr({0}, 1, length({1})) = {1}", column, p,
                    param(prefix + std::string(kAfterPrefix))));
  }
  void add(std::string clause) { clauses_.push_back(std::move(clause)); }
  std::string param(std::string value) {
    values_.emplace_back(std::move(value));
    return fmt::format("?{}", values_.size());
  }
  std::string param(int64_t value) {
    values_.emplace_back(value);
    return fmt::format("?{}", values_.size());
  }
  std::string where() const {
    std::string out;
    for (const auto& c : clauses_) out += (out.empty() ? " WHERE " : " AND ") + c;
    return out;
  }
  void bind(backend::Statement& q) const {
    for (size_t i = 0; i < values_.size(); ++i) {
      const int n = static_cast<int>(i + 1);
      if (const auto* text = std::get_if<std::string>(&values_[i]))
        q.bind(n, *text);
      else
        q.bind(n, std::get<int64_t>(values_[i]));
    }
  }

 private:
  std::vector<std::string> clauses_;
  std::vector<std::variant<std::string, int64_t>> values_;
};

Conditions conditions_of(const RunFilter& f, std::string_view status) {
  Conditions c;
  c.equal("group_id", f.group_id);
  if (f.group_prefix) c.prefix("group_id", *f.group_prefix);
  c.equal("case_name", f.case_name);
  c.equal("variant", f.variant);
  c.equal("hardware_fingerprint", f.hardware_fingerprint);
  c.equal("git_branch", f.git_branch);
  if (!status.empty()) c.equal("status", std::string(status));
  if (f.commit_prefix) c.prefix("git_commit", *f.commit_prefix);
  if (!f.commits.empty()) {
    std::string list;
    for (const auto& commit : f.commits) list += (list.empty() ? "" : ", ") + c.param(commit);
    c.add(fmt::format("git_commit IN ({})", list));
  }
  if (f.imported) c.add(*f.imported ? "source = 'import'" : "source <> 'import'");
  if (f.started_since) c.add(fmt::format("started_at >= {}", c.param(*f.started_since)));
  if (f.started_before) c.add(fmt::format("started_at < {}", c.param(*f.started_before)));
  return c;
}

// The ids of `run_ids[first, first + n)` as an IN list of a fixed length (the
// last id repeated): few distinct statements to prepare and cache.
size_t padded_length(size_t n, size_t most) {
  for (const size_t size : {size_t{1}, size_t{8}, size_t{64}})
    if (n <= size && size <= most) return size;
  return most;
}

std::string in_list(size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += fmt::format("{}?{}", i ? ", " : "", i + 1);
  return out;
}

// Calls read(query) for each batch of at most `per` ids, the query bound to them.
template <typename Read>
void for_batches(Store::Impl& self, const std::vector<std::string>& ids, size_t per, std::string_view sql_format,
                 std::string_view what, Read&& read) {
  for (size_t first = 0; first < ids.size(); first += per) {
    const size_t n = std::min(per, ids.size() - first), padded = padded_length(n, per);
    const std::string sql = fmt::format(fmt::runtime(sql_format), in_list(padded));
    self.retrying([&](bool) {
      auto q = self.query(sql, fmt::format("read {} of {} runs", what, n));
      for (size_t i = 0; i < padded; ++i) q->bind(static_cast<int>(i + 1), ids[first + std::min(i, n - 1)]);
      read(*q);
    });
  }
}

constexpr std::string_view kStepSelectColumns =
    "step, loss, step_time_s, tokens, is_warmup, is_eval, is_checkpoint, eval_loss, is_stall";

// A row of kStepSelectColumns from column `at` on.
StepRecord read_step(const backend::Statement& q, int at) {
  StepRecord s;
  s.step = q.int64(at);
  s.loss = q.real(at + 1);
  s.seconds = q.real(at + 2);
  s.tokens = q.int64(at + 3);
  s.warmup = q.int64(at + 4) != 0;
  s.eval = q.int64(at + 5) != 0;
  s.checkpoint = q.int64(at + 6) != 0;
  s.eval_loss = q.optional_real(at + 7);
  s.stall = q.int64(at + 8) != 0;
  return s;
}

}  // namespace

RunRecord Store::Impl::read_run(const backend::Statement& row) const {
  RunRecord run;
  run.run_id = row.text(0);
  run.group_id = row.text(1);
  run.case_name = row.text(2);
  run.variant = row.text(3);
  run.repeat_index = static_cast<int>(row.int64(4));
  try {
    run.status = status_from_string(row.text(5));
  } catch (const std::invalid_argument& e) {
    db->fail(fmt::format("read run {}", run.run_id), e.what());
  }
  run.reason = row.text(6);
  run.started_at = row.text(7);
  run.finished_at = row.optional_text(8);
  run.host = row.text(9);
  run.pid = row.int64(10);
  run.config_json = row.text(11);
  run.provenance_json = row.text(12);
  run.git_commit = row.text(13);
  run.git_branch = row.text(14);
  run.device_name = row.text(15);
  run.world_size = static_cast<int>(row.int64(16));
  run.hardware_fingerprint = row.text(17);
  run.stored_order = row.int64(18);
  // Runs stored before schema version 4 and not backfilled: from their provenance.
  if (run.hardware_fingerprint.empty()) run.hardware_fingerprint = hardware_fingerprint(run.provenance_json).id;
  return run;
}

std::vector<RunRecord> Store::runs(const RunFilter& filter) const {
  Impl& self = *impl_;
  const std::string_view status = filter.status ? self.status_name(*filter.status, "list runs") : "";
  Conditions c = conditions_of(filter, status);
  const bool paged = filter.limit || filter.offset > 0;
  const std::string limit =
      paged ? fmt::format(" LIMIT {} OFFSET {}", c.param(filter.limit.value_or(std::numeric_limits<int64_t>::max())),
                          c.param(filter.offset))
            : "";
  const std::string sql =
      fmt::format("SELECT {} FROM runs{} ORDER BY started_at DESC, rowid DESC{}", kRunSelectColumns, c.where(), limit);
  return self.retrying([&](bool) {
    auto q = self.query(sql, "list runs");
    c.bind(*q);
    std::vector<RunRecord> out;
    while (q->step()) out.push_back(self.read_run(*q));
    return out;
  });
}

bool Store::has_runs(const RunFilter& filter) const {
  Impl& self = *impl_;
  const std::string_view status = filter.status ? self.status_name(*filter.status, "look up runs") : "";
  const Conditions c = conditions_of(filter, status);
  const std::string sql = fmt::format("SELECT 1 FROM runs{} LIMIT 1", c.where());
  return self.retrying([&](bool) {
    auto q = self.query(sql, "look up runs");
    c.bind(*q);
    return q->step();
  });
}

std::vector<RunRecord> Store::runs_stored_after(int64_t after, size_t limit) const {
  Impl& self = *impl_;
  return self.retrying([&](bool) {
    auto q = self.query(fmt::format("SELECT {} FROM runs WHERE rowid > ?1 ORDER BY rowid LIMIT ?2", kRunSelectColumns),
                        "list runs in the order they were stored");
    q->bind(1, after);
    q->bind(2, static_cast<int64_t>(limit));
    std::vector<RunRecord> out;
    while (q->step()) out.push_back(self.read_run(*q));
    return out;
  });
}

std::vector<GroupSummary> Store::groups_with_variant(const std::string& variant) const {
  Impl& self = *impl_;
  return self.retrying([&](bool) {
    auto q = self.query(
        "SELECT group_id, min(started_at), count(*) FROM runs WHERE variant = ?1 GROUP BY group_id"
        " ORDER BY max(started_at) DESC, max(rowid) DESC",
        fmt::format("list the groups of {}", variant));
    q->bind(1, variant);
    std::vector<GroupSummary> out;
    while (q->step()) out.push_back({q->text(0), q->text(1), q->int64(2)});
    return out;
  });
}

std::vector<Series> Store::series(const std::optional<std::string>& branch) const {
  Impl& self = *impl_;
  // A skip scan of the series index (runs_by_series; runs_by_branch within a
  // branch): each step seeks the series after the last one — the next
  // hardware of its case and variant, else the next variant of its case, else
  // the next case — with three index seeks per column, so that the statement
  // costs a few probes per series, not a row per run. (A row-value comparison
  // `(case_name, variant, hardware_fingerprint) > (...)` would read the case's
  // index entries up to there: SQLite seeks by its first column only.)
  const std::string on_branch = branch ? "git_branch = ?1 AND " : "";
  const std::string first_where = branch ? " WHERE git_branch = ?1" : "";
  const auto next = [&](std::string_view column) {
    return fmt::format(
        "COALESCE((SELECT {0} FROM runs WHERE {1}case_name = s.c AND variant = s.v AND hardware_fingerprint > s.h"
        " ORDER BY hardware_fingerprint LIMIT 1),"
        " (SELECT {0} FROM runs WHERE {1}case_name = s.c AND variant > s.v ORDER BY variant, hardware_fingerprint"
        " LIMIT 1),"
        " (SELECT {0} FROM runs WHERE {1}case_name > s.c ORDER BY case_name, variant, hardware_fingerprint LIMIT 1))",
        column, on_branch);
  };
  const std::string sql = fmt::format(
      "WITH RECURSIVE s(c, v, h) AS ("
      " SELECT c, v, h FROM (SELECT case_name AS c, variant AS v, hardware_fingerprint AS h FROM runs{0}"
      " ORDER BY case_name, variant, hardware_fingerprint LIMIT 1) AS head"
      " UNION ALL"
      " SELECT {1}, {2}, {3} FROM s WHERE s.c IS NOT NULL)"
      " SELECT c, v, h FROM s WHERE c IS NOT NULL",
      first_where, next("case_name"), next("variant"), next("hardware_fingerprint"));
  return self.retrying([&](bool) {
    auto q = self.query(sql, branch ? fmt::format("list the series of branch {}", *branch) : "list the series");
    if (branch) q->bind(1, *branch);
    std::vector<Series> out;
    while (q->step()) out.push_back({q->text(0), q->text(1), q->text(2)});
    return out;
  });
}

int64_t Store::count_runs() const {
  return impl_->retrying([&](bool) {
    auto q = impl_->query("SELECT count(*) FROM runs", "count runs");
    q->step();
    return q->int64(0);
  });
}

std::vector<RunRecord> Store::completed_runs_of_groups(const std::vector<std::string>& groups,
                                                      const std::optional<Series>& series) const {
  std::vector<RunRecord> out;
  // The groups as the leading column of runs_by_group, with no ORDER BY and, for
  // every series, no status either: SQLite (without statistics) would take an
  // index that orders, or the status's, over the group's otherwise.
  const std::string more = series ? " AND case_name = ?{0} AND variant = ?{1} AND hardware_fingerprint = ?{2}"
                                    " AND status = 'completed'"
                                  : "";
  for (size_t first = 0; first < groups.size(); first += kRunsPerMetricRead) {
    const size_t n = std::min(kRunsPerMetricRead, groups.size() - first);
    const size_t padded = padded_length(n, kRunsPerMetricRead);
    const std::string sql =
        fmt::format("SELECT {} FROM runs WHERE group_id IN ({}){}", kRunSelectColumns, in_list(padded),
                    fmt::format(fmt::runtime(more), padded + 1, padded + 2, padded + 3));
    impl_->retrying([&](bool) {
      auto q = impl_->query(sql, fmt::format("read the completed runs of {} groups", n));
      for (size_t i = 0; i < padded; ++i) q->bind(static_cast<int>(i + 1), groups[first + std::min(i, n - 1)]);
      if (series) {
        q->bind(static_cast<int>(padded + 1), series->case_name);
        q->bind(static_cast<int>(padded + 2), series->variant);
        q->bind(static_cast<int>(padded + 3), series->hardware_fingerprint);
      }
      std::vector<RunRecord> batch;
      while (q->step()) {
        RunRecord r = impl_->read_run(*q);
        if (r.status == RunStatus::completed) batch.push_back(std::move(r));
      }
      // A padded batch reads its last group again.
      if (padded > n) {
        std::set<std::string> seen;
        batch.erase(std::remove_if(batch.begin(), batch.end(),
                                   [&](const RunRecord& r) { return !seen.insert(r.run_id).second; }),
                    batch.end());
      }
      for (auto& r : batch) out.push_back(std::move(r));
    });
  }
  return out;
}

std::vector<GroupStart> Store::group_starts(const std::string& since) const {
  return impl_->retrying([&](bool) {
    auto q = impl_->query("SELECT group_id, started_at, matrix, runs FROM run_groups WHERE started_at >= ?1"
                          " ORDER BY started_at",
                          fmt::format("list the groups started since {}", since));
    q->bind(1, since);
    std::vector<GroupStart> out;
    while (q->step()) out.push_back({q->text(0), q->text(1), q->int64(2) != 0, q->int64(3)});
    return out;
  });
}

std::string Store::change_marker() const {
  return impl_->retrying([&](bool) {
    auto q = impl_->query(
        "SELECT (SELECT max(rowid) FROM runs), (SELECT count(*) FROM runs WHERE status = 'running'),"
        " (SELECT max(id) FROM alerts), (SELECT max(updated_at) FROM alerts)",
        "read the store's change marker");
    q->step();
    return fmt::format("{}:{}:{}:{}", q->is_null(0) ? 0 : q->int64(0), q->int64(1), q->is_null(2) ? 0 : q->int64(2),
                       q->text(3));
  });
}

std::optional<RunRecord> Store::run(const std::string& run_id) const {
  return impl_->retrying([&](bool) -> std::optional<RunRecord> {
    auto q = impl_->query(fmt::format("SELECT {} FROM runs WHERE run_id = ?1", kRunSelectColumns),
                          fmt::format("read run {}", run_id));
    q->bind(1, run_id);
    if (!q->step()) return std::nullopt;
    return impl_->read_run(*q);
  });
}

std::set<std::string> Store::present_runs(const std::vector<std::string>& run_ids) const {
  std::set<std::string> out;
  for_batches(*impl_, run_ids, kRunsPerMetricRead, "SELECT run_id FROM runs WHERE run_id IN ({})", "presence",
              [&](backend::Statement& q) {
                while (q.step()) out.insert(q.text(0));
              });
  return out;
}

std::set<std::string> Store::unfinished_runs(const std::vector<RunRecord>& runs) const {
  std::map<std::string, const RunRecord*> given;
  std::vector<std::string> ids;
  for (const RunRecord& r : runs)
    if (given.emplace(r.run_id, &r).second) ids.push_back(r.run_id);
  std::set<std::string> out;
  for_batches(*impl_, ids, kRunsPerMetricRead,
              "SELECT run_id, status, reason, host, pid FROM runs WHERE run_id IN ({})", "states",
              [&](backend::Statement& q) {
                while (q.step()) {
                  const RunRecord& r = *given.at(q.text(0));
                  if (left_by_lost_writer(q.text(1), q.text(2)) && q.text(3) == r.host && q.int64(4) == r.pid)
                    out.insert(r.run_id);
                }
              });
  return out;
}

std::vector<StepRecord> Store::steps(const std::string& run_id) const {
  return impl_->retrying([&](bool) {
    auto q = impl_->query(fmt::format("SELECT {} FROM steps WHERE run_id = ?1 ORDER BY step", kStepSelectColumns),
                          fmt::format("read steps of run {}", run_id));
    q->bind(1, run_id);
    std::vector<StepRecord> out;
    while (q->step()) out.push_back(read_step(*q, 0));
    return out;
  });
}

std::map<std::string, std::vector<StepRecord>> Store::steps_of(const std::vector<std::string>& run_ids) const {
  std::map<std::string, std::vector<StepRecord>> out;
  for_batches(*impl_, run_ids, kRunsPerStepRead,
              fmt::format("SELECT run_id, {} FROM steps WHERE run_id IN ({{}}) ORDER BY run_id, step", kStepSelectColumns),
              "steps", [&](backend::Statement& q) {
                std::vector<StepRecord>* into = nullptr;
                std::string current;
                while (q.step()) {
                  std::string id = q.text(0);
                  if (!into || id != current) {
                    current = std::move(id);
                    into = &out[current];
                    into->clear();  // a padded batch reads its last run again
                  }
                  into->push_back(read_step(q, 1));
                }
              });
  return out;
}

std::map<std::string, int64_t> Store::step_counts(const std::vector<std::string>& run_ids) const {
  std::map<std::string, int64_t> out;
  for_batches(*impl_, run_ids, kRunsPerMetricRead,
              "SELECT run_id, count(*) FROM steps WHERE run_id IN ({}) GROUP BY run_id", "step counts",
              [&](backend::Statement& q) {
                while (q.step()) out[q.text(0)] = q.int64(1);
              });
  return out;
}

MetricMap Store::metrics(const std::string& run_id) const {
  return impl_->retrying([&](bool) {
    auto q = impl_->query("SELECT name, value FROM run_metrics WHERE run_id = ?1",
                          fmt::format("read metrics of run {}", run_id));
    q->bind(1, run_id);
    MetricMap out;
    while (q->step()) out.emplace(q->text(0), q->optional_real(1));
    return out;
  });
}

std::map<std::string, MetricMap> Store::metrics_of(const std::vector<std::string>& run_ids) const {
  std::map<std::string, MetricMap> out;
  for_batches(*impl_, run_ids, kRunsPerMetricRead, "SELECT run_id, name, value FROM run_metrics WHERE run_id IN ({})",
              "metrics", [&](backend::Statement& q) {
                while (q.step()) out[q.text(0)][q.text(1)] = q.optional_real(2);
              });
  return out;
}

}  // namespace twinbench::store
