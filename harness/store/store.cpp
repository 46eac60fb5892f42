// The Store: opening the file, writing runs, steps, metrics and
// calibrations, recovering runs whose process died, and reading it all back.
#include "harness/store/store.h"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <random>
#include <set>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/store/causes.h"
#include "harness/store/schema.h"
#include "harness/store/sqlite.h"

namespace twinbench::store {

namespace {

// How long a write waits for another writer's lock before failing with
// "database is locked": $TWINBENCH_BUSY_TIMEOUT_MS (tests, slow shared disks),
// else sqlite::kDefaultBusyTimeoutMs.
int busy_timeout_ms() {
  const char* env = std::getenv("TWINBENCH_BUSY_TIMEOUT_MS");
  if (!env || !*env) return sqlite::kDefaultBusyTimeoutMs;
  char* end = nullptr;
  const long value = std::strtol(env, &end, 10);
  return (*end == '\0' && value > 0 && value <= INT_MAX) ? static_cast<int>(value) : sqlite::kDefaultBusyTimeoutMs;
}

// The columns read_run() expects, in its order.
constexpr std::string_view kSelectRuns =
    "SELECT run_id, group_id, case_name, variant, repeat_index, status, reason,"
    " started_at, finished_at, host, pid, config_json, provenance_json,"
    " git_commit, git_branch, device_name, world_size FROM runs ";

const std::string& select_run_by_id_sql() {
  static const std::string sql = std::string(kSelectRuns) + "WHERE run_id = ?1";
  return sql;
}

const std::string& select_runs_filtered_sql() {
  static const std::string sql =
      std::string(kSelectRuns) +
      "WHERE (?1 IS NULL OR group_id = ?1) AND (?2 IS NULL OR case_name = ?2)"
      " AND (?3 IS NULL OR variant = ?3) AND (?4 IS NULL OR status = ?4)"
      " AND (?6 IS NULL OR started_at >= ?6)"
      " ORDER BY started_at DESC, rowid DESC LIMIT ?5";
  return sql;
}

constexpr std::string_view kInsertRun =
    "INSERT INTO runs (run_id, group_id, case_name, variant, repeat_index, status,"
    " reason, started_at, finished_at, host, pid, config_json, provenance_json,"
    " git_commit, git_branch, device_name, world_size)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)";

constexpr std::string_view kInsertStep =
    "INSERT INTO steps (run_id, step, loss, step_time_s, tokens, is_warmup, is_eval,"
    " is_checkpoint, eval_loss, is_stall) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)";

constexpr std::string_view kFinishRun =
    "UPDATE runs SET status = ?2, reason = ?3, finished_at = ?4 WHERE run_id = ?1";

constexpr std::string_view kUpsertMetric =
    "INSERT INTO run_metrics (run_id, name, value) VALUES (?1, ?2, ?3)"
    " ON CONFLICT (run_id, name) DO UPDATE SET value = excluded.value";

bool process_is_gone(int64_t pid) {
  if (pid <= 0 || pid > INT_MAX) return false;  // cannot tell: leave it alone
  return kill(static_cast<pid_t>(pid), 0) == -1 && errno == ESRCH;
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
  sqlite::Db db;
  // Prepared once per connection, keyed by their SQL.
  std::map<std::string, sqlite::Statement, std::less<>> statements;

  explicit Impl(std::string path);

  // The cached statement for `sql`, labelled `doing` for its errors.
  sqlite::Query query(std::string_view sql, std::string_view doing);
  std::string_view status_name(RunStatus status, std::string_view doing) const;
  // Throws unless the run exists and is running (finished runs never change).
  void require_running(const std::string& run_id, std::string_view doing);
  void require_json_object(const std::string& text, std::string_view field,
                           std::string_view doing) const;
  std::string insert_run(const RunRecord& run, RunStatus status, const std::string& reason,
                         const std::optional<std::string>& finished_at,
                         std::string_view doing);
  // The writes inside a caller's transaction: a checked run row (returns its
  // id), steps, metric upserts.
  std::string insert_run_row(const RunRecord& run, RunStatus status, const std::string& reason,
                             const std::optional<std::string>& finished_at, std::string_view doing);
  void insert_steps(const std::string& run_id, const std::vector<StepRecord>& steps,
                    std::string_view doing);
  void upsert_metrics(const std::string& run_id, const MetricList& metrics, std::string_view doing);
  RunRecord read_run(const sqlite::Statement& row) const;
};

Store::Impl::Impl(std::string path) : db(std::move(path), busy_timeout_ms()) {
  const int version = check_schema(db);  // before anything that could write
  db.enable_wal();
  // NORMAL is durable across process crashes in WAL mode and skips an fsync
  // per commit; foreign keys make steps and metrics need an existing run.
  db.exec("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON",
          "open (configure connection)");
  migrate_schema(db, version);
}

sqlite::Query Store::Impl::query(std::string_view sql, std::string_view doing) {
  auto it = statements.find(sql);
  if (it == statements.end())
    it = statements.try_emplace(std::string(sql), db, sql, std::string(doing)).first;
  else
    it->second.set_doing(doing);
  return sqlite::Query(&it->second);
}

std::string_view Store::Impl::status_name(RunStatus status, std::string_view doing) const {
  const std::string_view name = to_string(status);
  if (name == "unknown") db.fail(doing, fmt::format("unknown run status {}", static_cast<int>(status)));
  return name;
}

void Store::Impl::require_running(const std::string& run_id, std::string_view doing) {
  auto q = query("SELECT status FROM runs WHERE run_id = ?1", doing);
  q->bind(1, run_id);
  if (!q->step()) db.fail(doing, fmt::format("no such run {}", run_id));
  const std::string status = q->text(0);
  if (status != "running")
    db.fail(doing, fmt::format("run {} is {}; only a running run can take steps or be "
                               "finished",
                               run_id, status));
}

void Store::Impl::require_json_object(const std::string& text, std::string_view field,
                                      std::string_view doing) const {
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object())
    db.fail(doing, fmt::format("{} is not a JSON object", field));
}

std::string Store::Impl::insert_run(const RunRecord& run, RunStatus status,
                                    const std::string& reason,
                                    const std::optional<std::string>& finished_at,
                                    std::string_view doing) {
  const std::string what = run.run_id.empty() ? std::string(doing) : fmt::format("{} {}", doing, run.run_id);
  sqlite::Transaction tx(db, what);
  const std::string run_id = insert_run_row(run, status, reason, finished_at, doing);
  tx.commit();
  return run_id;
}

std::string Store::Impl::insert_run_row(const RunRecord& run, RunStatus status,
                                        const std::string& reason,
                                        const std::optional<std::string>& finished_at,
                                        std::string_view doing) {
  if (run.case_name.empty()) db.fail(doing, "case_name is empty");
  if (run.variant.empty()) db.fail(doing, "variant is empty");
  if (run.repeat_index < 0) db.fail(doing, "repeat_index is negative");
  if (run.world_size < 1) db.fail(doing, "world_size is less than 1");
  require_json_object(run.config_json, "config_json", doing);
  require_json_object(run.provenance_json, "provenance_json", doing);
  const std::string_view status_text = status_name(status, doing);

  const std::string run_id = run.run_id.empty() ? new_uuid() : run.run_id;
  const std::string what = fmt::format("{} {}", doing, run_id);
  {
    auto q = query(kInsertRun, what);
    q->bind(1, run_id);
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
    q->run();
  }
  return run_id;
}

void Store::Impl::insert_steps(const std::string& run_id, const std::vector<StepRecord>& steps,
                               std::string_view doing) {
  auto q = query(kInsertStep, doing);
  for (const StepRecord& s : steps) {
    q->bind(1, run_id);
    q->bind(2, s.step);
    q->bind(3, s.loss);
    q->bind(4, s.seconds);  // NaN (unknown time) is stored as NULL
    q->bind(5, s.tokens);
    q->bind(6, s.warmup ? 1 : 0);
    q->bind(7, s.eval ? 1 : 0);
    q->bind(8, s.checkpoint ? 1 : 0);
    q->bind(9, s.eval_loss);
    q->bind(10, s.stall ? 1 : 0);
    try {
      q->run();
    } catch (const StoreError& e) {
      throw StoreError(fmt::format("{} (step {} of run {}; none of the batch was stored)",
                                   e.what(), s.step, run_id),
                       e.sqlite_code());
    }
    q->reset();
  }
}

void Store::Impl::upsert_metrics(const std::string& run_id, const MetricList& metrics,
                                 std::string_view doing) {
  for (const auto& metric : metrics)
    if (metric.first.empty()) db.fail(doing, "a metric has an empty name");
  auto q = query(kUpsertMetric, doing);
  for (const auto& [metric, value] : metrics) {
    q->bind(1, run_id);
    q->bind(2, metric);
    q->bind(3, value);
    q->run();
    q->reset();
  }
}

RunRecord Store::Impl::read_run(const sqlite::Statement& row) const {
  RunRecord run;
  run.run_id = row.text(0);
  run.group_id = row.text(1);
  run.case_name = row.text(2);
  run.variant = row.text(3);
  run.repeat_index = static_cast<int>(row.int64(4));
  try {
    run.status = status_from_string(row.text(5));
  } catch (const std::invalid_argument& e) {
    db.fail(fmt::format("read run {}", run.run_id), e.what());
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
  return run;
}

// ---- Store ------------------------------------------------------------------------

Store::Store(std::string path) : impl_(std::make_unique<Impl>(std::move(path))) {}
Store::~Store() = default;
Store::Store(Store&&) noexcept = default;
Store& Store::operator=(Store&&) noexcept = default;

const std::string& Store::path() const { return impl_->db.path(); }

int Store::code_schema_version() { return latest_schema_version(); }

int Store::file_schema_version() const { return read_schema_version(impl_->db); }

std::string Store::begin_run(const RunRecord& run) {
  const std::string run_id = impl_->insert_run(run, RunStatus::running, "", std::nullopt, "begin run");
  causes::reserve(path(), run_id);  // space for a cause, while the disk has room
  return run_id;
}

std::string Store::record_skipped(const RunRecord& run, const std::string& reason) {
  const std::string now = now_utc();
  RunRecord skipped = run;
  if (skipped.started_at.empty()) skipped.started_at = now;
  return impl_->insert_run(skipped, RunStatus::skipped, reason, now, "record skipped run");
}

void Store::append_steps(const std::string& run_id, const std::vector<StepRecord>& steps) {
  if (steps.empty()) return;
  Impl& self = *impl_;
  const std::string doing = fmt::format("append {} steps", steps.size());
  sqlite::Transaction tx(self.db, doing);
  self.require_running(run_id, doing);
  self.insert_steps(run_id, steps, doing);
  tx.commit();
}

void Store::finish_run(const std::string& run_id, RunStatus status, const std::string& reason,
                       const MetricList& metrics) {
  Impl& self = *impl_;
  const std::string doing = fmt::format("finish run {}", run_id);
  const std::string_view name = self.status_name(status, doing);
  if (status == RunStatus::running) self.db.fail(doing, "a run cannot be finished as running");
  for (const auto& metric : metrics)
    if (metric.first.empty()) self.db.fail(doing, "a metric has an empty name");

  sqlite::Transaction tx(self.db, doing);
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
  causes::remove(self.db.path(), run_id);
}

bool Store::finish_run_or_keep_cause(const std::string& run_id, RunStatus status,
                                     const std::string& reason) noexcept {
  try {
    finish_run(run_id, status, reason);
    return true;
  } catch (...) {  // the store error itself, or memory: keep the cause for later
  }
  causes::write(path(), run_id, status, reason);
  return false;
}

ImportOutcome Store::import_run(const RunRecord& run, const std::vector<StepRecord>& steps,
                                const MetricList& metrics, bool replace) {
  Impl& self = *impl_;
  const std::string doing = fmt::format("import run {}", run.run_id);
  if (run.run_id.empty()) self.db.fail(doing, "an imported run needs a run_id");
  if (run.status == RunStatus::running) self.db.fail(doing, "an imported run must be finished, not running");
  sqlite::Transaction tx(self.db, doing);
  bool present = false;
  {
    auto q = self.query("SELECT 1 FROM runs WHERE run_id = ?1", doing);
    q->bind(1, run.run_id);
    present = q->step();
  }
  if (present && !replace) return ImportOutcome::kPresent;  // rolls back an empty transaction
  if (present) {
    // Foreign keys cascade: the old steps and metrics go with the row.
    auto q = self.query("DELETE FROM runs WHERE run_id = ?1", doing);
    q->bind(1, run.run_id);
    q->run();
  }
  RunRecord row = run;
  const std::string now = now_utc();
  if (row.started_at.empty()) row.started_at = now;  // never after finished_at
  self.insert_run_row(row, row.status, row.reason, row.finished_at ? *row.finished_at : now, doing);
  self.insert_steps(run.run_id, steps, doing);
  self.upsert_metrics(run.run_id, metrics, doing);
  tx.commit();
  return present ? ImportOutcome::kReplaced : ImportOutcome::kAdded;
}

int Store::recover_stale_runs() {
  Impl& self = *impl_;
  const std::string host = host_name();
  sqlite::Transaction tx(self.db, "recover stale runs");
  std::vector<std::pair<std::string, int64_t>> stale;
  {
    auto q = self.query("SELECT run_id, pid FROM runs WHERE status = 'running' AND host = ?1",
                        "recover stale runs");
    q->bind(1, host);
    while (q->step())
      if (process_is_gone(q->int64(1))) stale.emplace_back(q->text(0), q->int64(1));
  }
  const std::string now = now_utc();
  auto q = self.query(
      "UPDATE runs SET status = ?4, reason = ?2, finished_at = ?3"
      " WHERE run_id = ?1 AND status = 'running'",
      "recover stale runs");
  for (const auto& [run_id, pid] : stale) {
    // A process that could not store its run's end left it in the cause file.
    const auto cause = causes::read(self.db.path(), run_id);
    q->bind(1, run_id);
    q->bind(2, cause ? cause->reason
                     : fmt::format("process {} on {} exited without finishing the run", pid, host));
    q->bind(3, now);
    q->bind(4, to_string(cause ? cause->status : RunStatus::interrupted));
    q->run();
    q->reset();
  }
  tx.commit();
  for (const auto& stale_run : stale) causes::remove(self.db.path(), stale_run.first);
  return static_cast<int>(stale.size());
}

std::vector<RunRecord> Store::runs(const RunFilter& filter) const {
  auto q = impl_->query(select_runs_filtered_sql(), "list runs");
  q->bind(1, filter.group_id);
  q->bind(2, filter.case_name);
  q->bind(3, filter.variant);
  if (filter.status) q->bind(4, impl_->status_name(*filter.status, "list runs"));
  q->bind(5, filter.limit.value_or(-1));  // LIMIT -1: no limit
  q->bind(6, filter.started_since);
  std::vector<RunRecord> out;
  while (q->step()) out.push_back(impl_->read_run(*q));
  return out;
}

std::optional<RunRecord> Store::run(const std::string& run_id) const {
  auto q = impl_->query(select_run_by_id_sql(), fmt::format("read run {}", run_id));
  q->bind(1, run_id);
  if (!q->step()) return std::nullopt;
  return impl_->read_run(*q);
}

std::vector<StepRecord> Store::steps(const std::string& run_id) const {
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
}

MetricMap Store::metrics(const std::string& run_id) const {
  auto q = impl_->query("SELECT name, value FROM run_metrics WHERE run_id = ?1",
                        fmt::format("read metrics of run {}", run_id));
  q->bind(1, run_id);
  MetricMap out;
  while (q->step()) out.emplace(q->text(0), q->optional_real(1));
  return out;
}

int64_t Store::save_calibration(const Calibration& c) {
  Impl& self = *impl_;
  const std::string doing = fmt::format("save calibration of {} {}", c.device, c.dtype);
  if (c.device.empty()) self.db.fail(doing, "device is empty");
  if (c.dtype.empty()) self.db.fail(doing, "dtype is empty");
  if (!std::isfinite(c.peak_tflops) || c.peak_tflops <= 0)
    self.db.fail(doing, fmt::format("peak_tflops {} is not a positive number", c.peak_tflops));
  self.require_json_object(c.details_json, "details_json", doing);

  sqlite::Transaction tx(self.db, doing);
  {
    auto q = self.query(
        "INSERT INTO calibrations (host, device, dtype, peak_tflops, measured_at,"
        " details_json) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        doing);
    q->bind(1, c.host.empty() ? host_name() : c.host);
    q->bind(2, c.device);
    q->bind(3, c.dtype);
    q->bind(4, c.peak_tflops);
    q->bind(5, c.measured_at.empty() ? now_utc() : c.measured_at);
    q->bind(6, c.details_json);
    q->run();
  }
  const int64_t id = self.db.last_insert_rowid();
  tx.commit();
  return id;
}

std::optional<Calibration> Store::latest_calibration(const std::string& host,
                                                     const std::string& device,
                                                     const std::string& dtype) const {
  auto q = impl_->query(
      "SELECT id, host, device, dtype, peak_tflops, measured_at, details_json"
      " FROM calibrations WHERE host = ?1 AND device = ?2 AND dtype = ?3"
      " ORDER BY measured_at DESC, id DESC LIMIT 1",
      fmt::format("read calibration of {} {} {}", host, device, dtype));
  q->bind(1, host);
  q->bind(2, device);
  q->bind(3, dtype);
  if (!q->step()) return std::nullopt;
  Calibration c;
  c.id = q->int64(0);
  c.host = q->text(1);
  c.device = q->text(2);
  c.dtype = q->text(3);
  c.peak_tflops = q->real(4);
  c.measured_at = q->text(5);
  c.details_json = q->text(6);
  return c;
}

std::string Store::integrity_check() const {
  sqlite::Statement q(impl_->db, "PRAGMA integrity_check", "integrity check");
  std::string out;
  while (q.step()) {
    if (!out.empty()) out += '\n';
    out += q.text(0);
  }
  return out;
}

}  // namespace twinbench::store
