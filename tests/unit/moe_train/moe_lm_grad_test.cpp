// The MoE LM's gradients (embedding, attention, RMSNorm, MoE blocks, head) against central finite
// differences in fp64, on a sample of every parameter tensor.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "unit/moe_train/finite_difference.hpp"
#include "workloads/moe_train/moe_lm.hpp"

namespace mlsb::moe_train {
namespace {

TEST(MoeLmGrad, EveryParameterTensorMatchesCentralDifferences) {
  LmConfig c;
  c.vocab = 256, c.layers = 2, c.heads = 2, c.seq = 5;
  c.moe.hidden = 8, c.moe.ffn = 6, c.moe.experts = 4, c.moe.topk = 2, c.moe.shared_experts = 1, c.moe.shared_ffn = 4;
  c.moe.aux_coef = 0.1, c.moe.z_coef = 0.01;
  MoeLm<double> lm(c, 1);
  lm.init(11);
  const std::vector<uint8_t> tokens = {'t', 'h', 'e', ' ', 'c', 'a', 'a', ' ', 'd', 'o', 'g', 's'};
  auto objective = [&] {
    double l = lm.forward(tokens.data(), 2);
    for (int64_t i = 0; i < lm.layers(); ++i) l += lm.moe(i).aux_loss() + lm.moe(i).z_loss();
    return l;
  };
  objective();
  lm.zero_grad();
  lm.backward();
  std::mt19937_64 rng(5);
  int checked = 0;
  for (auto& [name, pg] : lm.parameters()) {
    auto [param, grad] = pg;
    std::vector<double> g(grad.begin(), grad.end());
    std::uniform_int_distribution<size_t> pick(0, param.size() - 1);
    for (int s = 0; s < 12; ++s) {
      size_t i = pick(rng);
      // Embedding rows of bytes that never occur have zero gradient: sample used rows too.
      if (name == "tok_emb" && s % 2 == 0) i = tokens[s % tokens.size()] * c.moe.hidden + s % c.moe.hidden;
      const double fd = test::central_difference(param[i], objective);
      EXPECT_NEAR(g[i], fd, test::fd_tolerance(fd)) << name << "[" << i << "]";
      ++checked;
    }
  }
  EXPECT_GT(checked, 150);
}

TEST(MoeLm, HeadsMustDivideTheWidth) {
  LmConfig c;
  c.moe.hidden = 10, c.heads = 4;
  EXPECT_THROW(MoeLm<float>(c, 1), std::invalid_argument);
}

}  // namespace
}  // namespace mlsb::moe_train
