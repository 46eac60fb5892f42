// The PostgreSQL backend declared in postgres.h.
#include "harness/store/postgres.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <thread>
#include <variant>

#include <fmt/format.h>

#include "harness/store/dialect.h"

namespace twinbench::store::pg {

namespace {

constexpr unsigned kInt8Oid = 20, kTextOid = 25, kFloat8Oid = 701;

void clear_result(pg_result* r) { PQclear(r); }
using Result = std::unique_ptr<pg_result, void (*)(pg_result*)>;

// libpq's messages span lines ("...failed: Connection refused\n\tIs the server
// running on that host...?\n"): one line, blanks squeezed. A line that starts a
// new sentence is joined with "; ", a continuation with a space.
std::string one_line(std::string_view text) {
  std::string out;
  bool blank = false, newline = false;
  for (const char c : text) {
    if (c == '\n' || c == '\r') {
      newline = !out.empty();
      continue;
    }
    if (c == ' ' || c == '\t') {
      blank = !out.empty();
      continue;
    }
    if (newline) {
      const bool sentence = std::isupper(static_cast<unsigned char>(c)) && out.back() != ';';
      out += sentence && std::string_view(".:;?!").find(out.back()) == std::string_view::npos ? "; " : " ";
    } else if (blank) {
      out += ' ';
    }
    newline = blank = false;
    out += c;
  }
  return out;
}

// Text PostgreSQL can store: valid UTF-8 (invalid bytes become U+FFFD, as the
// reports' JSON writes them) without NUL bytes (refused: it would cut the text).
std::optional<std::string> storable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0) return std::nullopt;
    size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool valid = n > 0 && i + n <= text.size();
    for (size_t k = 1; valid && k < n; ++k) valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    if (valid && n > 1) {  // no overlong forms, surrogates or code points beyond U+10FFFF
      const auto c1 = static_cast<unsigned char>(text[i + 1]);
      valid = !(n == 2 && c < 0xc2) && !(n == 3 && c == 0xe0 && c1 < 0xa0) && !(n == 3 && c == 0xed && c1 >= 0xa0) &&
              !(n == 4 && c == 0xf0 && c1 < 0x90) && !(n == 4 && (c > 0xf4 || (c == 0xf4 && c1 >= 0x90)));
    }
    if (!valid) {
      out += "\xef\xbf\xbd";
      ++i;
      continue;
    }
    out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

// The highest $N in `sql`.
int parameter_count(const std::string& sql) {
  int count = 0;
  for (size_t i = 0; i < sql.size(); ++i) {
    if (sql[i] != '$') continue;
    int n = 0;
    size_t j = i + 1;
    while (j < sql.size() && sql[j] >= '0' && sql[j] <= '9') n = n * 10 + (sql[j++] - '0');
    count = std::max(count, n);
  }
  return count;
}

void ignore_notice(void*, const char*) {}

class Statement : public backend::Statement {
 public:
  Statement(Connection& db, std::string sql, std::string doing)
      : db_(&db), sql_(std::move(sql)), doing_(std::move(doing)), result_(nullptr, clear_result) {
    const int n = parameter_count(sql_);
    values_.resize(n);
    types_.resize(n, 0);
  }

  using backend::Statement::bind;
  void bind(int index, int64_t value) override { set(index, std::to_string(value), kInt8Oid); }
  void bind(int index, double value) override {
    if (std::isnan(value)) return bind_null(index);  // SQLite's rule, kept
    set(index, fmt::format("{}", value), kFloat8Oid);  // shortest form that reads back exactly
  }
  void bind(int index, std::string_view value) override {
    auto text = storable(value);
    if (!text)
      db_->fail(doing_, fmt::format("parameter {} holds a NUL byte, which PostgreSQL cannot store", index));
    set(index, std::move(*text), kTextOid);
  }
  void bind_null(int index) override {
    check(index);
    values_[index - 1].reset();
    types_[index - 1] = 0;
  }

  void set_doing(std::string_view doing) override { doing_.assign(doing); }

  bool step() override {
    if (!result_) execute();
    return ++row_ < rows_;
  }
  void run() override { execute(); }
  int64_t changes() const override { return changes_; }
  void reset() noexcept override {
    result_.reset();
    row_ = -1;
    rows_ = 0;
    for (auto& v : values_) v.reset();
    std::fill(types_.begin(), types_.end(), 0u);
  }

  bool is_null(int column) const override { return PQgetisnull(result_.get(), row_, column) != 0; }
  int64_t int64(int column) const override {
    return is_null(column) ? 0 : std::strtoll(PQgetvalue(result_.get(), row_, column), nullptr, 10);
  }
  double real(int column) const override {
    if (is_null(column)) return std::nan("");
    return std::strtod(PQgetvalue(result_.get(), row_, column), nullptr);  // also "Infinity"
  }
  std::string text(int column) const override {
    if (is_null(column)) return {};
    return std::string(PQgetvalue(result_.get(), row_, column),
                       static_cast<size_t>(PQgetlength(result_.get(), row_, column)));
  }

