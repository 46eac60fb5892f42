// The store's schema versions: the ordered list of forward migrations, and
// checking and migrating a file. Script N turns a version N-1 database into
// version N (script 1 creates the schema in an empty file). Applied scripts are
// never edited; a change to the schema is a new script at the end.
// docs/schema.md documents the resulting tables.
#pragma once

#include <string_view>
#include <vector>

namespace twinbench::store {

namespace sqlite {
class Db;
}

struct Migration {
  int version;                   // the schema version the script produces
  std::string_view description;  // one line, also stored in schema_version
  std::string_view sql;          // one or more statements, run in one transaction
};

// In version order, starting at 1, without gaps.
const std::vector<Migration>& migrations();
// The version the last script produces.
int latest_schema_version();

// The version recorded in the file's schema_version table; 0 for an empty file.
int read_schema_version(const sqlite::Db& db);
// Returns the file's version if this code can use the file: an empty file or
// a twinbench store of at most latest_schema_version(). Otherwise throws
// StoreError naming the file (and both versions) without having written.
int check_schema(const sqlite::Db& db);
// Applies the scripts after `version`, each in its own BEGIN IMMEDIATE
// transaction that also inserts its schema_version row. Safe when several
// processes open the same file at once: the version is re-read under the lock.
void migrate_schema(sqlite::Db& db, int version);

}  // namespace twinbench::store
