#pragma once
// Compares two runs case by case (matched by workload + params_key; shown by display name, see
// reports/case_names.hpp) and metric by metric.
//
// Per metric present in both cases (with samples on both sides):
//   ratio  = median(cand) / median(base)                       (NaN when the base median is 0)
//   ci     = percentile-bootstrap 95% CI of that ratio         (mlsb::bootstrap_ratio_ci)
//   p      = two-sided Mann-Whitney U p-value                   (mlsb::mann_whitney_p)
// Verdict, with t = threshold and a = alpha:
//   same   when |median(cand) - median(base)| <= t * |median(base)| (the change is within the threshold);
//   otherwise the direction is "better" or "worse" by the sign of the change and the metric's Better, and
//   the significance test depends on the sample sizes (MetricComparison::significance):
//   - UTest, when the U test can reach significance at these sample sizes (its smallest possible p, for
//     fully separated samples, is below a; this needs n >= 4 on both sides at a = 0.05):
//       p < a -> better/worse, else noisy;
//   - RatioCI, when it cannot but both sides have n >= 2: better/worse only when the whole bootstrap CI
//     of the ratio lies beyond 1 +- t on the side of the change; else noisy;
//   - None, when either side has n = 1: a single sample carries no estimate of its noise, so no test is
//     possible and the threshold alone decides (better/worse), as Google Benchmark's compare.py does
//     without repetitions. The renderings mark such rows "n=1" and advise --repetitions.
// Identical samples (A/A) give ratio 1 and "same", whatever n is.
//
// Samples within one run share the machine's state (clocks, caches, placement), so the tests above
// call a between-run shift significant that repeated runs show to be noise. A better/worse verdict
// therefore also has to clear the run-to-run noise, else it becomes "noisy" (MetricComparison::why):
//   - throttled: when the GPU throttled during either case (CaseRecord::throttled), never better/worse;
//   - a deterministic metric (SummaryRow::deterministic on both sides: a counted instruction) is judged by
//     CompareOptions::deterministic_threshold alone (default 1%): beyond it, better or worse as it stands;
//     between two runs of one commit (same git sha, neither dirty) a difference beyond
//     determinism_tolerance is a determinism defect of the case: "noisy" with that reason;
//   - with a history (compare --history N: the medians h_1..h_n of the case in the N newest clean
//     comparable runs, newest first, n >= kTTestHistory), Bencher's t-test threshold:
//     t = (median(cand) - mean(h)) / (sd(h) * sqrt(1 + 1/n)), one-sided p from Student's t with n - 1
//     degrees of freedom in the direction of the change; the verdict stands only when
//     p < CompareOptions::history_alpha (0.01: Bencher's upper boundary 0.99) and median(cand) differs by
//     more than the threshold from the reference level: the median of the newest kReferenceRuns of h;
//   - without the t-test (no history, a history shorter than kTTestHistory: the two-run rule, not "noisy",
//     or history_t_test false), a minimum effect size for metrics that
//     vary within a run (timings, bandwidths: not scores or counts that every sample repeats): |ratio - 1|
//     (max(ratio, 1/ratio) - 1) must exceed the machine's run-to-run noise: when the history holds 5 runs
//     or more, the change two runs of unchanged code exceed with probability two_run_alpha, estimated from
//     the changes between its consecutive runs (run_to_run_noise in reports/detection_power.hpp), else
//     CompareOptions::run_noise (default 0.25; see README "The gate must not cry wolf").
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reports/model.hpp"

