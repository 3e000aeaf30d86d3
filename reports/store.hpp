#pragma once
// The SQLite results store: schema, migrations, writes (one transaction per case) and queries.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "reports/model.hpp"

struct sqlite3;

namespace mlsb::reports {

/// Any store failure; the message names the database file and what failed.
struct StoreError : std::runtime_error { using std::runtime_error::runtime_error; };

/// Opens (creating if absent) the store at `path` in WAL mode with a 10 s busy timeout, and migrates it
/// to the current schema (reports/detail/migrations.cpp). Several processes may write the same file at
/// once. A read-only store neither creates the file nor changes the journal mode; it migrates an older
/// schema (on a connection of its own) only when this user may write the file.
/// Throws StoreError when `path` is empty or a directory (at once, without waiting), the file is not an
/// SQLite database, is read-only for a writer (its mode bits grant no write access, even to root), or its
/// schema is newer than this build understands (for a read-only store: also older, in a read-only file).
/// Error messages name the file, the failed operation and SQLite's reason (never SQL text), e.g.
/// "r.db: cannot insert case: database is locked".
/// Renames a case stored under a name a later build replaced (a workload that became a family of
/// benchmarks, a benchmark that gained an axis): may rewrite workload, params, params_key and label;
/// leaves other cases alone.
using CaseRenamer =
    std::function<void(std::string& workload, nlohmann::json& params, std::string& params_key, std::string& label)>;
/// Installs the renamer every Store of this process applies to the cases and history points it loads,
/// so runs stored before a rename pair with runs stored after it (the application installs
/// rename_stored_case, built from the workload registry and its aliases; none by default).
void set_case_renamer(CaseRenamer renamer);

class Store {
 public:
  /// Opening a store this user may write also marks "interrupted" (with the reason) every run left
  /// "running" by a process of this host that is gone (util/process_state.hpp), read-only or not.
  explicit Store(const std::filesystem::path& path, bool read_only = false);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  static int schema_version();  ///< the schema this build writes

  /// Inserts a run (status as given, "running" by default); fills and returns run.id. An empty uuid is
  /// replaced by a random (version 4) one and a zero started_at by the current time. Run and case ids
  /// are never reused, even after delete_run.
  int64_t begin_run(RunRecord& run);
  /// Inserts one case with its samples, summaries and items in one transaction (BEGIN IMMEDIATE, so
  /// concurrent writers queue on the busy timeout); fills and returns c.id. A NaN sample is rejected
  /// (StoreError, nothing of the case is stored); NaN summary fields read back as NaN.
  int64_t add_case(int64_t run_id, CaseRecord& c);
  /// A case stored as it runs, so that a killed run keeps what its case in flight had finished:
  /// begin_case inserts the case with status "running" (no samples, summaries or items) and fills and
  /// returns c.id; add_items appends items to it, each call one transaction that does not wait for
  /// another writer (StoreError at once when the store is busy: try again later); finish_case sets its
  /// final status, reason, backend, primary metric, finish time and GPU state from `c` and inserts its
  /// samples, summaries and the items from `items_stored` on (those before were added already).
  /// finish_case throws StoreError when c.id is not an unfinished case ("running", or "interrupted" by a
  /// command that took its process for dead). A store opened by a later command marks "interrupted" the
  /// running cases of a dead run and of any run no longer running, with their items kept.
  int64_t begin_case(int64_t run_id, CaseRecord& c);
  void add_items(int64_t case_id, std::span<const std::pair<std::string, nlohmann::json>> items);
  void finish_case(const CaseRecord& c, size_t items_stored);
  /// Marks the run suspect with `reason` (RunRecord::suspect), or clears the mark when `reason` is "".
  /// Throws StoreError when there is no such run.
  void mark_suspect(int64_t run_id, const std::string& reason);
  /// Sets the run's final status and finish time.
  void finish_run(int64_t run_id, RunStatus status);

  /// Resolves a run reference: numeric id, uuid (or unique uuid prefix), "latest", "latest~N"
  /// (N runs before the latest), a tag (the newest run carrying it) or "TAG~N" (the N-th run before the
  /// newest carrying TAG: "nightly~1" is the nightly before the newest). nullopt when none matches.
  /// "latest" and "latest~N" skip runs still "running" (an in-progress run is no result); such a run
  /// stays reachable by id, uuid or tag.
  std::optional<int64_t> resolve_run(std::string_view ref);
  /// The id of the run with exactly this uuid (no prefix, tag or id lookup), or nullopt.
  std::optional<int64_t> run_id_by_uuid(std::string_view uuid);
  /// Newest first; `limit` 0 means all.
  std::vector<RunRecord> list_runs(int limit = 0);
  /// list_runs with each run's case counts (ok / failed or timed out / other), for `db ls`.
  std::vector<RunSummary> list_run_summaries(int limit = 0);
  /// The whole run; throws StoreError when it does not exist.
  RunData load_run(int64_t run_id);
  /// One summary row of every ok case of the runs `run_ids`, in run id, case id and metric order; only
  /// `metric` when it is not empty, only each case's primary metric when it is "primary" (the history's
  /// input: one query, no samples read).
  std::vector<MetricPoint> load_metric_points(const std::vector<int64_t>& run_ids, std::string_view metric = "");
  /// How long each (workload, params_key) case took the last time it ended ok in this store (seconds,
  /// finished_at - started_at; -1 when it never did): what the progress line's ETA starts from, as ctest
  /// schedules by the last run's test times.
  std::vector<double> last_case_seconds(const std::vector<std::pair<std::string, std::string>>& cases);
  /// Deletes a run and everything under it; false when it did not exist.
  bool delete_run(int64_t run_id);
  /// Writes a consistent copy of the whole store to `dest` (replacing it; SQLite's VACUUM INTO), while
  /// other processes may write: what a CI job keeps as an artifact. Throws StoreError naming the failure.
  void copy_to(const std::filesystem::path& dest);

  const std::filesystem::path& path() const { return path_; }

 private:
  void insert_case_row(int64_t run_id, CaseRecord& c, CaseStatus status);
  void insert_case_results(const CaseRecord& c, size_t first_item);  // samples, summaries, items[first_item..]
  struct Statements;  // prepared statements reused across add_case calls
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
  std::unique_ptr<Statements> stmts_;
};

}  // namespace mlsb::reports
