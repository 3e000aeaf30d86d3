#pragma once
// Change-point (step) detection over a run history: a weighted L1 piecewise-constant fit with a
// penalty chosen from the data, then the rule that says which steps are regressions (asv's
// step_detect/detect_regressions are the model; the solver and the rule here are our own).
#include <cstddef>
#include <span>
#include <vector>

#include "harness/metric.hpp"

namespace mlsb::reports {

struct StepOptions {
  double threshold = 0.05;   ///< relative change of the level below which a step is no regression
  /// The threshold of a deterministic series (a counted metric: history.hpp applies it in place of threshold)
  double deterministic_threshold = 0.01;
  size_t min_level = 2;      ///< runs a level needs: a single-run spike is never a level
  double penalty = 4.0;      ///< beta in gamma = beta * log(n), in units of the series' noise (see detect_steps)
  double noise_factor = 4.0; ///< a step must exceed this many standard errors of its levels' difference
  double tail_z = 2.5;       ///< the newest runs' own test: standard errors their shift must lie beyond (detect_steps)
};

/// A constant level of the fit over runs [begin, end) of the series.
struct Level {
  size_t begin = 0, end = 0;
  double value = 0;  ///< weighted median of the level's values
  double noise = 0;  ///< its noise sigma: 1.4826 * MAD of its values (>= 4 runs), never below the series'
};

/// A change between two adjacent levels.
struct Step {
  size_t at = 0;            ///< index of the first run of the new level
  double before = 0, after = 0;  ///< the two levels' values
  double change = 0;        ///< after / before - 1 (NaN when before is 0)
  bool worse = false;       ///< in the metric's worse direction
  bool significant = false; ///< beyond the threshold and noise_factor sigmas of both levels
  bool standing = false;    ///< worse, significant, and the newest level is still worse than `before`
                            ///< by more than the threshold and the noise: a regression to report
  /// A drift: several steps in one direction over which a straight line fits at least as well as the levels
  /// (detect_steps). Then `at` is the first run after its first level, `end` one past its last run, and
  /// before/after/change are the line's values at its first and last run: the drift's real size.
  bool drift = false;
  size_t begin = 0, end = 0;  ///< a drift's runs [begin, end) (both 0 for a step)
};

struct StepAnalysis {
  bool enough_history = false;  ///< n >= 2 * min_level; otherwise no level is fitted beyond one
  double noise = 0;             ///< the series' noise sigma (see detect_steps)
  std::vector<Level> levels;    ///< in run order, covering every run
  std::vector<Step> steps;      ///< one per boundary between levels
  /// The standing regressions among `steps`.
  std::vector<const Step*> regressions() const;
};

/// Fits levels to `values` (one per run, in run order; e.g. each run's median) and classifies the steps.
///   - noise sigma: 1.4826 * MAD of the first differences / sqrt(2) (robust to the steps themselves),
///     at least 1e-6 of the series' median magnitude, the median of ci_half / 1.96 (the noise of a run's
///     median as its own samples show it), and, for a quantised series (at most n/2 distinct values: a
///     coarse clock, counts), half of its resolution (the median gap between its distinct values);
///   - weights w_i = 1 / max(ci_half_i, sigma / 4), normalised to mean 1 (a run with a wide CI of its
///     median counts less); `ci_half` may be empty (all weights 1) or hold NaN for unknown;
///   - a step is significant when it exceeds the threshold and noise_factor standard errors of the
///     difference of its two levels' medians (1.2533 sigma sqrt(f / runs) each, sigma the level's noise, f =
///     (1 + rho) / (1 - rho) for a lag-1 autocorrelation rho >= 0.25 of the runs around their levels, else 1);
///   - the newest runs: of the tails of 4..12 runs of the last level (or of the last two, when the fit's last
///     level is shorter than 12) that leave a reference at least twice as long, the one whose two levels fit
///     best is a level of its own when its shift (Hodges-Lehmann, the median of the pairwise differences; the
///     difference of weighted medians when the runs' weights differ more than 2x) lies beyond the threshold
///     and tail_z standard errors (c sd sqrt(f / k + 1 / m), c = sqrt(pi / 3) or sqrt(pi / 2), sd the
///     winsorised sd of both parts, f the reference's inflation as above), and all tail runs but one lie
///     sd / 2 beyond the reference's median;
///   - a drift: two or more consecutive steps in one direction whose runs a least-squares line fits at least
///     as well as the levels (MAD of residuals) become one Step with drift set, sized by the line;
///   - fit: minimise sum_i w_i |y_i - level(i)| / sigma + gamma * (number of levels - 1) over levels of
///     at least min_level runs, gamma = penalty * ln(n), by seeded binary segmentation followed by
///     merging neighbours while that lowers the objective (an approximate solver of asv's Potts
///     problem, O(n log^2 n)).
/// Throws std::invalid_argument when ci_half is neither empty nor values.size() long, a value is not finite,
/// or an option is out of range (a threshold that is negative or not finite).
StepAnalysis detect_steps(std::span<const double> values, std::span<const double> ci_half, Better better,
                          const StepOptions& options = {});

}  // namespace mlsb::reports
