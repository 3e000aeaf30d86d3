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
#include <string>
#include <string_view>
#include <vector>

#include "reports/model.hpp"

namespace mlsb::reports {

struct CompareOptions {
  double threshold = 0.05;  ///< relative change of the median (0.05 = 5%) below which a metric is "same"
  double alpha = 0.05;      ///< significance level of the Mann-Whitney U test
};

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
};

/// A case named by workload and params, with its status in each run ("" when absent from that run).
struct CaseStatus {
  std::string workload, params_key, base_status, cand_status;
  std::string name;  ///< display name (in the base run when the case is there, else in the candidate)
};

struct Comparison {
  RunRecord base, cand;
  CompareOptions options;
  std::vector<MetricComparison> metrics;  ///< base case order, then metric name order
  std::vector<CaseStatus> only_base, only_cand;
  std::vector<CaseStatus> not_compared;  ///< in both runs but not ok (with samples) in both

  /// True when any compared primary metric (any metric when primary_only is false) is worse.
  bool has_regression(bool primary_only = true) const;
  /// Cases that were ok in the base but failed or timed out in the candidate.
  std::vector<CaseStatus> new_failures() const;
};

/// Compares `cand` against `base`. Throws std::invalid_argument for threshold < 0 or alpha outside (0, 1).
Comparison compare_runs(const RunData& base, const RunData& cand, const CompareOptions& options = {});

/// "text" (aligned table for terminals), "json" (schema "mlsysbench.compare/1") or "md";
/// throws std::invalid_argument for another format.
std::string render_comparison(const Comparison& cmp, std::string_view format);

}  // namespace mlsb::reports