 private:
  void check(int index) const {
    if (index < 1 || index > static_cast<int>(values_.size()))
      db_->fail(fmt::format("{} (binding parameter {})", doing_, index), "no such parameter");
  }
  void set(int index, std::string value, unsigned type) {
    check(index);
    values_[index - 1] = std::move(value);
    types_[index - 1] = type;
  }
  void execute() {
    result_ = db_->execute(sql_, values_, types_, doing_);
    rows_ = PQntuples(result_.get());
    row_ = -1;
    const char* changed = PQcmdTuples(result_.get());
    changes_ = changed && *changed ? std::strtoll(changed, nullptr, 10) : 0;
  }

  Connection* db_;
  std::string sql_, doing_;
  std::vector<std::optional<std::string>> values_;
  std::vector<unsigned> types_;
  Result result_;
  int row_ = -1, rows_ = 0;
  int64_t changes_ = 0;
};

}  // namespace

std::string redact(const std::string& url) { return redact_location(url); }

Connection::Connection(std::string url) : url_(std::move(url)), label_(redact(url_)) { open(); }

Connection::~Connection() {
  if (conn_) PQfinish(conn_);
}

void Connection::open() {
  // Defaults first: the URL's own settings, expanded from dbname, override them.
  const char* keywords[] = {"connect_timeout", "fallback_application_name", "dbname", nullptr};
  const char* values[] = {"10", "twinbench", url_.c_str(), nullptr};
  if (conn_) PQfinish(conn_);
  conn_ = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  if (!conn_) fail("open", "cannot connect: out of memory", StoreFault::kUnreachable);
  if (PQstatus(conn_) != CONNECTION_OK)
    fail("open", fmt::format("cannot connect: {}", one_line(PQerrorMessage(conn_))), StoreFault::kUnreachable);
  PQsetNoticeProcessor(conn_, ignore_notice, nullptr);
  // Doubles as text that reads back exactly (any value > 0 from PostgreSQL 12
  // on; 17 digits before); messages in English-independent SQLSTATEs.
  Result r(PQexec(conn_, "SET extra_float_digits = 3; SET client_min_messages = warning; SET TIME ZONE 'UTC'"),
           clear_result);
  if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) fail_result("open (configure session)", r.get());
}

const Dialect& Connection::dialect() const { return postgresql_dialect(); }

std::unique_ptr<backend::Statement> Connection::prepare(std::string_view sql, std::string doing) {
  return std::make_unique<Statement>(*this, dialect().translate(sql), std::move(doing));
}

void Connection::fail_result(std::string_view doing, const pg_result* result) const {
  StoreFault fault = StoreFault::kOther;
  std::string message;
  const char* sqlstate = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  if (result && PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY)) {
    message = one_line(PQresultErrorField(result, PG_DIAG_MESSAGE_PRIMARY));
    if (const char* detail = PQresultErrorField(result, PG_DIAG_MESSAGE_DETAIL))
      message += fmt::format(" ({})", one_line(detail));
  } else {
    message = one_line(PQerrorMessage(conn_));
  }
  const std::string state = sqlstate ? sqlstate : "";
  if (!state.empty()) message += fmt::format(" (SQLSTATE {})", state);
  if (PQstatus(conn_) == CONNECTION_BAD || state.rfind("08", 0) == 0 || state.rfind("57P", 0) == 0)
    fault = StoreFault::kConnectionLost;
  else if (state == "42501" || state == "25006")  // insufficient privilege, read-only transaction
    fault = StoreFault::kPermission;
  else if (state == "40P01")  // deadlock detected: this transaction was the one rolled back
    fault = StoreFault::kConflict;
  if (message.empty()) message = "the server sent no result";
  backend::Connection::fail(doing, message, fault);
}

Result Connection::execute(const std::string& sql, const std::vector<std::optional<std::string>>& values,
                           const std::vector<unsigned>& types, std::string_view doing) {
  backend::log_statement("postgresql", doing);
  std::vector<const char*> pointers(values.size());
  for (size_t i = 0; i < values.size(); ++i) pointers[i] = values[i] ? values[i]->c_str() : nullptr;
  if (backend::explain_wanted(sql)) {
    // The test hook of backend::log_plan: the plan the planner chooses for these values (its
    // defaults), run once (ANALYZE) so that each node says how many rows it read.
    Result plan(PQexecParams(conn_, ("EXPLAIN (ANALYZE, TIMING OFF, SUMMARY OFF) " + sql).c_str(),
                             static_cast<int>(values.size()), types.data(), pointers.data(), nullptr, nullptr, 0),
                clear_result);
    std::string text;
    for (int row = 0; PQresultStatus(plan.get()) == PGRES_TUPLES_OK && row < PQntuples(plan.get()); ++row)
      text += std::string(PQgetvalue(plan.get(), row, 0)) + "\n";
    backend::log_plan("postgresql", doing, text);
  }
  Result r(PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), types.data(), pointers.data(), nullptr,
                        nullptr, /*text results*/ 0),
           clear_result);
  const auto status = PQresultStatus(r.get());
  if (!r || (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)) fail_result(doing, r.get());
  return r;
}

