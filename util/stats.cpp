#include "util/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include <boost/math/distributions/students_t.hpp>

namespace mlsb {
namespace {

double sorted_percentile(const std::vector<double>& s, double q) {
  const double pos = q * static_cast<double>(s.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, s.size() - 1);
  return s[lo] + (s[hi] - s[lo]) * (pos - static_cast<double>(lo));
}

std::vector<double> sorted(std::span<const double> v) {
  std::vector<double> s(v.begin(), v.end());
  std::sort(s.begin(), s.end());
  return s;
}

// Median of a bootstrap resample of `v` drawn with `rng`, using `buf` as scratch.
double resample_median(std::span<const double> v, std::mt19937_64& rng, std::vector<double>& buf) {
  std::uniform_int_distribution<size_t> pick(0, v.size() - 1);
  buf.resize(v.size());
  for (auto& x : buf) x = v[pick(rng)];
  const size_t mid = buf.size() / 2;
  std::nth_element(buf.begin(), buf.begin() + mid, buf.end());
  const double upper = buf[mid];
  if (buf.size() % 2) return upper;
  return (*std::max_element(buf.begin(), buf.begin() + mid) + upper) / 2;
}


}  // namespace

Moments moments(std::span<const double> v) {
  Moments m;
  if (v.empty()) return m;
  m.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) ss += (x - m.mean) * (x - m.mean);
    m.stddev = std::sqrt(ss / static_cast<double>(v.size() - 1));
  }
  return m;
}

double relative_stddev(std::span<const double> values) {
  if (values.size() < 2) return INFINITY;
  const Moments m = moments(values);
  if (m.mean != 0) return m.stddev / std::fabs(m.mean);
  return m.stddev == 0 ? 0 : INFINITY;
}

double percentile(std::span<const double> values, double q) {
  if (values.empty()) throw std::invalid_argument("percentile: no values");
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument("percentile: q must be in [0, 1]");
  return sorted_percentile(sorted(values), q);
}

double median(std::span<const double> values) { return percentile(values, 0.5); }

Summary summarize(std::span<const double> values, uint64_t seed) {
  Summary s;
  s.n = static_cast<int64_t>(values.size());
  if (values.empty()) return s;
  const auto v = sorted(values);
  s.min = v.front();
  s.max = v.back();
  s.median = sorted_percentile(v, 0.5);
  s.p05 = sorted_percentile(v, 0.05);
  s.p95 = sorted_percentile(v, 0.95);
  const Moments m = moments(v);
  s.mean = m.mean;
  s.stddev = m.stddev;
  s.rel_stddev = s.mean != 0 ? s.stddev / std::fabs(s.mean) : 0;
  if (v.size() == 1) {
    s.ci_lo = s.ci_hi = s.median;
    return s;
  }
  constexpr int kResamples = 2000;
  std::mt19937_64 rng(seed);
  std::vector<double> medians(kResamples), buf;
  for (auto& m : medians) m = resample_median(v, rng, buf);
  std::sort(medians.begin(), medians.end());
  s.ci_lo = sorted_percentile(medians, 0.025);
  s.ci_hi = sorted_percentile(medians, 0.975);
  return s;
}

Interval bootstrap_ratio_ci(std::span<const double> base, std::span<const double> cand, double level,
                            int resamples, uint64_t seed) {
  if (base.empty() || cand.empty()) throw std::invalid_argument("bootstrap_ratio_ci: empty sample");
  if (!(level > 0 && level < 1)) throw std::invalid_argument("bootstrap_ratio_ci: level must be in (0, 1)");
  std::mt19937_64 rng(seed);
  std::vector<double> ratios;
  ratios.reserve(static_cast<size_t>(resamples));
  std::vector<double> buf;
  for (int i = 0; i < resamples; ++i) {
    const double b = resample_median(base, rng, buf);
    const double c = resample_median(cand, rng, buf);
    if (b != 0) ratios.push_back(c / b);
  }
  if (ratios.empty()) return {NAN, NAN};
  std::sort(ratios.begin(), ratios.end());
  const double tail = (1 - level) / 2;
  return {sorted_percentile(ratios, tail), sorted_percentile(ratios, 1 - tail)};
}

double t_prediction_p(std::span<const double> history, double x, bool upper) {
  const size_t n = history.size();
  if (n < 2) return NAN;
  const double mean = std::accumulate(history.begin(), history.end(), 0.0) / static_cast<double>(n);
  double ss = 0;
  for (double h : history) ss += (h - mean) * (h - mean);
  const double sd = std::sqrt(ss / static_cast<double>(n - 1));
  const double d = upper ? x - mean : mean - x;
  if (sd == 0) return d > 0 ? 0.0 : 1.0;
  const double t = d / (sd * std::sqrt(1 + 1.0 / static_cast<double>(n)));
  const boost::math::students_t dist(static_cast<double>(n - 1));
  return boost::math::cdf(boost::math::complement(dist, t));
}

double mann_whitney_p(std::span<const double> a, std::span<const double> b) {
  const size_t n1 = a.size(), n2 = b.size();
  if (n1 == 0 || n2 == 0) return 1.0;
  std::vector<std::pair<double, int>> all;
  all.reserve(n1 + n2);
  for (double x : a) all.emplace_back(x, 0);
  for (double x : b) all.emplace_back(x, 1);
  std::sort(all.begin(), all.end());
  const double n = static_cast<double>(n1 + n2);
  double rank_sum_a = 0, tie_term = 0;
  for (size_t i = 0; i < all.size();) {
    size_t j = i;
    while (j < all.size() && all[j].first == all[i].first) ++j;
    const double avg_rank = (static_cast<double>(i + j) + 1) / 2;  // ranks are 1-based
    const double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    for (size_t k = i; k < j; ++k)
      if (all[k].second == 0) rank_sum_a += avg_rank;
    i = j;
  }
  const double dn1 = static_cast<double>(n1), dn2 = static_cast<double>(n2);
  const double u1 = rank_sum_a - dn1 * (dn1 + 1) / 2;
  const double mu = dn1 * dn2 / 2;
  const double var = dn1 * dn2 / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (var <= 0) return 1.0;
  const double z = (std::fabs(u1 - mu) - 0.5) / std::sqrt(var);
  return std::min(1.0, std::erfc(std::max(z, 0.0) / std::sqrt(2.0)));
}

}  // namespace mlsb