namespace mlsb::reports {

/// Runs of history the t-test needs; a shorter history falls back to the two-run rule (and measures no noise).
constexpr int64_t kTTestHistory = 5;
/// Runs whose medians' median is a case's reference level (the newest of the history).
constexpr int64_t kReferenceRuns = 5;

struct CompareOptions {
  double threshold = 0.05;  ///< relative change of the median (0.05 = 5%) below which a metric is "same"
  double alpha = 0.05;      ///< significance level of the Mann-Whitney U test
  double history_alpha = 0.01;  ///< level of the one-sided t-test against the history (compare --history)
  double run_noise = 0.25;  ///< relative change that repeated runs show without any change (used without a history)
  /// The two-run rule with a history: the chance, per case and metric, that two runs of unchanged code
  /// differ beyond the measured run-to-run noise in the worse direction.
  double two_run_alpha = 0.001;
  bool history_t_test = true;  ///< false: the history only measures the run-to-run noise (plain two-run compare)
  int history_limit = 30;  ///< runs of history the gate reads at most: the second figure of the detectable step
  /// The threshold of a deterministic metric (a counted instruction): a change beyond it is better or worse
  /// as it stands (no significance test: the count repeats to the last digit).
  double deterministic_threshold = 0.01;
  /// How far two runs of one commit may differ in a deterministic metric before it is a determinism defect
  /// of the case ("noisy", never better or worse).
  double determinism_tolerance = 1e-3;
};

/// The medians of each case and metric over earlier runs (compare --history N), newest first, keyed by
/// case_pair_key(...) + '\n' + metric; see find_reference() in reports/baseline.hpp.
using HistoryMedians = std::map<std::string, std::vector<double>>;

enum class Verdict { Better, Worse, Same, Noisy };
std::string_view to_string(Verdict v);

/// How a verdict beyond the threshold was tested (see the rule above).
enum class Significance { UTest, RatioCI, None };
/// "u-test" | "ratio-ci" | "none".
std::string_view to_string(Significance s);

struct MetricComparison {
  std::string workload, params_key, metric, unit;
  Better better = Better::Lower;
  bool primary = false;  ///< the case's primary metric
  int64_t base_n = 0, cand_n = 0;
  double base_median = 0, cand_median = 0;
  double ratio = 0;            ///< cand/base medians; NaN when the base median is 0
  double ci_lo = 0, ci_hi = 0;  ///< bootstrap 95% CI of the ratio (NaN when undefined)
  double p_value = 1;           ///< Mann-Whitney U, two-sided
  Verdict verdict = Verdict::Same;
  std::string name;             ///< the case's display name in the base run
  Significance significance = Significance::UTest;  ///< None when either side has a single sample
  int64_t history_n = 0;       ///< medians in the history (0: no history for this metric)
  double history_mean = NAN;   ///< their mean
  double history_p = NAN;      ///< the t-test's one-sided p-value (NaN without a history of 2 or more)
  bool throttled = false;      ///< the GPU throttled during the base or candidate case
  bool deterministic = false;  ///< judged by the deterministic rule (both sides declare it)
  std::string why;             ///< why a change beyond the threshold is "noisy" ("" otherwise)
  int64_t base_run = 0;        ///< the store id of the run the base case came from (0: not from a store)
  double reference = NAN;      ///< the reference level: median of the newest kReferenceRuns history medians
  double rel_noise = NAN;      ///< the history's run-to-run noise: sd / |mean| of its medians (NaN below 2)
  /// The smallest worse step the rule catches with 95% probability (reports/detection_power.hpp) with
  /// this history (detectable) and with history_limit runs of the same noise (detectable_full); NaN
  /// without a noise estimate (fewer than 2 history runs).
  double detectable = NAN, detectable_full = NAN;
};

/// A case named by workload and params, with its status in each run (nullopt when absent from that run).
struct CaseInRuns {
  std::string workload, params_key;
  std::optional<CaseStatus> base_status, cand_status;
  std::string name;  ///< display name (in the base run when the case is there, else in the candidate)
};

struct Comparison {
  RunRecord base, cand;
  CompareOptions options;
  std::vector<MetricComparison> metrics;  ///< base case order, then metric name order
  std::vector<CaseInRuns> only_base, only_cand;
  std::vector<CaseInRuns> not_compared;  ///< in both runs but not ok (with samples) in both
  std::vector<CaseInRuns> lost_primary;  ///< ok in both, but the base's primary metric has no samples in the candidate

  /// True when any compared primary metric (any metric when primary_only is false) is worse.
  bool has_regression(bool primary_only = true) const;
  /// Cases that were ok in the base but failed or timed out in the candidate.
  std::vector<CaseInRuns> new_failures() const;
  /// Cases that were ok in the base and are absent from the candidate.
  std::vector<CaseInRuns> missing_in_candidate() const;
  /// The ids (workload/params_key, as `run --filter` matches them) of the cases whose primary metric is
  /// worse, in metric order, each once.
  std::vector<std::string> worse_cases() const;
  /// What `compare --fail-on-regression` fails on (besides a run compared with itself or another suite): a
  /// worse primary metric, a case ok in the base that failed or timed out or lost its primary metric, no
  /// case compared, or a case ok in the base missing from a complete (not partial) candidate.
  bool fails_gate() const;
  /// Why fails_gate() is true, one phrase each ("2 primary metrics worse", "no case compared", ...); empty when
  /// it is false.
  std::vector<std::string> gate_failures() const;
};

/// The key that pairs cases across runs: workload, params, communicator and rank count (cases on another
/// communicator or rank count measure something else and never pair).
std::string case_pair_key(const std::string& workload, const std::string& params_key, const std::string& comm,
                          int ranks);
/// The same for a stored case.
std::string case_pair_key(const CaseRecord& c);

/// Compares `cand` against `base`. Throws std::invalid_argument for threshold < 0 or alpha outside (0, 1).
/// `history` (optional) gives the t-test its medians; a metric without an entry there (or with fewer than 2)
/// falls back to the run_noise rule.
Comparison compare_runs(const RunData& base, const RunData& cand, const CompareOptions& options = {},
                        const HistoryMedians& history = {});

/// What the gate can see: a line per primary metric with a noise estimate, naming the smallest worse step it
/// catches with 95% probability with the history it has and with a full one (reports/detection_power.hpp),
/// e.g. "case time_ms: detects >= 23% with 6 runs of history, >= 16% with 30 (run-to-run noise 3.7%)".
std::vector<std::string> detection_lines(const Comparison& cmp);

/// "text" (aligned table for terminals), "json" (schema "mlsysbench.compare/1"), "md" or "html" (one
/// self-contained page, worst changes first); md and html show only primary metrics and rows that are not
/// "same" unless `all`, so the Markdown fits a pull-request comment. Throws std::invalid_argument for
/// another format.
std::string render_comparison(const Comparison& cmp, std::string_view format, bool all = false);

}  // namespace mlsb::reports
