// The PostgreSQL backend (backend.h) over libpq: a connection to one database
// named by a postgresql:// (or postgres://) URL, statements with text
// parameters of explicit types, and transactions. Every failure throws
// StoreError naming the URL (without its password), what was being done and
// the server's message on one line, with its SQLSTATE; a lost connection
// (server restarted, network gone) is StoreFault::kConnectionLost, which the
// store answers by reconnecting (reconnect()) and retrying.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/store/backend.h"

struct pg_conn;
struct pg_result;

namespace twinbench::store::pg {

// The location as messages show it: any password replaced by "***" (redact_location).
std::string redact(const std::string& url);

class Connection : public backend::Connection {
 public:
  // Connects (10 s timeout unless the URL sets connect_timeout); throws
  // StoreError with StoreFault::kUnreachable when the server cannot be
  // reached or refuses the login.
  explicit Connection(std::string url);
  ~Connection() override;

  const Dialect& dialect() const override;
  const std::string& label() const override { return label_; }

  std::unique_ptr<backend::Statement> prepare(std::string_view sql, std::string doing) override;
  void exec(std::string_view sql, std::string_view doing) override;
  void begin(std::string_view doing) override;
  void commit(std::string_view doing) override;
  void rollback() noexcept override;
  bool reconnect(std::chrono::milliseconds patience) override;
  // One COPY ... FROM STDIN in text format: a round trip per table, not per rows.
  bool copy_rows(std::string_view table, const std::vector<std::string_view>& columns,
                 const std::vector<backend::Value>& values, std::string_view doing) override;

  // Runs `sql` (in PostgreSQL's form, $N parameters) with text parameter
  // values (nullopt: NULL) of the given type OIDs (0: the server infers it);
  // the result, or StoreError.
  std::unique_ptr<pg_result, void (*)(pg_result*)> execute(const std::string& sql,
                                                            const std::vector<std::optional<std::string>>& values,
                                                            const std::vector<unsigned>& types, std::string_view doing);

 private:
  void open();  // connects and applies the session settings
  [[noreturn]] void fail_result(std::string_view doing, const pg_result* result) const;
  std::string url_, label_;
  pg_conn* conn_ = nullptr;
};

}  // namespace twinbench::store::pg
