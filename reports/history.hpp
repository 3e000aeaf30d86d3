#pragma once
// A history: the medians of each case and metric over the stored runs of one suite, machine key and
// branch, in run order (`mlsysbench history`), with the steps detect_steps finds in each series.
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "reports/model.hpp"
#include "reports/step_detect.hpp"
#include "reports/store.hpp"

namespace mlsb::reports {

struct HistoryQuery {
  std::string suite = "";        ///< "" = any, but the matching runs must then be of one suite
  std::string tag = "";          ///< "" = any
  std::string filter = "";       ///< ECMAScript regex searched in each case's id "workload/params_key"
  std::string metric = "primary";  ///< "primary" (each case's primary metric), "all", or a metric name
  std::string machine = "auto";  ///< "auto" = the newest matching run's machine key, or a key
  std::string branch = "auto";   ///< "auto" = the newest matching run's branch, or a branch name
  int last = 0;                  ///< only the newest N matching runs (0 = all)
  /// When set, only runs that ended ok with the runner options of this run (same_runner_options): the
  /// nightly's history, made of the runs its comparison may read.
  const RunRecord* like = nullptr;
};

/// One run's value in a series.
struct HistoryPoint {
  size_t run = 0;  ///< index into History::runs
  double median = 0, ci_lo = 0, ci_hi = 0;
  int64_t n = 0;
  bool throttled = false;  ///< left out of step detection
  bool unclean = false;    ///< its run is partial or suspect (RunRecord): shown, left out of step detection
};

/// One case (paired as compare pairs cases: workload, params, communicator, ranks) and metric.
struct HistorySeries {
  std::string workload, params_key, comm, name, metric, unit;
  int ranks = 1;
  Better better = Better::Lower;
  bool primary = false;
  bool deterministic = false;        ///< a counted metric: judged with StepOptions::deterministic_threshold
  std::vector<HistoryPoint> points;  ///< in run order
  StepAnalysis analysis;             ///< filled by detect_history; `at` indexes the unthrottled points
  std::vector<size_t> fitted;        ///< the indices into `points` that analysis covers
};

struct History {
  std::string suite, machine_key, branch;
  std::vector<RunRecord> runs;  ///< oldest first
  std::vector<HistorySeries> series;
  bool detected = false;
  StepOptions options;
};

/// load_history's error when the query selects a single run: no history yet (a suite's first night).
struct HistoryTooShort : std::invalid_argument { using std::invalid_argument::invalid_argument; };

/// Loads the history the query selects. Throws std::invalid_argument with a message naming what
/// matched nothing and what the store holds instead: an empty store, a suite, tag, machine or branch
/// that matches no run, runs of several suites without --suite, fewer than 2 runs, a bad regex, or a
/// filter or metric that matches no case; HistoryTooShort (an invalid_argument) for a single run.
History load_history(Store& store, const HistoryQuery& query);

/// Runs detect_steps on every series (throttled points and those of partial or suspect runs left out),
/// with `options`.
void detect_history(History& history, const StepOptions& options);

/// A standing regression of a primary metric, for the exit status and the message.
struct HistoryRegression {
  const HistorySeries* series = nullptr;
  const Step* step = nullptr;
  const RunRecord* first_run = nullptr;  ///< the first run of the new level (of a drift: its first run)
  const RunRecord* last_good = nullptr;  ///< the run before it (of a drift: its first run too)
  const RunRecord* drift_end = nullptr;  ///< a drift's last run; nullptr for a step
};
std::vector<HistoryRegression> standing_regressions(const History& history, bool primary_only = true);
/// One line naming it by run id and start time: "CASE METRIC: +12.3% from run 37 (2026-12-01 02:17:00 UTC,
/// git abc -> def): 1.23 -> 1.38 ms", or for a drift "CASE METRIC: a drift of +18% over runs 20..80 (DATE ..
/// DATE UTC, git abc -> def): 1.00 -> 1.18 ms".
std::string describe(const HistoryRegression& r);

/// "text" (a line per series and the regressions), "json" (schema "mlsysbench.history/1"), "md" or
/// "html" (one self-contained page: a line chart per series with the steps marked, hover titles naming
/// run, git sha and date). Throws std::invalid_argument for another format.
std::string render_history(const History& history, std::string_view format);

}  // namespace mlsb::reports
