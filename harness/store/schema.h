// The store's schema versions: the ordered list of forward migrations in each
// dialect, and checking and migrating a store. Script N turns a version N-1
// database into version N (script 1 creates the schema in an empty one).
// Applied scripts are never edited; a change to the schema is a new script at
// the end of every dialect's list. docs/schema.md documents the tables.
#pragma once

#include <vector>

#include "harness/store/dialect.h"

namespace twinbench::store {

namespace backend {
class Connection;
}

// SQLite's scripts, in version order from 1 without gaps (= migrations(sqlite_dialect())).
const std::vector<Migration>& migrations();
const std::vector<Migration>& sqlite_migrations();
const std::vector<Migration>& postgresql_migrations();
// The version the last script produces (the same in every dialect).
int latest_schema_version();

// The version recorded in the store's schema_version table; 0 for an empty store.
int read_schema_version(backend::Connection& db);
// Returns the store's version if this code can use it: an empty store or a
// twinbench store of at most latest_schema_version(). Otherwise throws
// StoreError naming the store (and both versions) without having written.
int check_schema(backend::Connection& db);
// Applies the scripts after `version`, each in its own write transaction that
// also inserts its schema_version row. Safe when several processes open the
// same store at once: the version is re-read under the write lock.
void migrate_schema(backend::Connection& db, int version);

}  // namespace twinbench::store
