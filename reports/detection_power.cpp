#include "reports/detection_power.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <random>
#include <stdexcept>
#include <span>
#include <vector>

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>

#include "util/stats.hpp"

namespace mlsb::reports {

double history_rel_sd(const std::vector<double>& h) {
  if (h.size() < 2) return NAN;
  const Moments m = moments(h);
  return m.mean != 0 ? m.stddev / std::fabs(m.mean) : NAN;
}

namespace {

// Boost.Math in double throughout: its default promotes double to long double, whose initialisers fail
// under valgrind (which computes long double as double), and this file is linked into every process.
using NoPromote = boost::math::policies::policy<boost::math::policies::promote_float<false>,
                                                boost::math::policies::promote_double<false>>;

// One simulated trial in units of the noise: a history h = 1 + s z_i of n runs (z_0 the newest) and a
// candidate noise s e. What the rule needs of it scales with s: mean = 1 + s mean_z, sd = s sd_z, ...
struct Trial {
  double mean_z, sd_z, level_z, newest_z, cand_z;
};

constexpr int kTrials = 4000;

// The trials of a history of n runs: drawn once per n (seeded), shared by every call.
const std::vector<Trial>& trials(size_t n) {
  static std::mutex mutex;
  static std::map<size_t, std::vector<Trial>> cache;
  const std::lock_guard lock(mutex);
  auto [it, fresh] = cache.try_emplace(n);
  if (!fresh) return it->second;
  std::mt19937_64 rng(0x5eed0000 + n);
  std::normal_distribution<double> z(0, 1);
  const size_t level_runs = std::min<size_t>(n, kReferenceRuns);
  std::vector<double> h(n);
  it->second.reserve(kTrials);
  for (int t = 0; t < kTrials; ++t) {
    for (auto& v : h) v = z(rng);
    const Moments m = moments(h);
    it->second.push_back({m.mean, m.stddev,
                          median(std::span<const double>(h.data(), level_runs)), h[0], z(rng)});
  }
  return it->second;
}

}  // namespace

double run_to_run_noise(const std::vector<double>& h, double alpha) {
  if (!(alpha > 0 && alpha < 1)) throw std::invalid_argument("run_to_run_noise: alpha must be in (0, 1)");
  if (h.size() < 2) return NAN;
  double largest = 0, squares = 0;
  for (size_t i = 1; i < h.size(); ++i) {
    const double lo = std::min(std::fabs(h[i]), std::fabs(h[i - 1])), hi = std::max(std::fabs(h[i]), std::fabs(h[i - 1]));
    if (!(lo > 0)) return INFINITY;
    largest = std::max(largest, hi / lo - 1);
    squares += std::pow(std::log(hi / lo), 2);
  }
  const auto d = static_cast<double>(h.size() - 1);
  const double t = boost::math::quantile(boost::math::students_t_distribution<double, NoPromote>(d), 1 - alpha);
  return std::max(largest, std::expm1(t * std::sqrt(squares / d) * std::sqrt(1 + 1 / d)));
}

double detectable_step(int64_t runs, double rel_sd, const CompareOptions& o, double power) {
  if (!(power > 0 && power < 1)) throw std::invalid_argument("detectable_step: power must be in (0, 1)");
  if (!(rel_sd >= 0) || !std::isfinite(rel_sd)) return NAN;
  const double z = boost::math::quantile(boost::math::normal_distribution<double, NoPromote>(), power);
  if (runs < kTTestHistory)  // two runs, each off its level by rel_sd: their difference by sqrt(2) rel_sd
    return std::max(o.threshold, o.run_noise) + z * std::sqrt(2.0) * rel_sd;
  const auto n = static_cast<size_t>(runs);
  const double t_crit = boost::math::quantile(boost::math::students_t_distribution<double, NoPromote>(static_cast<double>(n - 1)),
                                              1 - o.history_alpha);
  const double k = t_crit * std::sqrt(1 + 1 / static_cast<double>(n));
  const double s = rel_sd, up = 1 + o.threshold;
  std::vector<double> needed;
  needed.reserve(kTrials);
  // The candidate 1 + step + s e is flagged when it clears every bar: the t-test's against the history,
  // the threshold against the reference level and against the newest run (the two-run test's base).
  for (const Trial& t : trials(n))
    needed.push_back(std::max({s * (t.mean_z + k * t.sd_z), up * (1 + s * t.level_z) - 1, up * (1 + s * t.newest_z) - 1}) -
                     s * t.cand_z);
  const auto at = needed.begin() + static_cast<std::ptrdiff_t>(power * (kTrials - 1));
  std::nth_element(needed.begin(), at, needed.end());
  return std::max(0.0, *at);
}

}  // namespace mlsb::reports
