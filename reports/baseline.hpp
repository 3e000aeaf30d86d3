#pragma once
// Which stored runs a nightly job compares a candidate against: the baseline (`compare --baseline
// auto`) and the history of earlier runs (`compare --history N`), always from the same suite, machine
// key and branch, so that no number is ever judged against another machine's.
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

/// The runs comparable with `cand`, newest first: status ok, the same suite, machine key (a run without
/// one matches none) and branch, started before it, and with a different git sha (so that a re-run of the
/// same commit is never its own baseline). At most `limit` (0 = all).
std::vector<RunRecord> comparable_runs(Store& store, const RunRecord& cand, int limit = 0);

/// The newest of comparable_runs, or nullopt when there is none yet.
std::optional<RunRecord> find_baseline(Store& store, const RunRecord& cand);

/// Why find_baseline found nothing, for the note a nightly job prints: the suite, machine key and
/// branch it looked for and how many runs the store has of that suite.
std::string no_baseline_note(Store& store, const RunRecord& cand);

/// The medians of every ok case and metric of `runs`, as compare_runs takes them (compare --history N).
HistoryMedians history_medians(Store& store, const std::vector<RunRecord>& runs);

/// The environment fields in which two runs differ, of those that make numbers incomparable: machine
/// key, GPU driver, CUDA runtime, build type, compiler flags. Each entry reads "field: base -> cand".
std::vector<std::string> environment_differences(const RunRecord& base, const RunRecord& cand);

}  // namespace mlsb::reports
