#pragma once
// The store's schema as an ordered list of versioned SQL steps. A later change appends a step; a step
// once released is never edited. (Version 1 is not released yet, so it is still edited in place.)
#include <sqlite3.h>

namespace mlsb::reports::detail {

/// The schema version this build writes: the version of the last migration step.
int latest_schema_version();

/// The version recorded in `db` (0 for an empty database).
int current_schema_version(sqlite3* db);

/// Throws StoreError naming the file when `version` is newer than latest_schema_version().
void check_not_newer(sqlite3* db, int version);

/// Brings `db` to latest_schema_version(), applying the missing steps in order inside one
/// BEGIN IMMEDIATE transaction (so concurrent openers migrate once). Throws StoreError when the
/// database's schema is newer than this build.
void migrate(sqlite3* db);

}  // namespace mlsb::reports::detail
