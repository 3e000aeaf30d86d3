// The planner's choice (workloads/compress/planner.hpp) against brute force, and the link model.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "workloads/compress/link_model.hpp"
#include "workloads/compress/planner.hpp"

namespace mlsb::compress {
namespace {

constexpr double kLink = 10.0;  // GB/s

double time_of(const OptionCost& o) { return modelled_step_s(o.compress_s, o.wire_bytes, o.decompress_s, kLink); }

struct Best {
  double time = INFINITY;
};

// The optimum by enumerating every combination (small instances only).
Best brute_force(const std::vector<TensorCosts>& t, double budget) {
  double norm2 = 0;
  for (const auto& x : t) norm2 += x.norm2;
  Best best;
  std::vector<size_t> idx(t.size(), 0);
  while (true) {
    double time = 0, err = 0;
    for (size_t i = 0; i < t.size(); ++i) time += time_of(t[i].options[idx[i]]), err += t[i].options[idx[i]].sq_error;
    if (err <= budget * budget * norm2 && time < best.time) best.time = time;
    size_t i = 0;
    while (i < t.size() && ++idx[i] == t[i].options.size()) idx[i++] = 0;
    if (i == t.size()) break;
  }
  return best;
}

std::vector<TensorCosts> random_instance(std::mt19937_64& rng, int tensors, int options) {
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<TensorCosts> t;
  for (int i = 0; i < tensors; ++i) {
    TensorCosts c{"t" + std::to_string(i), 1e6 * (1 + 9 * u(rng)), 1 + u(rng), {}};
    c.options.push_back({0, 0, c.bytes, 0});  // lossless "none"
    for (int o = 1; o < options; ++o)
      c.options.push_back({1e-5 * u(rng), 1e-5 * u(rng), c.bytes * (0.05 + 0.9 * u(rng)), 0.05 * u(rng) * c.norm2});
    t.push_back(std::move(c));
  }
  return t;
}

TEST(CompressPlanner, ZeroBudgetKeepsEveryTensorLossless) {
  std::mt19937_64 rng(1);
  const auto t = random_instance(rng, 5, 4);
  const Plan p = choose_plan(t, kLink, 0.0);
  for (size_t i = 0; i < t.size(); ++i) EXPECT_EQ(t[i].options[p.choice[i]].sq_error, 0.0) << i;
  EXPECT_EQ(p.rel_error, 0.0);
}

TEST(CompressPlanner, HugeBudgetTakesTheFastestOptionOfEachTensor) {
  std::mt19937_64 rng(2);
  const auto t = random_instance(rng, 6, 5);
  const Plan p = choose_plan(t, kLink, 100.0);
  for (size_t i = 0; i < t.size(); ++i)
    for (const auto& o : t[i].options) EXPECT_LE(time_of(t[i].options[p.choice[i]]), time_of(o) + 1e-15);
}

TEST(CompressPlanner, StaysWithinBudgetAndNearTheBruteForceOptimum) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    const auto t = random_instance(rng, 4, 4);
    const double budget = std::uniform_real_distribution<double>(0, 0.25)(rng);
    const Plan p = choose_plan(t, kLink, budget);
    EXPECT_LE(p.rel_error, budget * (1 + 1e-12)) << trial;
    double time = 0;
    for (size_t i = 0; i < t.size(); ++i) time += time_of(t[i].options[p.choice[i]]);
    EXPECT_NEAR(p.predicted_s, time, 1e-12);
    const Best best = brute_force(t, budget);
    EXPECT_LE(time, best.time * 1.02 + 1e-12) << "trial " << trial;  // exact up to the budget's rounding
  }
}

TEST(CompressPlanner, RejectsNoLinkAndNegativeBudget) {
  std::mt19937_64 rng(4);
  const auto t = random_instance(rng, 2, 2);
  EXPECT_THROW(choose_plan(t, 0, 0.1), std::invalid_argument);
  EXPECT_THROW(choose_plan(t, kLink, -1), std::invalid_argument);
}

TEST(CompressPlanner, CandidatesStartLosslessAndCastOnlyFp32) {
  const auto bf16 = plan_candidates(DType::BF16);
  const auto fp32 = plan_candidates(DType::F32);
  EXPECT_EQ(bf16.front().name, "none");
  EXPECT_EQ(fp32.size(), bf16.size() + 1);
  for (const auto& c : bf16) EXPECT_FALSE(c.error_feedback) << c.name;
}

TEST(CompressLinkModel, BreakEvenIsWhereBothTransfersTakeEqualTime) {
  const double bytes = 1e9, ratio = 1.5, tc = 0.1, td = 0.05;
  const double b = break_even_gbps(bytes, ratio, tc, td);
  EXPECT_NEAR(b, 1e9 * (1 - 1 / 1.5) / 0.15 / 1e9, 1e-12);
  EXPECT_NEAR(modelled_step_s(tc, bytes / ratio, td, b), transfer_s(bytes, b), 1e-9);
  EXPECT_LT(modelled_step_s(tc, bytes / ratio, td, b / 2), transfer_s(bytes, b / 2));  // slower link: pays
  EXPECT_GT(modelled_step_s(tc, bytes / ratio, td, b * 2), transfer_s(bytes, b * 2));  // faster link: does not
  EXPECT_EQ(break_even_gbps(bytes, 1.0, tc, td), 0.0);
  EXPECT_TRUE(std::isinf(break_even_gbps(bytes, 2.0, 0, 0)));
}

}  // namespace
}  // namespace mlsb::compress
