#pragma once
// The nightly job's decisions (`mlsysbench nightly`; scripts/nightly builds, checks the GPU and calls it):
// each suite's run judged against its clean reference (reports/baseline.hpp), the cases that got worse
// re-run once to confirm it, a night the re-run does not confirm marked suspect in the store, the steps
// over the history, the summary and the exit status. What runs a suite is given (NightRunner): the
// application starts `mlsysbench run`, a test stores constructed runs.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "reports/compare.hpp"
#include "reports/history.hpp"
#include "reports/model.hpp"
#include "reports/store.hpp"

namespace mlsb::reports {

/// The nightly's exit status; when several apply, the largest wins.
enum NightStatus : int {
  kNightPass = 0,        ///< no regression, also "no baseline yet" (a suite's first night)
  kNightRegression = 1,  ///< a regression confirmed by re-running the cases that got worse (or not re-runnable)
  kNightUsage = 2,       ///< bad input: an unknown suite, a bad option
  kNightUnfit = 3,       ///< every case of a run skipped, or (strict_env) a reference from another environment
  kNightFailed = 4,      ///< a case failed, timed out or crashed, or a run recorded nothing
  kNightInterrupted = 130,  ///< a signal (Ctrl-C, SIGTERM) stopped a run: the night stopped there
};

/// One run the night asks for.
struct NightRunRequest {
  std::string suite;     ///< a suite name or file, as given
  std::string filter;    ///< ECMAScript regex over case ids ("" = every case): the user's, or the re-run's
  std::string confirms;  ///< the uuid of the night a confirming re-run re-runs ("" for the night's own run)
  std::string tag;       ///< "nightly", or "nightly-confirm" for a confirming re-run
};

/// What the runner did.
struct NightRunOutcome {
  int exit_code = 0;               ///< as `mlsysbench run` exits: 0, 1 (a case failed or all skipped), 2, 130
  std::optional<int64_t> run_id;   ///< the run it stored; nullopt when it stored none
  bool no_case = false;            ///< the filter matches no case of the suite: nothing was run
  std::string error;               ///< what was wrong, for exit code 2
};

/// Runs one suite into the store the night judges, and says what it stored.
using NightRunner = std::function<NightRunOutcome(const NightRunRequest&)>;

struct NightlyOptions {
  std::vector<std::string> suites;  ///< run in this order
  std::string filter;               ///< the user's --filter ("" = whole suites; a filtered run is partial)
  int history = 30;                 ///< runs of history the comparison and the step detection read
  bool strict_env = false;          ///< a reference from another environment is exit 3, not a note
  CompareOptions compare;           ///< history_t_test and history_limit are set from `history`
  StepOptions steps;
};

/// What the night found for one suite. The summary's row reads cases | against_baseline | rerun | history.
struct SuiteNight {
  std::string suite;  ///< as given (a name or a file)
  std::string name;   ///< its name in the summary and the files: without folder or ".json"
  std::optional<RunData> run, rerun;                 ///< the night's run and its confirming re-run
  std::optional<Comparison> comparison, rerun_comparison;
  std::optional<History> history;                    ///< with steps detected; nullopt without 2 runs
  std::vector<std::string> worse;                    ///< case ids (workload/params_key) whose primary got worse
  std::vector<std::string> confirmed;                ///< of those, the ones the re-run found worse too
  bool marked_suspect = false;                       ///< the night was marked suspect in the store
  std::string cases, against_baseline, rerun_verdict, history_verdict;  ///< the summary's cells (plain text)
  std::vector<std::string> notes;                    ///< lines for the summary's notes
  int status = kNightPass;
};

struct NightlyResult {
  std::vector<SuiteNight> suites;
  int status = kNightPass;
  bool stopped = false;  ///< a run's bad input or an interruption stopped the night, and suites were left
};

/// Runs the night: per suite, the run (`run` with tag "nightly" and the user's filter), its reference
/// and comparison (the gate of `compare --baseline auto --history N --fail-on-regression`), a confirming
/// re-run of the cases whose primary metric got worse (tag "nightly-confirm", their ids as an anchored
/// filter, `confirms` the night): a case is confirmed when the re-run, judged against the same clean
/// reference, is worse too; when none is, the night is marked suspect in `store` and passes. A comparison
/// that fails without a worse metric (a case that broke, nothing comparable) cannot be re-run and counts as it
/// stands. Then the history of the suite's nightly runs (same machine key and branch, the last `history`)
/// with its steps; a standing regression is shown, not an exit status (the comparison is the gate).
/// Never throws for what a run or the store holds: what fails is a note and a status.
NightlyResult run_nightly(Store& store, const NightlyOptions& options, const NightRunner& runner);

/// An anchored ECMAScript regex that matches exactly these case ids (syntax characters escaped).
std::string exact_ids_filter(const std::vector<std::string>& ids);

/// "PASS", "REGRESSION (confirmed)", "USAGE ERROR", "UNFIT ENVIRONMENT", "FAILED" or "INTERRUPTED".
std::string night_status_name(int status);

/// The file stem each artifact of a suite is written under (report-S, compare-S, confirm-S,
/// compare-confirm-S, history-S), S being the suite's name without folder or ".json".
std::string night_file_stem(const std::string& kind, const std::string& suite);

}  // namespace mlsb::reports