namespace {

// `text` as a field of COPY's text format: backslash, tab, newline and carriage
// return escaped; made storable first (valid UTF-8, no NUL byte).
void append_copy_text(std::string& out, std::string_view text) {
  for (const char c : text) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
}

}  // namespace

bool Connection::copy_rows(std::string_view table, const std::vector<std::string_view>& columns,
                           const std::vector<backend::Value>& values, std::string_view doing) {
  if (values.empty()) return true;
  std::string data;
  data.reserve(values.size() * 12);
  for (size_t i = 0; i < values.size(); ++i) {
    const backend::Value& v = values[i];
    if (const auto* n = std::get_if<int64_t>(&v)) {
      data += std::to_string(*n);
    } else if (const auto* x = std::get_if<double>(&v)) {
      if (std::isnan(*x)) data += "\\N";  // SQLite's rule, kept
      else if (std::isinf(*x)) data += *x > 0 ? "Infinity" : "-Infinity";
      else data += fmt::format("{}", *x);  // shortest form that reads back exactly
    } else if (const auto* t = std::get_if<std::string_view>(&v)) {
      const auto text = storable(*t);
      if (!text) fail(doing, fmt::format("a value for {} holds a NUL byte, which PostgreSQL cannot store", table));
      append_copy_text(data, *text);
    } else {
      data += "\\N";
    }
    data += (i + 1) % columns.size() == 0 ? '\n' : '\t';
  }
  std::string sql = fmt::format("COPY {} (", table);
  for (size_t c = 0; c < columns.size(); ++c) sql += fmt::format("{}{}", c ? ", " : "", columns[c]);
  sql += ") FROM STDIN";
  const std::string what = fmt::format("{} (copy into {})", doing, table);
  backend::log_statement("postgresql", what);
  Result start(PQexec(conn_, sql.c_str()), clear_result);
  if (PQresultStatus(start.get()) != PGRES_COPY_IN) fail_result(what, start.get());
  if (PQputCopyData(conn_, data.data(), static_cast<int>(data.size())) != 1 || PQputCopyEnd(conn_, nullptr) != 1)
    fail_result(what, nullptr);
  // The COPY's own result, then the end of results.
  std::optional<Result> failed;
  while (pg_result* r = PQgetResult(conn_)) {
    Result result(r, clear_result);
    if (PQresultStatus(r) != PGRES_COMMAND_OK && !failed) failed.emplace(std::move(result));
  }
  if (failed) fail_result(what, failed->get());
  return true;
}

void Connection::exec(std::string_view sql, std::string_view doing) {
  const std::string text(sql);
  backend::log_statement("postgresql", doing);
  Result r(PQexec(conn_, text.c_str()), clear_result);
  const auto status = PQresultStatus(r.get());
  if (!r || (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK)) fail_result(doing, r.get());
}

void Connection::begin(std::string_view doing) { exec("BEGIN", fmt::format("{} (begin transaction)", doing)); }

void Connection::commit(std::string_view doing) {
  const std::string what = fmt::format("{} (commit)", doing);
  backend::log_statement("postgresql", what);
  Result r(PQexec(conn_, "COMMIT"), clear_result);
  if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) fail_result(what, r.get());
  // COMMIT of a transaction that failed earlier answers ROLLBACK, not an error.
  if (std::string_view(PQcmdStatus(r.get())) == "ROLLBACK") fail(what, "the transaction was rolled back");
}

void Connection::rollback() noexcept {
  const auto state = PQtransactionStatus(conn_);
  if (state == PQTRANS_INTRANS || state == PQTRANS_INERROR) PQclear(PQexec(conn_, "ROLLBACK"));
}

bool Connection::reconnect(std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    PQreset(conn_);
    if (PQstatus(conn_) == CONNECTION_OK) {
      try {
        PQsetNoticeProcessor(conn_, ignore_notice, nullptr);
        Result r(PQexec(conn_, "SET extra_float_digits = 3; SET client_min_messages = warning; SET TIME ZONE 'UTC'"),
                 clear_result);
        if (PQresultStatus(r.get()) == PGRES_COMMAND_OK) return true;
      } catch (...) {
      }
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

}  // namespace twinbench::store::pg
