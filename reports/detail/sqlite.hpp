#pragma once
// Thin RAII helpers over the SQLite C API used by the store; errors become StoreError naming the file.
#include <cstdint>
#include <string>
#include <string_view>

#include <sqlite3.h>

namespace mlsb::reports::detail {

/// Throws StoreError "<file>: <what>: <sqlite message>", or "<file> is not an SQLite database" when
/// the connection's last error is SQLITE_NOTADB. `what` names the failed operation for users
/// ("cannot insert case"); SQL text never appears in the message.
[[noreturn]] void throw_sqlite(sqlite3* db, std::string_view what);

/// Runs SQL text with no results (may hold several statements); throws via throw_sqlite with `what`.
void exec(sqlite3* db, const char* sql, std::string_view what);

/// A prepared statement. Bind indices are 1-based, column indices 0-based (SQLite's convention).
/// Every failure (prepare, bind, step) throws via throw_sqlite with the operation name given at
/// construction.
class Stmt {
 public:
  Stmt(sqlite3* db, std::string_view sql, std::string_view what);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, int64_t v);
  Stmt& bind(int i, double v);
  Stmt& bind(int i, std::string_view v);  ///< copied (SQLITE_TRANSIENT)
  /// Advances; true while a row is available, false when done. Throws on error.
  bool step();
  /// step() to completion, then reset() so the statement can be reused.
  void run();
  void reset();  ///< resets and clears bindings

  int64_t col_int(int i) const;
  double col_double(int i) const;  ///< NaN for NULL
  std::string col_text(int i) const;

 private:
  sqlite3* db_;
  std::string what_;
  sqlite3_stmt* stmt_ = nullptr;
};

/// A transaction that rolls back unless commit() was called. `immediate` takes the write lock at once
/// (BEGIN IMMEDIATE), so a writer waits on the busy timeout instead of failing at its first write.
class Transaction {
 public:
  Transaction(sqlite3* db, bool immediate);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  sqlite3* db_;
  bool open_ = true;
};

}  // namespace mlsb::reports::detail
