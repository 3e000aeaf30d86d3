// Gradients of the MoE layer (router variants, capacity modes, shared experts, group-limited routing)
// against central finite differences in fp64, for the input and every weight.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>

#include "unit/moe_train/finite_difference.hpp"
#include "workloads/moe_train/moe_layer.hpp"

namespace mlsb::moe_train {
namespace {

struct Case {
  std::string name;
  RouterKind router;
  double capacity_factor;
  DropPolicy drop;
  int64_t shared, groups, group_topk;
};

std::string case_name(const testing::TestParamInfo<Case>& info) { return info.param.name; }
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class MoeLayerGrad : public testing::TestWithParam<Case> {};

TEST_P(MoeLayerGrad, MatchesCentralDifferences) {
  const Case& k = GetParam();
  MoeConfig c;
  c.hidden = 6, c.ffn = 5, c.experts = 4, c.topk = 2, c.router = k.router;
  c.capacity_factor = k.capacity_factor, c.drop = k.drop, c.shared_experts = k.shared, c.shared_ffn = 3;
  c.groups = k.groups, c.group_topk = k.group_topk, c.aux_coef = 0.1, c.z_coef = 0.05;
  const int64_t T = 9;
  MoeLayer<double> layer(c, nullptr, 1);
  layer.init(7);
  std::mt19937_64 rng(3);
  std::normal_distribution<double> nd;
  std::vector<double> x(T * c.hidden), R(T * c.hidden), y(T * c.hidden), dx(T * c.hidden);
  for (auto& v : x) v = nd(rng);
  for (auto& v : R) v = nd(rng);
  auto loss = [&] {
    layer.forward(x.data(), T, y.data());
    double l = layer.aux_loss() + layer.z_loss();
    for (size_t i = 0; i < y.size(); ++i) l += y[i] * R[i];
    return l;
  };
  loss();
  if (k.capacity_factor > 0) {
    EXPECT_GT(layer.plan().dropped, 0) << "the capacity case must drop something";
  }
  layer.zero_grad();
  layer.backward(R.data(), dx.data());
  auto& p = layer.params();
  auto& g = layer.grads();
  auto check = [&](const std::string& what, std::vector<double>& param, const std::vector<double>& grad) {
    ASSERT_EQ(param.size(), grad.size());
    for (size_t i = 0; i < param.size(); ++i) {
      const double fd = test::central_difference(param[i], loss);
      EXPECT_NEAR(grad[i], fd, test::fd_tolerance(fd)) << what << "[" << i << "]";
    }
  };
  check("x", x, dx);
  check("router", p.router, g.router);
  check("experts.w13", p.experts.w13, g.experts.w13);
  check("experts.w2", p.experts.w2, g.experts.w2);
  check("shared.w13", p.shared.w13, g.shared.w13);
  check("shared.w2", p.shared.w2, g.shared.w2);
}

INSTANTIATE_TEST_SUITE_P(
    Variants, MoeLayerGrad,
    testing::Values(Case{"topk_softmax_dropless", RouterKind::TopkSoftmax, 0, DropPolicy::Probs, 0, 1, 1},
                    Case{"topk_softmax_capacity_probs", RouterKind::TopkSoftmax, 0.6, DropPolicy::Probs, 0, 1, 1},
                    Case{"topk_softmax_capacity_position", RouterKind::TopkSoftmax, 0.6, DropPolicy::Position, 0, 1, 1},
                    Case{"softmax_topk_dropless_shared", RouterKind::SoftmaxTopk, 0, DropPolicy::Probs, 1, 1, 1},
                    Case{"softmax_topk_capacity_probs", RouterKind::SoftmaxTopk, 0.6, DropPolicy::Probs, 0, 1, 1},
                    Case{"softmax_topk_capacity_position", RouterKind::SoftmaxTopk, 0.6, DropPolicy::Position, 0, 1, 1},
                    Case{"sigmoid_dropless", RouterKind::Sigmoid, 0, DropPolicy::Probs, 0, 1, 1},
                    Case{"sigmoid_capacity_probs_shared", RouterKind::Sigmoid, 0.6, DropPolicy::Probs, 1, 1, 1},
                    Case{"sigmoid_capacity_position", RouterKind::Sigmoid, 0.6, DropPolicy::Position, 0, 1, 1},
                    Case{"sigmoid_group_limited", RouterKind::Sigmoid, 0, DropPolicy::Probs, 1, 2, 1},
                    Case{"topk_softmax_group_limited_capacity", RouterKind::TopkSoftmax, 0.6, DropPolicy::Probs, 0, 2,
                         1}),
    case_name);

}  // namespace
}  // namespace mlsb::moe_train
