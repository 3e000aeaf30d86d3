#include "reports/detail/sqlite.hpp"

#include <cmath>

#include "reports/store.hpp"

namespace mlsb::reports::detail {

void throw_sqlite(sqlite3* db, std::string_view what) {
  const char* file = db ? sqlite3_db_filename(db, "main") : nullptr;
  const std::string name = file && *file ? file : "(database)";
  if (db && sqlite3_errcode(db) == SQLITE_NOTADB) throw StoreError(name + " is not an SQLite database");
  throw StoreError(name + ": " + std::string(what) + ": " + (db ? sqlite3_errmsg(db) : "out of memory"));
}

void exec(sqlite3* db, const char* sql, std::string_view what) {
  if (sqlite3_exec(db, sql, nullptr, nullptr, nullptr) != SQLITE_OK) throw_sqlite(db, what);
}

Stmt::Stmt(sqlite3* db, std::string_view sql, std::string_view what) : db_(db), what_(what) {
  if (sqlite3_prepare_v3(db, sql.data(), static_cast<int>(sql.size()), SQLITE_PREPARE_PERSISTENT, &stmt_,
                         nullptr) != SQLITE_OK)
    throw_sqlite(db, what_);
}

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

Stmt& Stmt::bind(int i, int64_t v) {
  if (sqlite3_bind_int64(stmt_, i, v) != SQLITE_OK) throw_sqlite(db_, what_);
  return *this;
}

Stmt& Stmt::bind(int i, double v) {
  if (sqlite3_bind_double(stmt_, i, v) != SQLITE_OK) throw_sqlite(db_, what_);
  return *this;
}

Stmt& Stmt::bind(int i, std::string_view v) {
  if (sqlite3_bind_text64(stmt_, i, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8) != SQLITE_OK)
    throw_sqlite(db_, what_);
  return *this;
}

bool Stmt::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  sqlite3_reset(stmt_);  // keeps the step's error code and message for throw_sqlite
  throw_sqlite(db_, what_);
}

void Stmt::run() {
  while (step()) {
  }
  reset();
}

void Stmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

int64_t Stmt::col_int(int i) const { return sqlite3_column_int64(stmt_, i); }
double Stmt::col_double(int i) const {
  // SQLite stores a bound NaN as NULL; read it back as NaN.
  return sqlite3_column_type(stmt_, i) == SQLITE_NULL ? std::nan("") : sqlite3_column_double(stmt_, i);
}
std::string Stmt::col_text(int i) const {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, i));
  return p ? std::string(p, static_cast<size_t>(sqlite3_column_bytes(stmt_, i))) : std::string();
}

Transaction::Transaction(sqlite3* db, bool immediate) : db_(db) {
  exec(db, immediate ? "BEGIN IMMEDIATE" : "BEGIN", "cannot begin a transaction");
}

Transaction::~Transaction() {
  if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  exec(db_, "COMMIT", "cannot commit");
  open_ = false;
}

}  // namespace mlsb::reports::detail
