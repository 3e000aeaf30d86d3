#include "reports/store.hpp"

#include "util/clock.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <unordered_map>

#include "util/clock.hpp"
#include "util/json_parse.hpp"
#include "util/process_state.hpp"
#include "util/uuid.hpp"
#include "reports/detail/migrations.hpp"
#include "reports/detail/sqlite.hpp"

namespace mlsb::reports {

using detail::Stmt;
using detail::Transaction;

struct Store::Statements {
  explicit Statements(sqlite3* db)
      : insert_case(db,
                    "INSERT INTO cases (run_id, workload, params_json, params_key, label, backend, comm, ranks, "
                    "status, reason, primary_metric, started_at, finished_at, gpu_json, throttled) "
                    "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    "cannot insert case"),
        insert_sample(db, "INSERT INTO samples (case_id, idx, metric, value) VALUES (?,?,?,?)",
                      "cannot insert sample"),
        insert_summary(db,
                       "INSERT INTO summaries (case_id, metric, unit, better, n, min, median, mean, stddev, "
                       "rel_stddev, p05, p95, max, ci_lo, ci_hi, deterministic) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                       "cannot insert summary"),
        insert_item(db, "INSERT INTO items (case_id, key, json) VALUES (?,?,?)", "cannot insert item") {}
  Stmt insert_case, insert_sample, insert_summary, insert_item;
};

namespace {

// A file whose permission bits grant nobody write access is read-only even for root, who would
// otherwise bypass the mode and silently write to a file the user protected.
bool may_write(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return true;  // absent: SQLite creates it (or reports why it cannot)
  return (st.st_mode & 0222) != 0 && ::access(path.c_str(), W_OK) == 0;
}

void require_writable(const std::filesystem::path& path) {
  if (!may_write(path))
    throw StoreError(path.string() + " is read-only; cannot open it for writing (use a writable copy or --db)");
}


// An empty path would open a temporary database and a directory fails only after the busy timeout:
// reject both at once.
void require_file_path(const std::filesystem::path& path) {
  if (path.empty()) throw StoreError("the store path is empty; name a database file (--db)");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw StoreError(path.string() + " is a directory; name a database file inside it (--db)");
}

// A status read back from the store; one this build does not know is an error naming the row.
template <typename Status>
Status stored_status(std::optional<Status> status, const std::string& text, const std::string& row) {
  if (!status) throw StoreError(row + " has status '" + text + "', which this build does not know");
  return *status;
}

RunRecord read_run_row(const Stmt& s) {
  RunRecord r;
  r.id = s.col_int(0);
  r.uuid = s.col_text(1);
  r.suite = s.col_text(2);
  r.started_at = s.col_double(3);
  r.finished_at = s.col_double(4);
  r.status = stored_status(parse_run_status(s.col_text(5)), s.col_text(5), "run " + std::to_string(r.id));
  r.argv = s.col_text(6);
  r.seed = static_cast<uint64_t>(s.col_int(7));
  r.tags = nlohmann::json::parse(s.col_text(8)).get<std::vector<std::string>>();
  r.git_sha = s.col_text(9);
  r.git_dirty = s.col_int(10) != 0;
  r.env = nlohmann::json::parse(s.col_text(11));
  r.machine_key = s.col_text(12);
  r.branch = s.col_text(13);
  r.ci = nlohmann::json::parse(s.col_text(14));
  r.pid = s.col_int(15);
  r.host = s.col_text(16);
  r.reason = s.col_text(17);
  r.selection = nlohmann::json::parse(s.col_text(18));
  r.partial = s.col_int(19) != 0;
  r.suspect = s.col_text(20);
  r.confirms = s.col_text(21);
  return r;
}

// The runs columns read_run_row expects, in order.
constexpr const char* kRunColumns =
    "id, uuid, suite, started_at, finished_at, status, argv, seed, tags, git_sha, git_dirty, env_json, "
    "machine_key, branch, ci_json, pid, host, reason, selection_json, partial, suspect, confirms";
constexpr int kRunColumnCount = 22;

constexpr std::chrono::milliseconds kBusyTimeout{10'000};  // how long a writer waits for another's lock

// Migrates the store at `path` on a connection of its own (a reader's connection is read-only).
void migrate_on_the_side(const std::filesystem::path& path) {
  sqlite3* rw = nullptr;
  if (sqlite3_open_v2(path.c_str(), &rw, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    const std::string msg = rw ? sqlite3_errmsg(rw) : "out of memory";
    sqlite3_close_v2(rw);
    throw StoreError(path.string() + ": cannot open it to migrate: " + msg);
  }
  sqlite3_busy_timeout(rw, static_cast<int>(kBusyTimeout.count()));
  try {
    detail::migrate(rw);
  } catch (...) {
    sqlite3_close_v2(rw);
    throw;
  }
  sqlite3_close_v2(rw);
}

// The runs still "running" whose process, on this host, is gone (killed with SIGKILL, out of memory, a
// crash): it never finishes them. Runs of other hosts and of unknown processes are left alone (their
// process cannot be checked from here). (run id, pid) pairs.
std::vector<std::pair<int64_t, int64_t>> find_dead_runs(sqlite3* db) {
  Stmt find(db, "SELECT id, pid, started_at FROM runs WHERE status = 'running' AND pid > 0 AND host = ?",
            "cannot look for unfinished runs");
  find.bind(1, host_name());
  std::vector<std::pair<int64_t, int64_t>> dead;
  while (find.step())
    if (!process_running_since(find.col_int(1), find.col_double(2))) dead.emplace_back(find.col_int(0), find.col_int(1));
  return dead;
}

// Whether some case is still "running" in a run that is not (its process could not finish it: the store
// failed under it, or it was marked dead).
bool has_orphan_cases(sqlite3* db) {
  Stmt s(db,
         "SELECT 1 FROM cases c JOIN runs r ON r.id = c.run_id WHERE c.status = 'running' AND r.status != 'running' "
         "LIMIT 1",
         "cannot look for unfinished cases");
  return s.step();
}

// Marks the dead runs (find_dead_runs) "interrupted" with the reason, and then every case left "running"
// in a run that is not: one transaction.
void interrupt_dead_runs(sqlite3* db, const std::vector<std::pair<int64_t, int64_t>>& dead) {
  Transaction tx(db, /*immediate=*/true);
  for (const auto& [id, pid] : dead) {
    Stmt mark(db, "UPDATE runs SET status = 'interrupted', finished_at = ?, reason = ? WHERE id = ? AND status = 'running'",
              "cannot mark an unfinished run interrupted");
    mark.bind(1, unix_now())
        .bind(2, "its process (pid " + std::to_string(pid) + " on " + host_name() +
                     ") is gone: killed (SIGKILL, out of memory) or crashed; the cases it finished are kept")
        .bind(3, id)
        .run();
  }
  Stmt cut(db,
           "UPDATE cases SET status = 'interrupted', finished_at = ?, reason = ? WHERE status = 'running' AND "
           "run_id IN (SELECT id FROM runs WHERE status != 'running')",
           "cannot mark an unfinished case interrupted");
  cut.bind(1, unix_now())
      .bind(2, "its run's process was killed or crashed while it ran; the items it had stored are kept")
      .run();
  tx.commit();
}

std::optional<int64_t> first_id(Stmt& s) {
  if (!s.step()) return std::nullopt;
  return s.col_int(0);
}

// Switching to WAL needs an exclusive lock, and SQLite may answer SQLITE_BUSY without calling the busy
// handler while another connection opens the same new file: retry for up to the busy timeout.
void enable_wal(sqlite3* db, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int delay_ms = 1;; delay_ms = std::min(delay_ms * 2, 50)) {
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v2(db, "PRAGMA journal_mode = WAL", -1, &stmt, nullptr);
    std::string mode;
    if (rc == SQLITE_OK && (rc = sqlite3_step(stmt)) == SQLITE_ROW) {
      mode = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
      rc = SQLITE_OK;
    }
    sqlite3_finalize(stmt);
    if (rc == SQLITE_OK && mode == "wal") return;
    const bool busy = rc == SQLITE_BUSY || rc == SQLITE_LOCKED || rc == SQLITE_OK;
    if (!busy || std::chrono::steady_clock::now() > deadline) {
      if (rc == SQLITE_OK) throw StoreError(std::string(sqlite3_db_filename(db, "main")) + ": cannot enable WAL mode");
      detail::throw_sqlite(db, "cannot enable WAL mode");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  }
}

bool all_digits(std::string_view s) {
  return !s.empty() && s.size() < 19 && s.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

Store::Store(const std::filesystem::path& path, bool read_only) : path_(path) {
  require_file_path(path_);
  if (!read_only) require_writable(path_);
  if (std::error_code ec; read_only && !std::filesystem::exists(path_, ec))
    throw StoreError("the store " + path_.string() +
                     " does not exist yet: `mlsysbench run` creates it (pick another store with --db or MLSB_DB)");
  if (std::error_code ec; !read_only && path_.has_parent_path() && !std::filesystem::is_directory(path_.parent_path(), ec))
    throw StoreError("the folder " + path_.parent_path().string() + " of the store " + path_.string() +
                     " does not exist: create it, or pick another store with --db or MLSB_DB");
  const int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close_v2(db_);
    throw StoreError(path_.string() + ": cannot open: " + msg);
  }
  try {
    sqlite3_busy_timeout(db_, static_cast<int>(kBusyTimeout.count()));
    if (!read_only && sqlite3_db_readonly(db_, "main") == 1)
      throw StoreError(path_.string() + " is read-only; cannot open it for writing");
    detail::exec(db_, "PRAGMA foreign_keys = ON", "cannot enable foreign keys");
    if (read_only) {
      int version = detail::current_schema_version(db_);
      detail::check_not_newer(db_, version);
      if (version < schema_version() && may_write(path_)) {  // a store this user may write migrates when read
        migrate_on_the_side(path_);
        version = detail::current_schema_version(db_);
      }
      if (version < schema_version())
        throw StoreError(path_.string() + ": schema version " + std::to_string(version) + " is older than " +
                         std::to_string(schema_version()) + " and the file is read-only; open a writable copy to migrate it");
      // A store this user may write: settle the runs whose process died and the cases they left running
      // (found on this read-only connection; a writable one is opened only when there are some).
      const auto dead = find_dead_runs(db_);
      if ((!dead.empty() || has_orphan_cases(db_)) && access(path_.c_str(), W_OK) == 0) {
        sqlite3* rw = nullptr;
        if (sqlite3_open_v2(path_.c_str(), &rw, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
          sqlite3_busy_timeout(rw, static_cast<int>(kBusyTimeout.count()));
          try {
            interrupt_dead_runs(rw, dead);
          } catch (const StoreError&) {  // reading must not fail for it (a locked or read-only medium)
          }
        }
        sqlite3_close_v2(rw);
      }
    } else {
      enable_wal(db_, kBusyTimeout);
      // NORMAL is durable against process crashes in WAL mode.
      detail::exec(db_, "PRAGMA synchronous = NORMAL", "cannot set the synchronous mode");
      detail::migrate(db_);
      if (const auto dead = find_dead_runs(db_); !dead.empty() || has_orphan_cases(db_)) interrupt_dead_runs(db_, dead);
      stmts_ = std::make_unique<Statements>(db_);
    }
  } catch (...) {
    stmts_.reset();
    sqlite3_close_v2(db_);
    throw;
  }
}

Store::~Store() {
  stmts_.reset();
  sqlite3_close_v2(db_);
}

namespace {
CaseRenamer& case_renamer() {
  static CaseRenamer r;
  return r;
}
}  // namespace

void set_case_renamer(CaseRenamer renamer) { case_renamer() = std::move(renamer); }

int Store::schema_version() { return detail::latest_schema_version(); }

int64_t Store::begin_run(RunRecord& run) {
  if (run.uuid.empty()) run.uuid = random_uuid();
  if (run.started_at == 0) run.started_at = unix_now();
  Stmt s(db_,
         "INSERT INTO runs (uuid, suite, started_at, finished_at, status, argv, seed, tags, git_sha, git_dirty, "
         "env_json, machine_key, branch, ci_json, pid, host, reason, selection_json, partial, suspect, confirms) "
         "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
         "cannot insert run");
  s.bind(1, run.uuid).bind(2, run.suite).bind(3, run.started_at).bind(4, run.finished_at).bind(5, status_name(run.status));
  s.bind(6, run.argv).bind(7, static_cast<int64_t>(run.seed)).bind(8, dump_json(nlohmann::json(run.tags)));
  s.bind(9, run.git_sha).bind(10, int64_t{run.git_dirty}).bind(11, dump_json(run.env));
  s.bind(12, run.machine_key).bind(13, run.branch).bind(14, dump_json(run.ci));
  s.bind(15, run.pid).bind(16, run.host).bind(17, run.reason);
  s.bind(18, dump_json(run.selection)).bind(19, int64_t{run.partial}).bind(20, run.suspect).bind(21, run.confirms);
  s.run();
  run.id = sqlite3_last_insert_rowid(db_);
  return run.id;
}

void Store::insert_case_row(int64_t run_id, CaseRecord& c, CaseStatus status) {
  auto& ic = stmts_->insert_case;
  ic.bind(1, run_id).bind(2, c.workload).bind(3, dump_json(c.params)).bind(4, c.params_key).bind(5, c.label);
  ic.bind(6, c.backend).bind(7, c.comm).bind(8, int64_t{c.ranks}).bind(9, status_name(status)).bind(10, c.reason);
  ic.bind(11, c.primary_metric).bind(12, c.started_at).bind(13, c.finished_at);
  ic.bind(14, dump_json(c.gpu)).bind(15, int64_t{c.throttled});
  ic.run();
  c.id = sqlite3_last_insert_rowid(db_);
}

void Store::insert_case_results(const CaseRecord& c, size_t first_item) {
  auto& is = stmts_->insert_sample;
  for (const auto& [metric, values] : c.samples)
    for (size_t i = 0; i < values.size(); ++i)
      is.bind(1, c.id).bind(2, int64_t(i)).bind(3, metric).bind(4, values[i]).run();
  auto& iz = stmts_->insert_summary;
  for (const auto& r : c.summaries) {
    const auto& st = r.stats;
    iz.bind(1, c.id).bind(2, r.metric).bind(3, r.unit).bind(4, to_string(r.better)).bind(5, st.n).bind(6, st.min);
    iz.bind(7, st.median).bind(8, st.mean).bind(9, st.stddev).bind(10, st.rel_stddev).bind(11, st.p05);
    iz.bind(12, st.p95).bind(13, st.max).bind(14, st.ci_lo).bind(15, st.ci_hi).bind(16, int64_t{r.deterministic});
    iz.run();
  }
  auto& ii = stmts_->insert_item;
  for (size_t i = first_item; i < c.items.size(); ++i)
    ii.bind(1, c.id).bind(2, c.items[i].first).bind(3, dump_json(c.items[i].second)).run();
}

int64_t Store::add_case(int64_t run_id, CaseRecord& c) {
  if (!stmts_) throw StoreError(path_.string() + ": opened read-only; cannot add a case");
  Transaction tx(db_, /*immediate=*/true);
  insert_case_row(run_id, c, c.status);
  insert_case_results(c, 0);
  tx.commit();
  return c.id;
}

int64_t Store::begin_case(int64_t run_id, CaseRecord& c) {
  if (!stmts_) throw StoreError(path_.string() + ": opened read-only; cannot add a case");
  Transaction tx(db_, /*immediate=*/true);
  insert_case_row(run_id, c, CaseStatus::Running);
  tx.commit();
  return c.id;
}

void Store::add_items(int64_t case_id, std::span<const std::pair<std::string, nlohmann::json>> items) {
  if (!stmts_) throw StoreError(path_.string() + ": opened read-only; cannot add items");
  if (items.empty()) return;
  // No waiting for another writer: the caller retries later (its loop also watches timeouts and signals).
  sqlite3_busy_timeout(db_, 0);
  struct RestoreBusyTimeout {
    sqlite3* db;
    ~RestoreBusyTimeout() { sqlite3_busy_timeout(db, static_cast<int>(kBusyTimeout.count())); }
  } restore{db_};
  Transaction tx(db_, /*immediate=*/true);
  auto& ii = stmts_->insert_item;
  for (const auto& [key, item] : items) ii.bind(1, case_id).bind(2, key).bind(3, dump_json(item)).run();
  tx.commit();
}

void Store::finish_case(const CaseRecord& c, size_t items_stored) {
  if (!stmts_) throw StoreError(path_.string() + ": opened read-only; cannot finish a case");
  Transaction tx(db_, /*immediate=*/true);
  Stmt u(db_,
         "UPDATE cases SET backend = ?, status = ?, reason = ?, primary_metric = ?, finished_at = ?, gpu_json = ?, "
         "throttled = ? WHERE id = ? AND status IN ('running', 'interrupted')",
         "cannot finish case");
  u.bind(1, c.backend).bind(2, status_name(c.status)).bind(3, c.reason).bind(4, c.primary_metric).bind(5, c.finished_at);
  u.bind(6, dump_json(c.gpu)).bind(7, int64_t{c.throttled}).bind(8, c.id).run();
  if (sqlite3_changes(db_) == 0)
    throw StoreError(path_.string() + ": no unfinished case with id " + std::to_string(c.id));
  insert_case_results(c, items_stored);
  tx.commit();
}

void Store::mark_suspect(int64_t run_id, const std::string& reason) {
  Stmt s(db_, "UPDATE runs SET suspect = ? WHERE id = ?", "cannot mark the run suspect");
  s.bind(1, reason).bind(2, run_id).run();
  if (sqlite3_changes(db_) == 0) throw StoreError(path_.string() + ": no run with id " + std::to_string(run_id));
}

void Store::finish_run(int64_t run_id, RunStatus status) {
  Stmt s(db_, "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", "cannot finish run");
  s.bind(1, status_name(status)).bind(2, unix_now()).bind(3, run_id).run();
  if (sqlite3_changes(db_) == 0) throw StoreError(path_.string() + ": no run with id " + std::to_string(run_id));
}

std::optional<int64_t> Store::resolve_run(std::string_view ref) {
  if (all_digits(ref)) {
    Stmt s(db_, "SELECT id FROM runs WHERE id = ?", "cannot look up run");
    if (auto id = first_id(s.bind(1, int64_t{std::stoll(std::string(ref))}))) return id;
  }
  if (ref == "latest" || ref.starts_with("latest~")) {
    const auto back = ref.substr(std::string_view("latest").size());
    const std::string_view n = back.empty() ? "0" : back.substr(1);
    if (all_digits(n)) {
      // An in-progress run is no result: "latest" counts finished runs only.
      Stmt s(db_, "SELECT id FROM runs WHERE status != 'running' ORDER BY id DESC LIMIT 1 OFFSET ?",
             "cannot look up run");
      return first_id(s.bind(1, int64_t{std::stoll(std::string(n))}));
    }
  }
  if (auto id = run_id_by_uuid(ref)) return id;
  {
    Stmt s(db_, "SELECT r.id FROM runs r, json_each(r.tags) t WHERE t.value = ? ORDER BY r.id DESC LIMIT 1",
           "cannot look up run");
    if (auto id = first_id(s.bind(1, ref))) return id;
  }
  if (const size_t tilde = ref.rfind('~'); tilde != std::string_view::npos && all_digits(ref.substr(tilde + 1))) {
    // TAG~N: the N-th run before the newest carrying TAG.
    Stmt s(db_,
           "SELECT r.id FROM runs r, json_each(r.tags) t WHERE t.value = ? ORDER BY r.id DESC LIMIT 1 OFFSET ?",
           "cannot look up run");
    s.bind(1, ref.substr(0, tilde)).bind(2, int64_t{std::stoll(std::string(ref.substr(tilde + 1)))});
    if (auto id = first_id(s)) return id;
  }
  if (ref.empty()) return std::nullopt;
  Stmt s(db_, "SELECT id FROM runs WHERE substr(uuid, 1, length(?1)) = ?1 LIMIT 2", "cannot look up run");
  s.bind(1, ref);
  const auto id = first_id(s);
  if (id && s.step()) return std::nullopt;  // ambiguous prefix
  return id;
}

std::optional<int64_t> Store::run_id_by_uuid(std::string_view uuid) {
  Stmt s(db_, "SELECT id FROM runs WHERE uuid = ?", "cannot look up run");
  return first_id(s.bind(1, uuid));
}

std::vector<RunRecord> Store::list_runs(int limit) {
  std::vector<RunRecord> runs;
  for (auto& summary : list_run_summaries(limit)) runs.push_back(std::move(summary.run));
  return runs;
}

std::vector<RunSummary> Store::list_run_summaries(int limit) {
  Stmt s(db_,
         "SELECT " + std::string(kRunColumns) +
             ", (SELECT count(*) FROM cases c WHERE c.run_id = runs.id AND c.status = 'ok'),"
             " (SELECT count(*) FROM cases c WHERE c.run_id = runs.id AND c.status IN ('failed', 'timeout')),"
             " (SELECT count(*) FROM cases c WHERE c.run_id = runs.id AND c.status NOT IN ('ok', 'failed', 'timeout'))"
             " FROM runs ORDER BY id DESC LIMIT ?",
         "cannot list runs");
  s.bind(1, int64_t{limit > 0 ? limit : -1});
  std::vector<RunSummary> runs;
  while (s.step())
    runs.push_back({read_run_row(s), {s.col_int(kRunColumnCount), s.col_int(kRunColumnCount + 1),
                                  s.col_int(kRunColumnCount + 2)}});
  return runs;
}

RunData Store::load_run(int64_t run_id) {
  RunData data;
  Transaction tx(db_, /*immediate=*/false);  // one consistent snapshot across the queries
  {
    Stmt s(db_, "SELECT " + std::string(kRunColumns) + " FROM runs WHERE id = ?", "cannot load run");
    if (!s.bind(1, run_id).step()) throw StoreError(path_.string() + ": no run with id " + std::to_string(run_id));
    data.run = read_run_row(s);
  }
  std::unordered_map<int64_t, size_t> index;
  {
    Stmt s(db_,
           "SELECT id, workload, params_json, params_key, label, backend, comm, ranks, status, reason, "
           "primary_metric, started_at, finished_at, gpu_json, throttled FROM cases WHERE run_id = ? ORDER BY id",
           "cannot load cases");
    s.bind(1, run_id);
    while (s.step()) {
      CaseRecord c;
      c.id = s.col_int(0);
      c.run_id = run_id;
      c.workload = s.col_text(1);
      c.params = nlohmann::json::parse(s.col_text(2));
      c.params_key = s.col_text(3);
      c.label = s.col_text(4);
      c.backend = s.col_text(5);
      c.comm = s.col_text(6);
      c.ranks = static_cast<int>(s.col_int(7));
      c.status = stored_status(parse_case_status(s.col_text(8)), s.col_text(8), "case " + std::to_string(c.id));
      c.reason = s.col_text(9);
      c.primary_metric = s.col_text(10);
      c.started_at = s.col_double(11);
      c.finished_at = s.col_double(12);
      c.gpu = nlohmann::json::parse(s.col_text(13));
      c.throttled = s.col_int(14) != 0;
      if (case_renamer()) case_renamer()(c.workload, c.params, c.params_key, c.label);
      index.emplace(c.id, data.cases.size());
      data.cases.push_back(std::move(c));
    }
  }
  {
    Stmt s(db_,
           "SELECT s.case_id, s.metric, s.value FROM samples s JOIN cases c ON c.id = s.case_id "
           "WHERE c.run_id = ? ORDER BY s.case_id, s.metric, s.idx",
           "cannot load samples");
    s.bind(1, run_id);
    std::vector<double>* values = nullptr;
    int64_t last_case = -1;
    std::string last_metric;
    while (s.step()) {
      const int64_t case_id = s.col_int(0);
      std::string metric = s.col_text(1);
      if (case_id != last_case || metric != last_metric) {
        values = &data.cases[index.at(case_id)].samples[metric];
        last_case = case_id;
        last_metric = std::move(metric);
      }
      values->push_back(s.col_double(2));
    }
  }
  {
    Stmt s(db_,
           "SELECT s.case_id, s.metric, s.unit, s.better, s.n, s.min, s.median, s.mean, s.stddev, s.rel_stddev, "
           "s.p05, s.p95, s.max, s.ci_lo, s.ci_hi, s.deterministic FROM summaries s JOIN cases c ON c.id = s.case_id "
           "WHERE c.run_id = ? ORDER BY s.case_id, s.rowid",
           "cannot load summaries");
    s.bind(1, run_id);
    while (s.step()) {
      SummaryRow r;
      r.metric = s.col_text(1);
      r.unit = s.col_text(2);
      r.better = parse_better(s.col_text(3));
      r.deterministic = s.col_int(15) != 0;
      auto& st = r.stats;
      st.n = s.col_int(4);
      st.min = s.col_double(5);
      st.median = s.col_double(6);
      st.mean = s.col_double(7);
      st.stddev = s.col_double(8);
      st.rel_stddev = s.col_double(9);
      st.p05 = s.col_double(10);
      st.p95 = s.col_double(11);
      st.max = s.col_double(12);
      st.ci_lo = s.col_double(13);
      st.ci_hi = s.col_double(14);
      data.cases[index.at(s.col_int(0))].summaries.push_back(std::move(r));
    }
  }
  {
    Stmt s(db_,
           "SELECT i.case_id, i.key, i.json FROM items i JOIN cases c ON c.id = i.case_id "
           "WHERE c.run_id = ? ORDER BY i.id",
           "cannot load items");
    s.bind(1, run_id);
    while (s.step())
      data.cases[index.at(s.col_int(0))].items.emplace_back(s.col_text(1), nlohmann::json::parse(s.col_text(2)));
  }
  tx.commit();
  return data;
}

std::vector<MetricPoint> Store::load_metric_points(const std::vector<int64_t>& run_ids, std::string_view metric) {
  std::string sql =
      "SELECT c.run_id, c.workload, c.params_key, c.label, c.backend, c.comm, c.ranks, c.primary_metric, "
      "c.throttled, s.metric, s.unit, s.better, s.n, s.median, s.ci_lo, s.ci_hi, c.params_json, c.id, s.deterministic "
      "FROM cases c JOIN summaries s ON s.case_id = c.id "
      "WHERE c.run_id IN (SELECT value FROM json_each(?1)) AND c.status = 'ok'";
  if (metric == "primary") sql += " AND s.metric = c.primary_metric";
  else if (!metric.empty()) sql += " AND s.metric = ?2";
  sql += " ORDER BY c.run_id, c.id, s.metric";
  Stmt s(db_, sql, "cannot load the history");
  s.bind(1, dump_json(nlohmann::json(run_ids)));
  if (!metric.empty() && metric != "primary") s.bind(2, metric);
  std::vector<MetricPoint> out;
  int64_t renamed_case = -1;
  while (s.step()) {
    MetricPoint p;
    p.run_id = s.col_int(0);
    p.case_id = s.col_int(17);
    p.workload = s.col_text(1);
    p.params_key = s.col_text(2);
    p.label = s.col_text(3);
    p.backend = s.col_text(4);
    p.comm = s.col_text(5);
    p.ranks = static_cast<int>(s.col_int(6));
    p.primary_metric = s.col_text(7);
    p.throttled = s.col_int(8) != 0;
    p.metric = s.col_text(9);
    p.unit = s.col_text(10);
    p.better = parse_better(s.col_text(11));
    p.deterministic = s.col_int(18) != 0;
    p.n = s.col_int(12);
    p.median = s.col_double(13);
    p.ci_lo = s.col_double(14);
    p.ci_hi = s.col_double(15);
    // A case's rows are consecutive (ORDER BY c.id): its params are parsed and renamed once, not per metric.
    if (case_renamer()) {
      if (out.empty() || s.col_int(17) != renamed_case) {
        nlohmann::json params = nlohmann::json::parse(s.col_text(16));
        case_renamer()(p.workload, params, p.params_key, p.label);
        renamed_case = s.col_int(17);
      } else {
        p.workload = out.back().workload, p.params_key = out.back().params_key, p.label = out.back().label;
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<double> Store::last_case_seconds(const std::vector<std::pair<std::string, std::string>>& cases) {
  Stmt s(db_,
         "SELECT finished_at - started_at FROM cases WHERE workload = ? AND params_key = ? AND status = 'ok' "
         "ORDER BY id DESC LIMIT 1",
         "cannot read earlier case times");
  std::vector<double> out;
  for (const auto& [workload, params_key] : cases) {
    s.bind(1, workload).bind(2, params_key);
    out.push_back(s.step() ? std::max(0.0, s.col_double(0)) : -1.0);
    s.reset();
  }
  return out;
}

bool Store::delete_run(int64_t run_id) {
  Stmt s(db_, "DELETE FROM runs WHERE id = ?", "cannot delete run");
  s.bind(1, run_id).run();
  return sqlite3_changes(db_) > 0;
}

void Store::copy_to(const std::filesystem::path& dest) {
  std::error_code ec;
  std::filesystem::remove(dest, ec);
  Stmt s(db_, "VACUUM INTO ?", "cannot copy the store");
  s.bind(1, dest.string()).run();
}

}  // namespace mlsb::reports
