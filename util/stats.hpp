#pragma once
// Sample statistics used by summaries and comparisons.
#include <cstdint>
#include <span>

namespace mlsb {

/// Summary of one metric's samples. Percentiles use linear interpolation between order statistics
/// (NumPy's default "linear" method). ci_lo/ci_hi: percentile-bootstrap 95% CI of the median
/// (Efron & Tibshirani, An Introduction to the Bootstrap, ch. 13), 2000 resamples, deterministic seed.
struct Summary {
  int64_t n = 0;
  double min = 0, median = 0, mean = 0, stddev = 0, rel_stddev = 0, p05 = 0, p95 = 0, max = 0;
  double ci_lo = 0, ci_hi = 0;
};

/// Summarises `values` (any order). stddev is the sample stddev (n-1); rel_stddev = stddev/|mean|
/// (0 when mean is 0). An empty span gives n = 0 and zeros. Values must be finite.
Summary summarize(std::span<const double> values, uint64_t seed = 0x5eed);

/// Mean and sample stddev (n-1) of `values`; 0 and 0 for none, stddev 0 for one.
struct Moments {
  double mean = 0, stddev = 0;
};
Moments moments(std::span<const double> values);

/// Sample stddev (n-1) over |mean|: the stopping rule's noise. 0 when mean and stddev are 0, +inf for
/// fewer than 2 values or a zero mean with spread.
double relative_stddev(std::span<const double> values);

/// Percentile q in [0, 1] of `values` by linear interpolation; values need not be sorted.
/// Throws std::invalid_argument for an empty span or q outside [0, 1].
double percentile(std::span<const double> values, double q);

/// Median of `values`; throws std::invalid_argument for an empty span.
double median(std::span<const double> values);

/// Percentile-bootstrap CI of the ratio median(cand)/median(base) at level `level` (e.g. 0.95).
struct Interval { double lo = 0, hi = 0; };
Interval bootstrap_ratio_ci(std::span<const double> base, std::span<const double> cand, double level,
                            int resamples = 2000, uint64_t seed = 0x5eed);

/// One-sided p-value of `x` against the distribution `history` came from, by Student's t prediction
/// interval (Bencher's t-test threshold): t = (x - mean) / (sd * sqrt(1 + 1/n)), n - 1 degrees of freedom;
/// P(T >= t) when `upper` (x unusually high), else P(T <= t). NaN for n < 2. A zero sd gives 0 when x
/// differs from the mean in the asked direction, 1 otherwise. Student's t CDF from Boost.Math.
double t_prediction_p(std::span<const double> history, double x, bool upper);

/// Two-sided Mann-Whitney U test p-value with tie correction, normal approximation with continuity
/// correction (Mann & Whitney 1947; as scipy.stats.mannwhitneyu(method="asymptotic")).
/// Returns 1.0 when either sample is empty or all values are tied.
double mann_whitney_p(std::span<const double> a, std::span<const double> b);

}  // namespace mlsb
