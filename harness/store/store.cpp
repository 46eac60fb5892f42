// The Store: opening a store, writing runs, steps, metrics and calibrations,
// recovering runs whose writer is gone, and reading it all back — written once
// against backend::Connection (backend.h) for every backend.
#include "harness/store/store.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <random>
#include <set>
#include <thread>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/base/hardware.h"
#include "harness/store/backend.h"
#include "harness/store/causes.h"
#include "harness/store/dialect.h"
#include "harness/store/lease.h"
#include "harness/store/schema.h"

namespace twinbench::store {

namespace {

using backend::Query;
using backend::Transaction;

// The columns read_run() expects, in its order.
constexpr std::string_view kSelectRuns =
    "SELECT run_id, group_id, case_name, variant, repeat_index, status, reason,"
    " started_at, finished_at, host, pid, config_json, provenance_json,"
    " git_commit, git_branch, device_name, world_size, hardware_fingerprint FROM runs ";

const std::string& select_run_by_id_sql() {
  static const std::string sql = std::string(kSelectRuns) + "WHERE run_id = ?1";
  return sql;
}

const std::string& select_runs_filtered_sql() {
  static const std::string sql =
      std::string(kSelectRuns) +
      // CAST: PostgreSQL cannot type a parameter that first appears in `IS NULL`.
      "WHERE (CAST(?1 AS TEXT) IS NULL OR group_id = ?1) AND (CAST(?2 AS TEXT) IS NULL OR case_name = ?2)"
      " AND (CAST(?3 AS TEXT) IS NULL OR variant = ?3) AND (CAST(?4 AS TEXT) IS NULL OR status = ?4)"
      " AND (CAST(?6 AS TEXT) IS NULL OR started_at >= ?6)"
      " ORDER BY started_at DESC, rowid DESC LIMIT ?5";
  return sql;
}

// The run row; ?19 is the lease length in seconds where runs hold leases.
// `if_absent`: nothing is written when a run of that id is stored.
std::string insert_run_sql(const Dialect& dialect, bool lease, bool if_absent) {
  return fmt::format(
      "INSERT INTO runs (run_id, group_id, case_name, variant, repeat_index, status,"
      " reason, started_at, finished_at, host, pid, config_json, provenance_json,"
      " git_commit, git_branch, device_name, world_size, hardware_fingerprint, lease_expires_at)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, {})"
      "{}",
      lease ? dialect.lease_until_sql(19) : "NULL", if_absent ? " ON CONFLICT (run_id) DO NOTHING" : "");
}

constexpr int kStepFields = 10;
constexpr size_t kRowsPerInsert = 100;  // rows per multi-row INSERT: few round trips to a server

// INSERT INTO steps ... VALUES (?1..?10), (?11..?20), ... for `rows` rows.
std::string insert_steps_sql(size_t rows) {
  std::string sql =
      "INSERT INTO steps (run_id, step, loss, step_time_s, tokens, is_warmup, is_eval,"
      " is_checkpoint, eval_loss, is_stall) VALUES ";
  for (size_t r = 0; r < rows; ++r) {
    sql += r ? ", (" : "(";
    for (int c = 1; c <= kStepFields; ++c) sql += fmt::format("{}?{}", c > 1 ? ", " : "", r * kStepFields + c);
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

// How long a store keeps trying to reach a server that went away mid-operation:
// $TWINBENCH_RECONNECT_S, else 30 s.
std::chrono::milliseconds reconnect_patience() {
  const char* env = std::getenv("TWINBENCH_RECONNECT_S");
  if (!env || !*env) return std::chrono::seconds(30);
  char* end = nullptr;
  const double s = std::strtod(env, &end);
  if (*end != '\0' || !std::isfinite(s) || s < 0 || s > 86400)
    throw std::invalid_argument(fmt::format("TWINBENCH_RECONNECT_S={}: expected a number of seconds in [0, 86400]", env));
  return std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
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

}  // namespace

// ---- free functions -----------------------------------------------------------

std::string new_uuid() {
  std::random_device device;  // the OS entropy source: distinct across fork()
  std::array<uint8_t, 16> bytes{};
  for (size_t i = 0; i < bytes.size(); i += 4) {
    uint32_t word = device();
    std::memcpy(&bytes[i], &word, 4);
  }
  bytes[6] = static_cast<uint8_t>((bytes[6] & 0x0f) | 0x40);  // version 4
  bytes[8] = static_cast<uint8_t>((bytes[8] & 0x3f) | 0x80);  // RFC 4122 variant
  std::string out;
  out.reserve(36);
  for (size_t i = 0; i < bytes.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    out += fmt::format("{:02x}", bytes[i]);
  }
  return out;
}

std::string now_utc() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const auto seconds = floor<std::chrono::seconds>(now);
  const auto millis = duration_cast<milliseconds>(now - seconds).count();
  const std::time_t t = system_clock::to_time_t(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:%Y-%m-%dT%H:%M:%S}.{:03}Z", tm, millis);
}

std::string host_name() {
  std::array<char, 256> buffer{};
  if (gethostname(buffer.data(), buffer.size() - 1) != 0)
    throw StoreError(fmt::format("gethostname: {}", std::strerror(errno)));
  return buffer.data();
}

// ---- Store::Impl ----------------------------------------------------------------

struct Store::Impl {
  std::string location;
  std::unique_ptr<backend::Connection> db;
  std::string causes;  // the causes folder (causes.h)
  std::chrono::milliseconds patience;
  // Prepared once per connection, keyed by their SQL.
  std::map<std::string, std::unique_ptr<backend::Statement>, std::less<>> statements;
  std::unique_ptr<LeaseKeeper> leases;  // started by the first begin_run on a server

  explicit Impl(std::string location);

  const Dialect& dialect() const { return db->dialect(); }
  // The cached statement for `sql`, labelled `doing` for its errors.
  Query query(std::string_view sql, std::string_view doing);
  // Runs `attempt(again)`; when the connection to a server is lost, connects
  // again (for up to `patience`) and runs it once more with again = true, so
  // that it can first check whether its earlier attempt committed after all.
  template <typename Attempt>
  auto retrying(Attempt&& attempt) -> decltype(attempt(false));
  std::string_view status_name(RunStatus status, std::string_view doing) const;
  // Throws unless the run exists and is running (finished runs never change).
  void require_running(const std::string& run_id, std::string_view doing);
  bool has_run(const std::string& run_id, std::string_view doing);
  std::optional<RunStatus> status_of(const std::string& run_id, std::string_view doing);
  void require_json_object(const std::string& text, std::string_view field,
                           std::string_view doing) const;
  // The writes inside a caller's transaction: a checked run row (with
  // `if_absent`, false when a run of that id is stored already; without, that
  // is the engine's unique-key error), steps, metric upserts.
  bool insert_run_row(const RunRecord& run, RunStatus status, const std::string& reason,
                      const std::optional<std::string>& finished_at, std::string_view doing, bool if_absent = false);
  void insert_steps(const std::string& run_id, const std::vector<StepRecord>& steps,
                    std::string_view doing);
  void upsert_metrics(const std::string& run_id, const MetricList& metrics, std::string_view doing);
  void check_metrics(const MetricList& metrics, std::string_view doing) const;
  RunRecord read_run(const backend::Statement& row) const;
  LeaseKeeper& keeper();
};

Store::Impl::Impl(std::string where)
    : location(std::move(where)), db(backend::connect(location)), causes(causes::folder_for(location)),
      patience(reconnect_patience()) {
  const int version = check_schema(*db);  // before anything that could write
  db->configure();
  migrate_schema(*db, version);
}

Query Store::Impl::query(std::string_view sql, std::string_view doing) {
  auto it = statements.find(sql);
  if (it == statements.end())
    it = statements.try_emplace(std::string(sql), db->prepare(sql, std::string(doing))).first;
  else
    it->second->set_doing(doing);
  return Query(it->second.get());
}

template <typename Attempt>
auto Store::Impl::retrying(Attempt&& attempt) -> decltype(attempt(false)) {
  bool again = false;
  for (;;) {
    try {
      return attempt(again);
    } catch (const StoreError& e) {
      if (e.fault() != StoreFault::kConnectionLost) throw;
      db->rollback();
      if (!db->reconnect(patience))
        throw StoreError(fmt::format("{} (the connection was lost and could not be made again within {} s)",
                                     e.what(), patience.count() / 1000.0),
                         e.sqlite_code(), StoreFault::kConnectionLost);
      again = true;
    }
  }
}

LeaseKeeper& Store::Impl::keeper() {
  if (!leases) leases = std::make_unique<LeaseKeeper>(location, lease_seconds());
  return *leases;
}

std::string_view Store::Impl::status_name(RunStatus status, std::string_view doing) const {
  const std::string_view name = to_string(status);
  if (name == "unknown") db->fail(doing, fmt::format("unknown run status {}", static_cast<int>(status)));
  return name;
}

std::optional<RunStatus> Store::Impl::status_of(const std::string& run_id, std::string_view doing) {
  auto q = query("SELECT status FROM runs WHERE run_id = ?1", doing);
  q->bind(1, run_id);
  if (!q->step()) return std::nullopt;
  try {
    return status_from_string(q->text(0));
  } catch (const std::invalid_argument& e) {
    db->fail(doing, e.what());
  }
}

bool Store::Impl::has_run(const std::string& run_id, std::string_view doing) {
  return status_of(run_id, doing).has_value();
}

void Store::Impl::require_running(const std::string& run_id, std::string_view doing) {
  const auto status = status_of(run_id, doing);
  if (!status) db->fail(doing, fmt::format("no such run {}", run_id));
  if (*status != RunStatus::running)
    db->fail(doing, fmt::format("run {} is {}; only a running run can take steps or be "
                                "finished",
                                run_id, to_string(*status)));
}

void Store::Impl::require_json_object(const std::string& text, std::string_view field,
                                      std::string_view doing) const {
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object())
    db->fail(doing, fmt::format("{} is not a JSON object", field));
}

bool Store::Impl::insert_run_row(const RunRecord& run, RunStatus status, const std::string& reason,
                                 const std::optional<std::string>& finished_at, std::string_view doing,
                                 bool if_absent) {
  if (run.run_id.empty()) db->fail(doing, "run_id is empty");
  if (run.case_name.empty()) db->fail(doing, "case_name is empty");
  if (run.variant.empty()) db->fail(doing, "variant is empty");
  if (run.repeat_index < 0) db->fail(doing, "repeat_index is negative");
  if (run.world_size < 1) db->fail(doing, "world_size is less than 1");
  require_json_object(run.config_json, "config_json", doing);
  require_json_object(run.provenance_json, "provenance_json", doing);
  const std::string_view status_text = status_name(status, doing);

  // A running run on a server holds a lease (lease.h).
  const bool lease = status == RunStatus::running && dialect().leases;
  auto q = query(insert_run_sql(dialect(), lease, if_absent), doing);
  q->bind(1, run.run_id);
  q->bind(2, run.group_id);
  q->bind(3, run.case_name);
  q->bind(4, run.variant);
  q->bind(5, run.repeat_index);
  q->bind(6, status_text);
  q->bind(7, reason);
  q->bind(8, run.started_at.empty() ? now_utc() : run.started_at);
  q->bind(9, finished_at);
  q->bind(10, run.host.empty() ? host_name() : run.host);
  q->bind(11, run.pid == 0 ? int64_t{getpid()} : run.pid);
  q->bind(12, run.config_json);
  q->bind(13, run.provenance_json);
  q->bind(14, run.git_commit);
  q->bind(15, run.git_branch);
  q->bind(16, run.device_name);
  q->bind(17, run.world_size);
  q->bind(18, run.hardware_fingerprint.empty() ? hardware_fingerprint(run.provenance_json).id
                                               : run.hardware_fingerprint);
  if (lease) q->bind(19, lease_seconds());
  q->run();
  return q->changes() > 0;
}

void Store::Impl::insert_steps(const std::string& run_id, const std::vector<StepRecord>& steps,
                               std::string_view doing) {
  for (size_t first = 0; first < steps.size(); first += kRowsPerInsert) {
    const size_t rows = std::min(kRowsPerInsert, steps.size() - first);
    auto q = query(insert_steps_sql(rows), doing);
    for (size_t r = 0; r < rows; ++r) {
      const StepRecord& s = steps[first + r];
      const int base = static_cast<int>(r) * kStepFields;
      q->bind(base + 1, run_id);
      q->bind(base + 2, s.step);
      q->bind(base + 3, s.loss);
      q->bind(base + 4, s.seconds);  // NaN (unknown time) is stored as NULL
      q->bind(base + 5, s.tokens);
      q->bind(base + 6, s.warmup ? 1 : 0);
      q->bind(base + 7, s.eval ? 1 : 0);
      q->bind(base + 8, s.checkpoint ? 1 : 0);
      q->bind(base + 9, s.eval_loss);
      q->bind(base + 10, s.stall ? 1 : 0);
    }
    try {
      q->run();
    } catch (const StoreError& e) {
      if (e.fault() == StoreFault::kConnectionLost) throw;
      // The steps of this statement: name the first one that is already stored.
      std::string which = fmt::format("steps {} to {}", steps[first].step, steps[first + rows - 1].step);
      if (rows > 1) {
        std::set<int64_t> seen;
        for (size_t r = 0; r < first + rows; ++r)
          if (!seen.insert(steps[r].step).second && r >= first) {
            which = fmt::format("step {}", steps[r].step);
            break;
          }
      } else {
        which = fmt::format("step {}", steps[first].step);
      }
      throw StoreError(fmt::format("{} ({} of run {}; none of the batch was stored)", e.what(), which, run_id),
                       e.sqlite_code(), e.fault());
    }
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
  // Runs stored before schema version 4: computed from their provenance.
  if (run.hardware_fingerprint.empty()) run.hardware_fingerprint = hardware_fingerprint(run.provenance_json).id;
  return run;
}

// ---- Store ------------------------------------------------------------------------

Store::Store(std::string location) : impl_(std::make_unique<Impl>(std::move(location))) {}
Store::~Store() = default;
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;

const std::string& Store::path() const { return impl_->db->label(); }

const std::string& Store::location() const { return impl_->location; }

std::string_view Store::backend() const { return impl_->dialect().name; }

int Store::code_schema_version() { return latest_schema_version(); }

int Store::file_schema_version() const {
  return impl_->retrying([&](bool) { return read_schema_version(*impl_->db); });
}

std::string Store::begin_run(const RunRecord& run) {
  Impl& self = *impl_;
  RunRecord row = run;
  if (row.run_id.empty()) row.run_id = new_uuid();
  if (row.started_at.empty()) row.started_at = now_utc();
  const std::string doing = run.run_id.empty() ? std::string("begin run") : fmt::format("begin run {}", run.run_id);
  self.retrying([&](bool again) {
    if (again && self.has_run(row.run_id, doing)) return;  // the lost attempt committed
    Transaction tx(*self.db, doing);
    self.insert_run_row(row, RunStatus::running, "", std::nullopt, fmt::format("begin run {}", row.run_id));
    tx.commit();
  });
  if (self.dialect().leases) self.keeper().hold(row.run_id);
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
  self.retrying([&](bool again) {
    if (again && self.has_run(skipped.run_id, doing)) return;
    Transaction tx(*self.db, doing);
    self.insert_run_row(skipped, RunStatus::skipped, reason, now, doing);
    tx.commit();
  });
  return skipped.run_id;
}

void Store::append_steps(const std::string& run_id, const std::vector<StepRecord>& steps) {
  if (steps.empty()) return;
  Impl& self = *impl_;
  const std::string doing = fmt::format("append {} steps", steps.size());
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
}

void Store::finish_run(const std::string& run_id, RunStatus status, const std::string& reason,
                       const MetricList& metrics) {
  Impl& self = *impl_;
  const std::string doing = fmt::format("finish run {}", run_id);
  const std::string_view name = self.status_name(status, doing);
  if (status == RunStatus::running) self.db->fail(doing, "a run cannot be finished as running");
  self.check_metrics(metrics, doing);
  self.retrying([&](bool again) {
    if (again && self.status_of(run_id, doing) == status) return;  // the lost attempt committed
    Transaction tx(*self.db, doing);
    self.require_running(run_id, doing);
    {
      auto q = self.query(kFinishRun, doing);
      q->bind(1, run_id);
      q->bind(2, name);
      q->bind(3, reason);
      q->bind(4, now_utc());
      q->run();
    }
    self.upsert_metrics(run_id, metrics, doing);
    tx.commit();
  });
  if (self.leases) self.leases->release(run_id);
  causes::remove(self.causes, run_id);
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
  }
  if (bundles.empty()) return {};
  return self.retrying([&](bool) {
    std::vector<ImportOutcome> outcomes;
    Transaction tx(*self.db, doing);
    const std::string now = now_utc();
    for (const RunBundle& b : bundles) {
      const std::string what = fmt::format("import run {}", b.run.run_id);
      bool present = false;
      if (replace) {
        // Foreign keys cascade: the old steps and metrics go with the row.
        auto q = self.query("DELETE FROM runs WHERE run_id = ?1", what);
        q->bind(1, b.run.run_id);
        q->run();
        present = q->changes() > 0;
      }
      RunRecord row = b.run;
      if (row.started_at.empty()) row.started_at = now;  // never after finished_at
      if (!self.insert_run_row(row, row.status, row.reason, row.finished_at ? *row.finished_at : now, what,
                               /*if_absent=*/true)) {
        outcomes.push_back(ImportOutcome::kPresent);  // stored already: nothing written
        continue;
      }
      self.insert_steps(row.run_id, b.steps, what);
      self.upsert_metrics(row.run_id, b.metrics, what);
      outcomes.push_back(present ? ImportOutcome::kReplaced : ImportOutcome::kAdded);
    }
    tx.commit();
    return outcomes;
  });
}

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
  const int recovered = self.retrying([&](bool) {
    stale.clear();
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
                           fmt::format("the lease of process {} on {} lapsed at {} without the run finishing ({})",
                                       pid, run_host, expired, last_step_text(last_step(run_id)))});
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
          "UPDATE runs SET status = ?4, reason = ?2, finished_at = ?3, lease_expires_at = NULL"
          " WHERE run_id = ?1 AND status = 'running'",
          doing);
      for (const Stale& s : stale) {
        q->reset();
        q->bind(1, s.run_id);
        q->bind(2, s.reason);
        q->bind(3, now);
        q->bind(4, to_string(s.status));
        q->run();
        changed += static_cast<int>(q->changes());
      }
    }
    tx.commit();
    return changed;
  });
  for (const Stale& s : stale) causes::remove(self.causes, s.run_id);
  return recovered;
}

