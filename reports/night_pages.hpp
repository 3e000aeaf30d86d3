#pragma once
// What a person opens after a night (`mlsysbench nightly` writes both): index.html, one screen with the
// verdict, the commit range, the worst changes with their history and the gate's detection power, and
// links to every page; summary.md, the same in under kMaxNightSummaryBytes for a job summary or a
// pull-request comment.
#include <cstddef>
#include <string>
#include <vector>

#include "reports/nightly.hpp"

namespace mlsb::reports {

/// summary.md's size limit in bytes (so in characters too): GitHub job summaries and pull-request
/// comments show it whole, and a reader takes it in at a glance.
constexpr size_t kMaxNightSummaryBytes = 4000;

/// A page the night wrote for one suite.
struct NightPage {
  std::string label;  ///< "report", "compare", "re-run", "history"
  std::string file;   ///< its HTML file in the output folder ("compare-smoke.html")
};

/// The HTML pages the night wrote for `s` (mlsysbench nightly writes each page whose data exists), in
/// reading order: report, compare, re-run (the confirming re-run against the baseline), history.
std::vector<NightPage> night_pages(const SuiteNight& s);

/// "1a2b3c4d5e of 2026-12-05 .. 9f8e7d6c5b of 2026-12-06", the baseline's commit and day to the night's;
/// "... (the same commit: ...)" when both ran one commit; the night's alone ("9f8e7d6c5b of 2026-12-06")
/// without a comparison; "" without a run.
std::string night_commits(const SuiteNight& s);

/// One change of a primary metric between a suite's baseline and its night.
struct NightChange {
  const SuiteNight* suite = nullptr;
  const MetricComparison* metric = nullptr;
  std::vector<double> history;  ///< the case's medians over the suite's nightly history, oldest first (may be empty)
};

/// The night's `n` worst changes of primary metrics over all suites: "worse" verdicts first, then by the
/// relative change in the worse direction (ratio - 1 for lower-is-better, 1/ratio - 1 otherwise), largest
/// first. Metrics with an undefined ratio are left out. The pointers point into `night`.
std::vector<NightChange> night_worst_changes(const NightlyResult& night, size_t n = 5);

/// summary.md: the status, `context` (one line: when, commit, branch, machine, settings), a row per suite
/// (commits, cases, verdicts, pages), the worst five changes with a text sparkline and the detection power,
/// the notes (`extra_notes` first: what the caller found before the night) and the exit codes. Notes are
/// cut (each, then the list, naming index.html) to keep it under kMaxNightSummaryBytes.
std::string render_night_summary(const NightlyResult& night, const std::string& context,
                                 const std::vector<std::string>& extra_notes = {});

/// index.html: the same as summary.md on one self-contained page, with a coloured banner (green PASS,
/// red REGRESSION or FAILED, amber otherwise), an SVG sparkline per change and every note in full.
std::string render_night_index(const NightlyResult& night, const std::string& context,
                               const std::vector<std::string>& extra_notes = {});

}  // namespace mlsb::reports
