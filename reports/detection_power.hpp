#pragma once
// What the gate can see: the smallest step of a case's median that compare's verdict rule
// (reports/compare.hpp) calls worse with a given probability, for the run-to-run noise the store measured
// and the history the case has. Printed per case by compare and the nightly summary ("detects >= 14% with 3
// runs of history, >= 6% with 30").
#include <cstdint>

#include "reports/compare.hpp"

namespace mlsb::reports {

/// The smallest relative step (0.14 = 14%, in the worse direction) of a case's median that the verdict
/// rule flags with probability `power` (default 0.95), when the medians of repeated runs of unchanged code
/// are Gaussian with relative sd `rel_sd` around a level and `runs` of them form the history:
/// - runs >= kTTestHistory: the history rule (one-sided t-test at options.history_alpha, the candidate beyond
///   options.threshold of the reference level and of the newest run). By simulation, 4,000 trials of a
///   seeded history and candidate: each trial's smallest flagged step, and their `power`-quantile (so the
///   estimate carries the spread of an estimated sd, which a z-formula would leave out).
/// - fewer runs: the two-run rule, whose floor is the larger of options.threshold and options.run_noise
///   (the assumed run-to-run noise), plus the noise of the two runs' difference at that power.
/// The within-run tests (U test, ratio CI) are taken to pass: their samples are tighter than runs.
/// Deterministic. NaN when rel_sd is negative or not finite; throws std::invalid_argument for power outside
/// (0, 1).
double detectable_step(int64_t runs, double rel_sd, const CompareOptions& options, double power = 0.95);

/// The run-to-run noise of a history of medians as the two-run rule uses it: the relative change between two
/// runs of unchanged code (max(a, b) / min(a, b) - 1 of their magnitudes) that a new pair exceeds in a given
/// direction with probability about `alpha`. The larger of the largest change between consecutive medians
/// and the one-sided prediction bound exp(t s sqrt(1 + 1 / d)) - 1: s the root mean square of the d = n - 1
/// log-ratios of consecutive medians (zero-mean for unchanged code), t Student's t quantile at 1 - alpha with
/// d degrees of freedom. NaN for fewer than 2 medians, infinite when one is 0. Throws std::invalid_argument
/// for alpha outside (0, 1).
double run_to_run_noise(const std::vector<double>& medians, double alpha);

/// The relative run-to-run noise of a history of medians: sample sd over |mean|; NaN for fewer than 2
/// medians or a zero mean.
double history_rel_sd(const std::vector<double>& medians);

}  // namespace mlsb::reports