std::vector<RunRecord> Store::runs(const RunFilter& filter) const {
  return impl_->retrying([&](bool) {
    auto q = impl_->query(select_runs_filtered_sql(), "list runs");
    q->bind(1, filter.group_id);
    q->bind(2, filter.case_name);
    q->bind(3, filter.variant);
    if (filter.status) q->bind(4, impl_->status_name(*filter.status, "list runs"));
    else q->bind_null(4);
    q->bind(5, filter.limit.value_or(std::numeric_limits<int64_t>::max()));
    q->bind(6, filter.started_since);
    std::vector<RunRecord> out;
    while (q->step()) out.push_back(impl_->read_run(*q));
    return out;
  });
}

std::optional<RunRecord> Store::run(const std::string& run_id) const {
  return impl_->retrying([&](bool) -> std::optional<RunRecord> {
    auto q = impl_->query(select_run_by_id_sql(), fmt::format("read run {}", run_id));
    q->bind(1, run_id);
    if (!q->step()) return std::nullopt;
    return impl_->read_run(*q);
  });
}

std::set<std::string> Store::present_runs(const std::vector<std::string>& run_ids) const {
  std::set<std::string> out;
  for (size_t first = 0; first < run_ids.size(); first += kRowsPerInsert) {
    const size_t n = std::min(kRowsPerInsert, run_ids.size() - first);
    std::string sql = "SELECT run_id FROM runs WHERE run_id IN (";
    for (size_t i = 0; i < n; ++i) sql += fmt::format("{}?{}", i ? ", " : "", i + 1);
    sql += ")";
    impl_->retrying([&](bool) {
      auto q = impl_->query(sql, "look up runs");
      for (size_t i = 0; i < n; ++i) q->bind(static_cast<int>(i + 1), run_ids[first + i]);
      while (q->step()) out.insert(q->text(0));
    });
  }
  return out;
}

