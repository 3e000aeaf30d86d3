// Routing, capacity and load statistics against brute force, and the configuration checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "support/random_values.hpp"
#include "workloads/moe_train/dispatch.hpp"
#include "workloads/moe_train/flops.hpp"

namespace mlsb::moe_train {
namespace {

using mlsb::test::normal_floats;

TEST(Routing, TopkSoftmaxPicksTheLargestLogitsAndWeightsSumToOne) {
  MoeConfig c;
  c.experts = 8, c.topk = 2;
  const auto logits = normal_floats(100 * 8, 1);
  const auto r = route(logits.data(), 100, c, nullptr);
  for (int64_t t = 0; t < 100; ++t) {
    std::vector<int> order(8);
    for (int i = 0; i < 8; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](int a, int b) { return logits[t * 8 + a] > logits[t * 8 + b]; });
    EXPECT_EQ(r.expert[t * 2], order[0]);
    EXPECT_EQ(r.expert[t * 2 + 1], order[1]);
    EXPECT_NEAR(r.weight[t * 2] + r.weight[t * 2 + 1], 1.0f, 1e-6);
  }
}

TEST(Routing, SigmoidBiasChangesTheChoiceButNotTheWeights) {
  MoeConfig c;
  c.experts = 4, c.topk = 1, c.router = RouterKind::Sigmoid;
  const std::vector<float> logits = {2.0f, 1.0f, 0.0f, -1.0f};
  const std::vector<float> bias = {0.0f, 0.0f, 0.0f, 5.0f};
  const auto r = route(logits.data(), 1, c, bias.data());
  EXPECT_EQ(r.expert[0], 3);
  EXPECT_FLOAT_EQ(r.weight[0], 1.0f);  // one selected score, normalised
}

// Logits so negative that every sigmoid score underflows to 0 must not give 0/0 weights or gradients.
TEST(Routing, SigmoidScoresThatAllUnderflowGiveFiniteWeightsAndGradients) {
  MoeConfig c;
  c.experts = 4, c.topk = 2, c.router = RouterKind::Sigmoid, c.aux_coef = 0.01, c.z_coef = 0;  // z-loss: finite anyway
  const std::vector<float> logits = {-1000.0f, -2000.0f, -1500.0f, -3000.0f};
  const auto r = route(logits.data(), 1, c, nullptr);
  EXPECT_FLOAT_EQ(r.weight[0], 0.5f);
  EXPECT_FLOAT_EQ(r.weight[1], 0.5f);
  for (float p : r.aux_probs) EXPECT_FLOAT_EQ(p, 0.25f);
  EXPECT_TRUE(std::isfinite(r.aux_loss));
  const std::vector<float> dweight = {1.0f, -1.0f};
  std::vector<float> dlogits(4, 1.0f);
  route_backward(r, logits.data(), dweight.data(), c, dlogits.data());
  for (float d : dlogits) EXPECT_EQ(d, 0.0f);
}

TEST(Routing, GroupLimitedChoosesOnlyFromTheBestGroups) {
  MoeConfig c;
  c.experts = 8, c.topk = 2, c.groups = 4, c.group_topk = 1, c.router = RouterKind::SoftmaxTopk;
  // Group 2 (experts 4, 5) has the best top-2 sum although expert 0 has the single best logit.
  const std::vector<float> logits = {3.0f, -5.0f, 0.0f, 0.0f, 2.5f, 2.5f, -1.0f, -1.0f};
  const auto r = route(logits.data(), 1, c, nullptr);
  EXPECT_THAT(r.expert, testing::UnorderedElementsAre(4, 5));
}

TEST(Routing, AuxAndZLossMatchTheirFormulas) {
  MoeConfig c;
  c.experts = 4, c.topk = 2, c.aux_coef = 0.01, c.z_coef = 0.001;
  const auto logits = normal_floats(50 * 4, 2);
  const auto r = route(logits.data(), 50, c, nullptr);
  double aux = 0, z = 0;
  for (int i = 0; i < 4; ++i) {
    double P = 0, f = 0;
    for (int t = 0; t < 50; ++t) {
      double m = -1e30, s = 0;
      for (int j = 0; j < 4; ++j) m = std::max(m, double(logits[t * 4 + j]));
      for (int j = 0; j < 4; ++j) s += std::exp(logits[t * 4 + j] - m);
      P += std::exp(logits[t * 4 + i] - m) / s / 50;
      if (i == 0) z += std::pow(m + std::log(s), 2) / 50;
      f += (r.expert[t * 2] == i) + (r.expert[t * 2 + 1] == i);
    }
    aux += f / 100 * P;
  }
  EXPECT_NEAR(r.aux_loss, 0.01 * 4 * aux, 1e-6);
  EXPECT_NEAR(r.z_loss, 0.001 * z, 1e-6);
}

TEST(Dispatch, CountsAndDropsMatchBruteForce) {
  for (double cf : {0.0, 0.5, 1.0, 1.25}) {
    for (auto policy : {DropPolicy::Probs, DropPolicy::Position}) {
      MoeConfig c;
      c.experts = 8, c.topk = 2, c.capacity_factor = cf, c.drop = policy;
      const int64_t T = 301;
      auto logits = normal_floats(T * 8, 4);
      for (int64_t t = 0; t < T; ++t) logits[t * 8 + 3] += 1.5f;  // expert 3 is popular
      const auto r = route(logits.data(), T, c, nullptr);
      const auto p = plan_dispatch(r, c);
      const int64_t cap = cf > 0 ? static_cast<int64_t>(std::ceil(T * 2 / 8.0 * cf)) : -1;
      EXPECT_EQ(p.capacity, cap);
      int64_t dropped = 0;
      for (int e = 0; e < 8; ++e) {
        int64_t n = 0;
        for (int32_t x : r.expert) n += x == e;
        EXPECT_EQ(r.load[e], n);
        const int64_t kept = cap < 0 ? n : std::min(n, cap);
        EXPECT_EQ(p.offsets[e + 1] - p.offsets[e], kept) << "expert " << e << " cf " << cf;
        dropped += n - kept;
        for (int64_t row = p.offsets[e]; row < p.offsets[e + 1]; ++row) EXPECT_EQ(r.expert[p.row_slot[row]], e);
      }
      EXPECT_EQ(p.dropped, dropped);
      if (cf == 0) {
        EXPECT_EQ(dropped, 0);
      }
      if (cf == 0.5) {
        EXPECT_GT(dropped, 0);
      }
      // Probs keeps the heaviest: every dropped assignment of an expert weighs no more than a kept one.
      if (policy == DropPolicy::Probs && cf > 0)
        for (int64_t s = 0; s < T * 2; ++s) {
          if (p.slot_row[s] >= 0) continue;
          const int e = r.expert[s];
          for (int64_t row = p.offsets[e]; row < p.offsets[e + 1]; ++row)
            EXPECT_GE(r.weight[p.row_slot[row]], r.weight[s]);
        }
      if (policy == DropPolicy::Position && cf > 0)
        for (int64_t s = 0; s < T * 2; ++s)
          if (p.slot_row[s] < 0) {
            const int e = r.expert[s];
            EXPECT_LT(p.row_token[p.offsets[e + 1] - 1], s / 2) << "position keeps the earliest tokens";
          }
    }
  }
}

TEST(Dispatch, ExpertsThatReceiveNothingAndZeroTokensWork) {
  MoeConfig c;
  c.experts = 4, c.topk = 1;
  std::vector<float> logits(10 * 4, 0.0f);
  for (int t = 0; t < 10; ++t) logits[t * 4] = 1.0f;  // all to expert 0
  const auto p = plan_dispatch(route(logits.data(), 10, c, nullptr), c);
  EXPECT_THAT(p.tokens_per_expert(), testing::ElementsAre(10, 0, 0, 0));
  EXPECT_DOUBLE_EQ(load_imbalance(p.tokens_per_expert()), 4.0);
  const auto empty = plan_dispatch(route(logits.data(), 0, c, nullptr), c);
  EXPECT_EQ(empty.rows(), 0);
  EXPECT_DOUBLE_EQ(load_imbalance(empty.tokens_per_expert()), 0.0);
}

TEST(Config, InvalidCombinationsNameTheAxis) {
  auto msg = [](MoeConfig c, int ranks) {
    try {
      validate(c, ranks);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("valid");
  };
  MoeConfig c;
  c.experts = 8, c.topk = 9;
  EXPECT_THAT(msg(c, 1), testing::StartsWith("topk:"));
  c.topk = 2;
  EXPECT_THAT(msg(c, 3), testing::StartsWith("experts:"));
  EXPECT_EQ(msg(c, 4), "valid");
  c.capacity_factor = -1;
  EXPECT_THAT(msg(c, 1), testing::StartsWith("capacity_factor:"));
  c.capacity_factor = 0, c.groups = 3;
  EXPECT_THAT(msg(c, 1), testing::StartsWith("groups:"));
  c.groups = 4, c.group_topk = 5;
  EXPECT_THAT(msg(c, 1), testing::StartsWith("group_topk:"));
  EXPECT_THROW(preset("gpt-5", 1), std::invalid_argument);
}

TEST(Flops, MegatronMoeLayerCount) {
  MoeConfig c = preset("mixtral-8x7b", 1);
  // 18 * tokens * h * k * f: Mixtral layer, 4096 tokens.
  EXPECT_DOUBLE_EQ(moe_layer_flop(c, 4096), 18.0 * 4096 * 4096 * 2 * 14336);
  c = preset("deepseek-v3", 1);
  EXPECT_DOUBLE_EQ(moe_layer_flop(c, 1), 18.0 * 7168 * (8 * 2048 + 2048));
}

TEST(ExpertBias, MovesTowardsBalance) {
  std::vector<float> bias(3, 0.0f);
  update_expert_bias(bias, {10, 5, 0}, 0.1);
  EXPECT_FLOAT_EQ(bias[0], -0.1f);
  EXPECT_FLOAT_EQ(bias[1], 0.0f);
  EXPECT_FLOAT_EQ(bias[2], 0.1f);
}

}  // namespace
}  // namespace mlsb::moe_train
