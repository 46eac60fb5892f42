// The Store: opening a store and what every operation on it needs (the
// connection, its cached statements, retrying across a lost connection),
// calibrations, and the integrity check. Writing runs is writes.cpp, reading
// them reads.cpp; all of it written once against backend::Connection
// (backend.h) for every backend.
#include "harness/store/store.h"

#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <random>
#include <tuple>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/base/env_number.h"
#include "harness/store/causes.h"
#include "harness/store/schema.h"
#include "harness/store/spill.h"
#include "harness/store/store_impl.h"

namespace twinbench::store {

std::chrono::milliseconds reconnect_patience() {
  const double s = env_number("TWINBENCH_RECONNECT_S", 30, 0, 86400, "seconds");
  return std::chrono::milliseconds(static_cast<int64_t>(s * 1000));
}

std::string source_of(const std::string& provenance_json) {
  const auto j = nlohmann::json::parse(provenance_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return "";
  const auto it = j.find("source");
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

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

Store::Impl::Impl(std::string where, Open open)
    : location(std::move(where)), db(backend::connect(location, open == Open::kReadOnly)),
      causes(causes::folder_for(location)), patience(reconnect_patience()) {
  const int version = check_schema(*db);  // before anything that could write
  if (version == 0 && open != Open::kCreate)
    throw std::invalid_argument(fmt::format("{}: no such store: {} (nothing was created; check --db or $TWINBENCH_DB)",
                                            db->label(),
                                            dialect().name == "sqlite" ? "the file is empty"
                                                                       : "the database holds no twinbench schema"));
  if (open == Open::kReadOnly) {  // the connection as it is: nothing settled for writing, nothing migrated
    if (version != latest_schema_version())
      db->fail("open read-only", fmt::format("the store has schema version {}; read-only, it is read at version {} "
                                             "alone (open it once to migrate it)",
                                             version, latest_schema_version()));
    return;
  }
  db->configure();
  migrate_schema(*db, version);
}

Store::Impl::~Impl() {
  leases.reset();  // its thread tells of the server through this Impl: stopped first
}

backend::Query Store::Impl::query(std::string_view sql, std::string_view doing) {
  auto it = statements.find(sql);
  if (it == statements.end())
    it = statements.try_emplace(std::string(sql), db->prepare(sql, std::string(doing))).first;
  else
    it->second->set_doing(doing);
  return backend::Query(it->second.get());
}

LeaseKeeper& Store::Impl::keeper() {
  if (!leases) leases = std::make_unique<LeaseKeeper>(location, lease_seconds(), [this](const std::string& text) {
    tell(text);
  });
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

// ---- Store ------------------------------------------------------------------------

Store::Store(std::string location, Open open) {
  if (open != Open::kCreate) {
    check_location(location);
    if (!is_server_location(location) && !std::filesystem::exists(location))
      throw std::invalid_argument(fmt::format("{}: no such store (nothing was created; check --db or $TWINBENCH_DB)",
                                              location));
  }
  impl_ = std::make_unique<Impl>(std::move(location), open);
}
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

void Store::set_notice_handler(std::function<void(const std::string&)> handler) {
  impl_->notice = std::move(handler);
}

std::optional<std::string> Store::spill_path() const {
  if (!impl_->spill) return std::nullopt;
  return impl_->spill->path();
}

std::vector<std::string> Store::runs_kept_in_spill() const { return {impl_->kept.begin(), impl_->kept.end()}; }

std::string Store::spill_push_command() const {
  return impl_->spill ? impl_->spill->push_command() : "";
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
    backend::Transaction tx(*self.db, doing);
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
    backend::Transaction tx(*self.db, doing);
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
  Impl& self = *impl_;
  std::optional<Calibration> out;
  const auto read = [&] {
    out = self.retrying([&](bool) -> std::optional<Calibration> {
      auto q = self.query(std::string(kSelectCalibrations) +
                              "WHERE host = ?1 AND device = ?2 AND dtype = ?3"
                              " ORDER BY measured_at DESC, id DESC LIMIT 1",
                          fmt::format("read calibration of {} {} {}", host, device, dtype));
      q->bind(1, host);
      q->bind(2, device);
      q->bind(3, dtype);
      if (!q->step()) return std::nullopt;
      return read_calibration(*q);
    });
  };
  if (self.live.empty()) {
    read();
    return out;
  }
  if (self.server_write(read, /*wait=*/false)) return out;
  // The server is away at the end of a run: the calibrations of this host as
  // the run's start read them (a run's MFU needs no server).
  for (const Calibration& c : self.calibrations_at_start)
    if (c.host == host && c.device == device && c.dtype == dtype &&
        (!out || std::tie(c.measured_at, c.id) > std::tie(out->measured_at, out->id)))
      out = c;
  return out;
}

void Store::Impl::remember_calibrations() {
  const auto read = [&] {
    auto rows = retrying([&](bool) {
      auto q = query(std::string(kSelectCalibrations) + "WHERE host = ?1", "read this host's calibrations");
      q->bind(1, host_name());
      std::vector<Calibration> found;
      while (q->step()) found.push_back(read_calibration(*q));
      return found;
    });
    calibrations_at_start = std::move(rows);
  };
  server_write(read, /*wait=*/false);  // when the server is away, what an earlier run read stays
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