std::vector<StepRecord> Store::steps(const std::string& run_id) const {
  return impl_->retrying([&](bool) {
    auto q = impl_->query(
        "SELECT step, loss, step_time_s, tokens, is_warmup, is_eval, is_checkpoint, eval_loss,"
        " is_stall FROM steps WHERE run_id = ?1 ORDER BY step",
        fmt::format("read steps of run {}", run_id));
    q->bind(1, run_id);
    std::vector<StepRecord> out;
    while (q->step()) {
      StepRecord& s = out.emplace_back();
      s.step = q->int64(0);
      s.loss = q->real(1);
      s.seconds = q->real(2);
      s.tokens = q->int64(3);
      s.warmup = q->int64(4) != 0;
      s.eval = q->int64(5) != 0;
      s.checkpoint = q->int64(6) != 0;
      s.eval_loss = q->optional_real(7);
      s.stall = q->int64(8) != 0;
    }
    return out;
  });
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

namespace {

void check_calibration(const backend::Connection& db, const Calibration& c, std::string_view doing) {
  if (c.device.empty()) db.fail(doing, "device is empty");
  if (c.dtype.empty()) db.fail(doing, "dtype is empty");
  if (!std::isfinite(c.peak_tflops) || c.peak_tflops <= 0)
    db.fail(doing, fmt::format("peak_tflops {} is not a positive number", c.peak_tflops));
}

constexpr std::string_view kSelectCalibrations =
    "SELECT id, host, device, dtype, peak_tflops, measured_at, details_json FROM calibrations ";

Calibration read_calibration(const backend::Statement& q) {
  Calibration c;
  c.id = q.int64(0);
  c.host = q.text(1);
  c.device = q.text(2);
  c.dtype = q.text(3);
  c.peak_tflops = q.real(4);
  c.measured_at = q.text(5);
  c.details_json = q.text(6);
  return c;
}

}  // namespace

int64_t Store::save_calibration(const Calibration& given) {
  Impl& self = *impl_;
  const std::string doing = fmt::format("save calibration of {} {}", given.device, given.dtype);
  check_calibration(*self.db, given, doing);
  self.require_json_object(given.details_json, "details_json", doing);
  Calibration c = given;
  if (c.host.empty()) c.host = host_name();
  if (c.measured_at.empty()) c.measured_at = now_utc();
  return self.retrying([&](bool again) -> int64_t {
    const std::string same =
        std::string(kSelectCalibrations) + "WHERE host = ?1 AND device = ?2 AND dtype = ?3 AND measured_at = ?4";
    if (again) {  // the lost attempt may have committed
      auto q = self.query(same, doing);
      q->bind(1, c.host);
      q->bind(2, c.device);
      q->bind(3, c.dtype);
      q->bind(4, c.measured_at);
      if (q->step()) return q->int64(0);
    }
    Transaction tx(*self.db, doing);
    int64_t id = 0;
    {
      auto q = self.query(
          "INSERT INTO calibrations (host, device, dtype, peak_tflops, measured_at,"
          " details_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6) RETURNING id",
          doing);
      q->bind(1, c.host);
      q->bind(2, c.device);
      q->bind(3, c.dtype);
      q->bind(4, c.peak_tflops);
      q->bind(5, c.measured_at);
      q->bind(6, c.details_json);
      if (!q->step()) self.db->fail(doing, "the new calibration's id was not returned");
      id = q->int64(0);
    }
    tx.commit();
    return id;
  });
}

bool Store::import_calibration(const Calibration& c) {
  Impl& self = *impl_;
  const std::string doing = fmt::format("import calibration of {} {} {}", c.host, c.device, c.dtype);
  check_calibration(*self.db, c, doing);
  if (c.host.empty() || c.measured_at.empty()) self.db->fail(doing, "host and measured_at must be set");
  return self.retrying([&](bool) {
    Transaction tx(*self.db, doing);
    auto q = self.query(
        "INSERT INTO calibrations (host, device, dtype, measured_at, peak_tflops, details_json)"
        " SELECT ?1, ?2, ?3, ?4, ?5, ?6 WHERE NOT EXISTS (SELECT 1 FROM calibrations"
        " WHERE host = ?1 AND device = ?2 AND dtype = ?3 AND measured_at = ?4)",
        doing);
    q->bind(1, c.host);
    q->bind(2, c.device);
    q->bind(3, c.dtype);
    q->bind(4, c.measured_at);
    q->bind(5, c.peak_tflops);
    q->bind(6, c.details_json);
    q->run();
    const bool added = q->changes() > 0;
    q.reset();
    tx.commit();
    return added;
  });
}

std::optional<Calibration> Store::latest_calibration(const std::string& host,
                                                     const std::string& device,
                                                     const std::string& dtype) const {
  return impl_->retrying([&](bool) -> std::optional<Calibration> {
    auto q = impl_->query(std::string(kSelectCalibrations) +
                              "WHERE host = ?1 AND device = ?2 AND dtype = ?3"
                              " ORDER BY measured_at DESC, id DESC LIMIT 1",
                          fmt::format("read calibration of {} {} {}", host, device, dtype));
    q->bind(1, host);
    q->bind(2, device);
    q->bind(3, dtype);
    if (!q->step()) return std::nullopt;
    return read_calibration(*q);
  });
}

std::vector<Calibration> Store::calibrations() const {
  return impl_->retrying([&](bool) {
    auto q = impl_->query(std::string(kSelectCalibrations) + "ORDER BY id", "list calibrations");
    std::vector<Calibration> out;
    while (q->step()) out.push_back(read_calibration(*q));
    return out;
  });
}

std::string Store::integrity_check() const {
  if (impl_->dialect().name == "sqlite") {
    auto q = impl_->db->prepare("PRAGMA integrity_check", "integrity check");
    std::string out;
    while (q->step()) {
      if (!out.empty()) out += '\n';
      out += q->text(0);
    }
    return out;
  }
  auto q = impl_->db->prepare(
      "SELECT (SELECT count(*) FROM steps s WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = s.run_id)) +"
      " (SELECT count(*) FROM run_metrics m WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = m.run_id))",
      "integrity check");
  q->step();
  const int64_t orphans = q->int64(0);
  return orphans == 0 ? "ok" : fmt::format("{} steps and metrics belong to no run", orphans);
}

}  // namespace twinbench::store
