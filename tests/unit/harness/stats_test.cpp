#include <gtest/gtest.h>

#include <vector>

#include "util/stats.hpp"

namespace mlsb {
namespace {

TEST(HarnessStats, SummaryMatchesNumpy) {
  // Reference values from numpy.percentile (linear), numpy.mean, numpy.std(ddof=1).
  const std::vector<double> v{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5};
  const Summary s = summarize(v);
  EXPECT_EQ(s.n, 11);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 9);
  EXPECT_DOUBLE_EQ(s.median, 4.0);
  EXPECT_DOUBLE_EQ(s.p05, 1.0);
  EXPECT_DOUBLE_EQ(s.p95, 7.5);
  EXPECT_DOUBLE_EQ(s.mean, 4.0);
  EXPECT_NEAR(s.stddev, 2.3664319132398464, 1e-12);
  EXPECT_NEAR(s.rel_stddev, 2.3664319132398464 / 4.0, 1e-12);
  EXPECT_LE(s.ci_lo, s.median);
  EXPECT_GE(s.ci_hi, s.median);
  EXPECT_GE(s.ci_lo, s.min);
  EXPECT_LE(s.ci_hi, s.max);
}

TEST(HarnessStats, SingleAndEmpty) {
  const std::vector<double> one{2.5};
  const Summary s = summarize(one);
  EXPECT_EQ(s.n, 1);
  EXPECT_DOUBLE_EQ(s.ci_lo, 2.5);
  EXPECT_DOUBLE_EQ(s.ci_hi, 2.5);
  EXPECT_DOUBLE_EQ(s.stddev, 0);
  EXPECT_EQ(summarize({}).n, 0);
  EXPECT_THROW(percentile({}, 0.5), std::invalid_argument);
  EXPECT_THROW(percentile(one, 1.5), std::invalid_argument);
}

TEST(HarnessStats, MannWhitneyMatchesScipy) {
  // scipy.stats.mannwhitneyu(a, b, method="asymptotic").pvalue
  EXPECT_NEAR(mann_whitney_p(std::vector<double>{1, 2, 3, 4, 5}, std::vector<double>{6, 7, 8, 9, 10}),
              0.012185780355344813, 1e-12);
  EXPECT_NEAR(mann_whitney_p(std::vector<double>{1, 2, 2, 3, 3, 3, 4}, std::vector<double>{2, 3, 4, 4, 5, 5, 6, 7}),
              0.025279736885893914, 1e-12);
  const std::vector<double> same{1, 1, 1};
  EXPECT_DOUBLE_EQ(mann_whitney_p(same, same), 1.0);
  EXPECT_DOUBLE_EQ(mann_whitney_p({}, same), 1.0);
}

TEST(HarnessStats, BootstrapRatioCi) {
  const std::vector<double> base{10, 10.1, 9.9, 10.2, 9.8, 10.0};
  const std::vector<double> slow{20, 20.2, 19.8, 20.4, 19.6, 20.0};
  const Interval aa = bootstrap_ratio_ci(base, base, 0.95);
  EXPECT_LE(aa.lo, 1.0);
  EXPECT_GE(aa.hi, 1.0);
  const Interval ab = bootstrap_ratio_ci(base, slow, 0.95);
  EXPECT_GT(ab.lo, 1.9);
  EXPECT_LT(ab.hi, 2.1);
  EXPECT_THROW(bootstrap_ratio_ci({}, base, 0.95), std::invalid_argument);
}

}  // namespace
}  // namespace mlsb
