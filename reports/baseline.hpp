#pragma once
// What a nightly job judges a candidate against: the clean reference of each case (`compare --baseline
// auto`) and the history of clean runs (`compare --history N`), always from the same suite, machine key,
// branch and runner options, so that no number is ever judged against another machine's, a partial run's
// or a night the confirming re-run found to be noise.
#include <optional>
#include <string>
#include <vector>

#include "reports/compare.hpp"
#include "reports/model.hpp"
#include "reports/store.hpp"

namespace mlsb::reports {

/// Sorts runs newest first by start time (then by id): the order of history and baselines, whatever the
/// order in which runs were stored or imported.
void sort_newest_first(std::vector<RunRecord>& runs);

/// Whether two runs were given the same runner options (RunRecord::selection's "runner": repetitions,
/// warmup, time limit, timeout). A run stored before schema 4 has none recorded and matches any.
bool same_runner_options(const RunRecord& a, const RunRecord& b);

/// The runs that may serve `cand` as references, newest first: status ok, complete (not partial), the same
/// suite, machine key (a run without one matches none), branch and runner options, started before it, of
/// any git sha (a night of an unchanged commit is judged too: drivers and firmware change under it); never
/// the run a confirming re-run re-runs (RunRecord::confirms), which it is there to judge afresh.
/// Suspect runs are included: find_reference puts their confirming re-runs in their place. At most
/// `limit` (0 = all).
std::vector<RunRecord> comparable_runs(Store& store, const RunRecord& cand, int limit = 0);

/// The clean reference of a candidate, per case.
struct Reference {
  /// base.run: the newest comparable run that holds an ok case (what "baseline: run N" names); base.cases:
  /// that run's cases, where each one not ok there (failed, skipped, throttled) is replaced by the newest ok
  /// case of the same key in an older comparable run, when there is one (CaseRecord::run_id names the run
  /// each case came from).
  RunData base;
  /// Per case and metric (case_pair_key + '\n' + metric), the medians of its ok, unthrottled cases in the
  /// comparable runs, newest first: the t-test's history and the reference level.
  HistoryMedians history;
  std::vector<RunRecord> runs;   ///< the comparable runs read, newest first
  std::vector<RunRecord> suspect;  ///< those that were suspect (their re-run cases replaced; without a re-run, left out)
};

/// The reference of `cand` over its `limit` newest comparable runs (0 = all). A suspect run contributes the
/// cases of its confirming re-run (a partial run whose RunRecord::confirms is its uuid) in place of its own,
/// and its other cases as they are; a suspect run without a re-run contributes nothing. nullopt when no
/// comparable run holds an ok case.
std::optional<Reference> find_reference(Store& store, const RunRecord& cand, int limit = 0);

/// Why find_reference found nothing, for the note a nightly job prints: the suite, machine key, branch
/// and runner options it looked for and how many runs the store has of that suite (and how many of them
/// are partial or suspect).
std::string no_baseline_note(Store& store, const RunRecord& cand);

/// The commits between a reference and a candidate, as the gate names them: "abc1234567..def4567890", or
/// "the same (abc1234567): an unchanged commit is judged too".
std::string commit_range(const RunRecord& base, const RunRecord& cand);

/// The environment fields in which two runs differ, of those that make numbers incomparable or explain a
/// change on an unchanged commit: machine key, GPU driver, CUDA runtime, build type, compiler flags, GPU
/// names. Each entry reads "field: base -> cand".
std::vector<std::string> environment_differences(const RunRecord& base, const RunRecord& cand);

}  // namespace mlsb::reports
