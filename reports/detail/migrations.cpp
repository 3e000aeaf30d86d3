#include "reports/detail/migrations.hpp"

#include <array>
#include <string>

#include "reports/detail/sqlite.hpp"
#include "reports/store.hpp"

namespace mlsb::reports::detail {
namespace {

struct Migration {
  int version;
  const char* sql;
};

// Times are unix seconds (REAL); JSON columns hold UTF-8 JSON text. Run and case ids are AUTOINCREMENT so
// that an id is never reused after `db rm`: a reference such as "compare 2 latest" cannot silently name a
// different run later.
constexpr std::array kMigrations = {
    Migration{1, R"sql(
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  uuid TEXT NOT NULL UNIQUE,
  suite TEXT NOT NULL DEFAULT '',
  started_at REAL NOT NULL DEFAULT 0,
  finished_at REAL NOT NULL DEFAULT 0,
  status TEXT NOT NULL CHECK (status IN ('running', 'ok', 'failed', 'interrupted')),
  argv TEXT NOT NULL DEFAULT '',
  seed INTEGER NOT NULL DEFAULT 0,
  tags TEXT NOT NULL DEFAULT '[]',
  git_sha TEXT NOT NULL DEFAULT '',
  git_dirty INTEGER NOT NULL DEFAULT 0,
  env_json TEXT NOT NULL DEFAULT '{}'
);
CREATE TABLE cases (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  workload TEXT NOT NULL,
  params_json TEXT NOT NULL DEFAULT '{}',
  params_key TEXT NOT NULL DEFAULT '',
  label TEXT NOT NULL DEFAULT '',
  backend TEXT NOT NULL DEFAULT '',
  comm TEXT NOT NULL DEFAULT '',
  ranks INTEGER NOT NULL DEFAULT 1,
  status TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  primary_metric TEXT NOT NULL DEFAULT '',
  started_at REAL NOT NULL DEFAULT 0,
  finished_at REAL NOT NULL DEFAULT 0
);
CREATE INDEX cases_by_run ON cases(run_id, workload, params_key);
CREATE TABLE samples (
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  metric TEXT NOT NULL,
  value REAL NOT NULL,
  PRIMARY KEY (case_id, metric, idx)
) WITHOUT ROWID;
CREATE TABLE summaries (
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  metric TEXT NOT NULL,
  unit TEXT NOT NULL DEFAULT '',
  better TEXT NOT NULL CHECK (better IN ('lower', 'higher')),
  n INTEGER NOT NULL,
  min REAL, median REAL, mean REAL, stddev REAL, rel_stddev REAL,
  p05 REAL, p95 REAL, max REAL, ci_lo REAL, ci_hi REAL,
  PRIMARY KEY (case_id, metric)
);
CREATE TABLE items (
  id INTEGER PRIMARY KEY,
  case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
  key TEXT NOT NULL,
  json TEXT NOT NULL
);
CREATE INDEX items_by_case ON items(case_id, key);
)sql"},
    // Nightly CI: runs carry the machine key, branch and CI metadata that pick a baseline; cases carry
    // the GPU state before and after them and whether the GPU throttled.
    Migration{2, R"sql(
ALTER TABLE runs ADD COLUMN machine_key TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN branch TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN ci_json TEXT NOT NULL DEFAULT '{}';
ALTER TABLE cases ADD COLUMN gpu_json TEXT NOT NULL DEFAULT '{}';
ALTER TABLE cases ADD COLUMN throttled INTEGER NOT NULL DEFAULT 0;
CREATE INDEX runs_by_machine ON runs(machine_key, branch, suite);
)sql"},
    // A run left "running" by a killed process: the process that writes it (pid on host) is recorded, so
    // the next command that opens the store can tell it is gone and say why the run ended.
    Migration{3, R"sql(
ALTER TABLE runs ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN reason TEXT NOT NULL DEFAULT '';
)sql"},
    // Clean references for the gate: what a run was told beyond its suite, whether it holds only part of
    // its plan (a run made with --filter before this schema is found by its command line), whether the
    // nightly found it suspect, and which run a confirming re-run re-ran.
    Migration{4, R"sql(
ALTER TABLE runs ADD COLUMN selection_json TEXT NOT NULL DEFAULT '{}';
ALTER TABLE runs ADD COLUMN partial INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN suspect TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN confirms TEXT NOT NULL DEFAULT '';
UPDATE runs SET partial = 1 WHERE argv LIKE '% --filter %' OR argv LIKE '% --filter=%';
)sql"},
    // Counted instruments: a metric that repeats to the last digit is judged by the threshold alone.
    Migration{5, R"sql(
ALTER TABLE summaries ADD COLUMN deterministic INTEGER NOT NULL DEFAULT 0;
)sql"},
};

}  // namespace

int latest_schema_version() { return kMigrations.back().version; }

int current_schema_version(sqlite3* db) {
  Stmt exists(db, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_version'",
              "cannot read the schema version");
  exists.step();
  if (exists.col_int(0) == 0) return 0;
  Stmt version(db, "SELECT coalesce(max(version), 0) FROM schema_version", "cannot read the schema version");
  version.step();
  return static_cast<int>(version.col_int(0));
}

void check_not_newer(sqlite3* db, int version) {
  if (version > latest_schema_version())
    throw StoreError(std::string(sqlite3_db_filename(db, "main")) + ": schema version " +
                     std::to_string(version) + " is newer than this build understands (" +
                     std::to_string(latest_schema_version()) + "); upgrade mlsysbench");
}

void migrate(sqlite3* db) {
  check_not_newer(db, current_schema_version(db));
  if (current_schema_version(db) == latest_schema_version()) return;  // the common case: no lock taken
  Transaction tx(db, /*immediate=*/true);
  exec(db, "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)", "cannot create the schema table");
  const int current = current_schema_version(db);  // again: another process may have migrated
  check_not_newer(db, current);
  if (current == latest_schema_version()) return;  // rolls back the no-op CREATE IF NOT EXISTS
  for (const auto& m : kMigrations) {
    if (m.version <= current) continue;
    exec(db, m.sql, "cannot migrate to schema version " + std::to_string(m.version));
  }
  exec(db, "DELETE FROM schema_version", "cannot record the schema version");
  Stmt set(db, "INSERT INTO schema_version (version) VALUES (?)", "cannot record the schema version");
  set.bind(1, static_cast<int64_t>(latest_schema_version())).run();
  tx.commit();
}

}  // namespace mlsb::reports::detail
