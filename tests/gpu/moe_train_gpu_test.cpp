// The CUDA MoE layer (workloads/moe_train/gpu_layer.hpp) against the CPU MoeLayer<float> (the oracle).
//   MoeTrainGpuMath:    the per-token/per-element arithmetic the kernels share with the host, run on the
//                       CPU against router.cpp / adamw.cpp / experts.cpp (no GPU needed).
//   MoeTrainGpuKernels: routing and AdamW kernels against the CPU functions (fp32: choices exact, values
//                       to 1e-5 relative; dlogits are bf16: relative L2 < 1e-2).
//   MoeTrainGpuLayer:   whole steps. The oracle gets the same bf16-rounded weights, x and dy, so both
//                       route on the same values and the dispatch plans (loads, rows per expert,
//                       drops) must be equal; outputs and gradients carry the GPU's bf16 activations:
//                       relative L2 error < 2e-2.
// GPU tests skip (with the reason) where no CUDA device is usable.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "support/random_values.hpp"
#include "backends/cuda/device.hpp"
#include "backends/formats/small_floats.hpp"
#include "support/bf16_params.hpp"
#include "support/close.hpp"
#include "workloads/common/activations.hpp"
#include "workloads/moe_train/adamw.hpp"
#include "workloads/moe_train/cuda/elementwise_math.hpp"
#include "workloads/moe_train/cuda/routing_math.hpp"
#include "workloads/moe_train/gpu_layer.hpp"
#include "workloads/moe_train/moe_layer.hpp"

#ifdef MLSB_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <memory>

#include "backends/cuda/device_buffer.hpp"
#include "support/device_copies.hpp"
#include "workloads/moe_train/cuda/kernels.hpp"
#endif

namespace mlsb::moe_train {
namespace {

namespace math = gpu::math;

#define SKIP_WITHOUT_GPU()                                                    \
  do {                                                                        \
    std::string why;                                                          \
    if (!cuda::cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why;       \
  } while (0)

using test::normal_floats;

math::RouteShape shape_of(const MoeConfig& c) {
  math::RouteShape s;
  s.experts = static_cast<int>(c.experts), s.topk = static_cast<int>(c.topk);
  s.groups = static_cast<int>(c.groups), s.group_topk = static_cast<int>(c.group_topk), s.router = c.router;
  return s;
}

/// The router configurations the routing tests cover.
std::vector<MoeConfig> router_configs() {
  std::vector<MoeConfig> v;
  for (RouterKind r : {RouterKind::TopkSoftmax, RouterKind::SoftmaxTopk, RouterKind::Sigmoid}) {
    MoeConfig c;
    c.experts = 8, c.topk = 2, c.router = r, c.aux_coef = 0.1, c.z_coef = 0.05;
    v.push_back(c);
    c.experts = 16, c.topk = 4, c.groups = 4, c.group_topk = 2;  // group-limited
    v.push_back(c);
  }
  return v;
}

std::vector<float> expert_bias(int64_t experts) { return normal_floats(static_cast<size_t>(experts), 99, 0.1f); }

/// dweight as backward would produce it: random, 0 on every third slot (as if dropped).
std::vector<float> some_dweight(int64_t n) {
  auto dw = normal_floats(static_cast<size_t>(n), 17);
  for (int64_t s = 0; s < n; s += 3) dw[s] = 0;
  return dw;
}

std::vector<float> aux_gradient(const Routing<float>& r, const MoeConfig& c) {
  std::vector<float> daux(r.experts);
  for (int64_t i = 0; i < r.experts; ++i)
    daux[i] = static_cast<float>(c.aux_coef * static_cast<double>(r.experts) *
                                 (static_cast<double>(r.load[i]) / static_cast<double>(r.tokens * r.topk)) /
                                 static_cast<double>(r.tokens));
  return daux;
}

// ------------------------------------------------------------------ host arithmetic (no GPU needed)

TEST(MoeTrainGpuMath, RouteTokenMatchesTheCpuRouter) {
  const int64_t T = 300;
  for (const MoeConfig& c : router_configs()) {
    SCOPED_TRACE(std::string(to_string(c.router)) + " groups=" + std::to_string(c.groups));
    const int64_t E = c.experts, k = c.topk;
    const auto logits = normal_floats(T * E, 3);
    const auto bias = expert_bias(E);
    const float* b = c.router == RouterKind::Sigmoid ? bias.data() : nullptr;
    const Routing<float> r = route(logits.data(), T, c, b);
    std::vector<float> s(E), p(E), sel(E), gs(c.groups), w(k);
    std::vector<int32_t> e(k);
    for (int64_t t = 0; t < T; ++t) {
      const float lse = math::route_token(shape_of(c), logits.data() + t * E, b, s.data(), p.data(), sel.data(),
                                          gs.data(), e.data(), w.data());
      EXPECT_FLOAT_EQ(lse, r.lse[t]);
      for (int64_t j = 0; j < k; ++j) {
        ASSERT_EQ(e[j], r.expert[t * k + j]) << "token " << t << " slot " << j;
        EXPECT_FLOAT_EQ(w[j], r.weight[t * k + j]);
      }
      for (int64_t i = 0; i < E; ++i) {
        EXPECT_FLOAT_EQ(s[i], r.scores[t * E + i]);
        EXPECT_FLOAT_EQ(p[i], r.aux_probs[t * E + i]);
      }
    }
  }
}

TEST(MoeTrainGpuMath, TokenDlogitsMatchTheCpuRouterBackward) {
  const int64_t T = 300;
  for (const MoeConfig& c : router_configs()) {
    SCOPED_TRACE(std::string(to_string(c.router)) + " groups=" + std::to_string(c.groups));
    const int64_t E = c.experts, k = c.topk;
    const auto logits = normal_floats(T * E, 4);
    const auto bias = expert_bias(E);
    const Routing<float> r = route(logits.data(), T, c, c.router == RouterKind::Sigmoid ? bias.data() : nullptr);
    const auto dw = some_dweight(T * k);
    std::vector<float> want(T * E);
    route_backward(r, logits.data(), dw.data(), c, want.data());
    const auto daux = aux_gradient(r, c);
    for (int64_t t = 0; t < T; ++t) {
      const math::TokenGrad g{r.expert.data() + t * k, r.weight.data() + t * k, dw.data() + t * k,
                              r.scores.data() + t * E, r.aux_probs.data() + t * E, logits.data() + t * E,
                              r.lse[t], daux.data(), static_cast<float>(2 * c.z_coef / T), c.aux_coef > 0};
      const math::TokenDots d = math::token_dots(shape_of(c), g);
      for (int i = 0; i < E; ++i)
        EXPECT_NEAR(math::token_dlogit(shape_of(c), g, d, i), want[t * E + i], 1e-6 + 1e-5 * std::abs(want[t * E + i]))
            << "token " << t << " expert " << i;
    }
  }
}

TEST(MoeTrainGpuMath, ASigmoidRouterWhoseScoresAllUnderflowMatchesTheCpuRouter) {
  // Every logit below -88.7: exp(-l) overflows, every sigmoid score is exactly 0 and their sums are 0. The CPU
  // router gives uniform aux probabilities, equal weights and no score gradient; the device math must not
  // divide 0 by 0.
  for (MoeConfig c : router_configs()) {
    if (c.router != RouterKind::Sigmoid) continue;
    SCOPED_TRACE("groups=" + std::to_string(c.groups));
    const int64_t T = 4, E = c.experts, k = c.topk;
    auto logits = normal_floats(T * E, 5);
    for (float& l : logits) l = -95.0f + l;
    const auto bias = expert_bias(E);
    const Routing<float> r = route(logits.data(), T, c, bias.data());
    const auto dw = some_dweight(T * k);
    std::vector<float> want(T * E);
    route_backward(r, logits.data(), dw.data(), c, want.data());
    const auto daux = aux_gradient(r, c);
    std::vector<float> s(E), p(E), sel(E), gs(c.groups), w(k);
    std::vector<int32_t> e(k);
    for (int64_t t = 0; t < T; ++t) {
      math::route_token(shape_of(c), logits.data() + t * E, bias.data(), s.data(), p.data(), sel.data(), gs.data(),
                        e.data(), w.data());
      for (int64_t i = 0; i < E; ++i) {
        ASSERT_EQ(s[i], 0.0f);
        EXPECT_FLOAT_EQ(p[i], 1.0f / static_cast<float>(E));
        EXPECT_FLOAT_EQ(p[i], r.aux_probs[t * E + i]);
      }
      for (int64_t j = 0; j < k; ++j) {
        ASSERT_EQ(e[j], r.expert[t * k + j]);
        EXPECT_FLOAT_EQ(w[j], 1.0f / static_cast<float>(k));
        EXPECT_FLOAT_EQ(w[j], r.weight[t * k + j]);
      }
      const math::TokenGrad g{r.expert.data() + t * k, r.weight.data() + t * k, dw.data() + t * k,
                              r.scores.data() + t * E, r.aux_probs.data() + t * E, logits.data() + t * E,
                              r.lse[t], daux.data(), static_cast<float>(2 * c.z_coef / T), c.aux_coef > 0};
      const math::TokenDots d = math::token_dots(shape_of(c), g);
      for (int i = 0; i < E; ++i) {
        const float got = math::token_dlogit(shape_of(c), g, d, i);
        ASSERT_TRUE(std::isfinite(got)) << "token " << t << " expert " << i;
        EXPECT_NEAR(got, want[t * E + i], 1e-6 + 1e-5 * std::abs(want[t * E + i])) << "token " << t << " expert " << i;
      }
    }
  }
}

TEST(MoeTrainGpuMath, AdamWElementMatchesAdamW) {
  AdamWConfig opt;
  opt.lr = 1e-2, opt.weight_decay = 0.1;
  auto p = normal_floats(1000, 1), g = normal_floats(1000, 2);
  std::vector<float> cpu = p, m(p.size()), v(p.size());
  AdamW<float> adam(opt);
  adam.add(cpu, g);
  for (int64_t step = 1; step <= 3; ++step) {
    adam.step(1);
    math::AdamWStep s;
    s.lr = static_cast<float>(opt.lr), s.beta1 = static_cast<float>(opt.beta1), s.beta2 = static_cast<float>(opt.beta2);
    s.eps = static_cast<float>(opt.eps), s.weight_decay = static_cast<float>(opt.weight_decay);
    s.inv_bc1 = static_cast<float>(1 / (1 - std::pow(opt.beta1, static_cast<double>(step))));
    s.inv_bc2 = static_cast<float>(1 / (1 - std::pow(opt.beta2, static_cast<double>(step))));
    for (size_t i = 0; i < p.size(); ++i) math::adamw_element(s, g[i], m[i], v[i], p[i]);
  }
  for (size_t i = 0; i < p.size(); ++i) EXPECT_FLOAT_EQ(p[i], cpu[i]) << i;
}

TEST(MoeTrainGpuMath, SwigluBackwardIsTheDerivative) {
  for (float gate : {-6.0f, -1.5f, -0.2f, 0.0f, 0.3f, 2.0f, 7.0f})
    for (float up : {-2.0f, 0.5f, 1.25f}) {
      float dg = 0, du = 0;
      common::swiglu_backward(gate, up, 1.0f, dg, du);
      const double eps = 1e-3;
      auto f = [](double g, double u) { return g / (1 + std::exp(-g)) * u; };
      EXPECT_NEAR(dg, (f(gate + eps, up) - f(gate - eps, up)) / (2 * eps), 1e-4);
      EXPECT_NEAR(du, (f(gate, up + eps) - f(gate, up - eps)) / (2 * eps), 1e-4);
      EXPECT_NEAR(common::swiglu(gate, up), f(gate, up), 1e-5);
    }
}

// ----------------------------------------------------------------------------- construction errors

TEST(MoeTrainGpuLayer, MakeGpuLayerThrowsWithoutAGpu) {
  std::string why;
  if (cuda::cuda_available(&why)) GTEST_SKIP() << "a GPU is present";
  MoeConfig c;
  c.hidden = 64, c.ffn = 96;
  EXPECT_THROW(make_gpu_layer(c, 256, 1, AdamWConfig{}), std::runtime_error);
}

TEST(MoeTrainGpuLayer, MakeGpuLayerRejectsInvalidConfigs) {
  MoeConfig c;
  c.hidden = 64, c.ffn = 96, c.topk = 9;  // more than the 8 experts
  EXPECT_THROW(make_gpu_layer(c, 256, 1, AdamWConfig{}), std::invalid_argument);
  c.topk = 2;
  EXPECT_THROW(make_gpu_layer(c, -1, 1, AdamWConfig{}), std::invalid_argument);
}

#ifdef MLSB_HAVE_CUDA

constexpr double kLayerTol = 2e-2;  // relative L2 error of bf16 outputs and gradients

using test::norm;
using test::rel_l2;
using test::round_bf16;
using test::rounded;

std::vector<float> minus(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> d(a.size());
  for (size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
  return d;
}

// ------------------------------------------------------------------------------------ kernels

using test::device_copy;
using test::host_copy;
std::unique_ptr<cuda::DeviceBuffer> device_alloc(size_t bytes) { return std::make_unique<cuda::DeviceBuffer>(bytes); }
template <typename T>
T* ptr(const std::unique_ptr<cuda::DeviceBuffer>& b) {
  return static_cast<T*>(b->data());
}

TEST(MoeTrainGpuKernels, RoutingMatchesTheCpuRouter) {
  SKIP_WITHOUT_GPU();
  const int64_t T = 1000;
  for (const MoeConfig& c : router_configs()) {
    SCOPED_TRACE(std::string(to_string(c.router)) + " groups=" + std::to_string(c.groups));
    const int64_t E = c.experts, k = c.topk;
    const auto logits = normal_floats(T * E, 5);
    const auto bias = expert_bias(E);
    const bool sigmoid = c.router == RouterKind::Sigmoid;
    const Routing<float> r = route(logits.data(), T, c, sigmoid ? bias.data() : nullptr);
    auto d_logits = device_copy(logits), d_bias = device_copy(bias);
    auto d_expert = device_alloc(T * k * 4), d_weight = device_alloc(T * k * 4), d_scores = device_alloc(T * E * 4);
    auto d_probs = device_alloc(T * E * 4), d_lse = device_alloc(T * 4), d_sel = device_alloc(T * E * 4);
    auto d_gs = device_alloc(T * c.groups * 4), d_stats = device_alloc((E + 1) * 8);
    gpu::RouteForward rf;
    rf.logits = ptr<float>(d_logits), rf.bias = sigmoid ? ptr<float>(d_bias) : nullptr;
    rf.expert = ptr<int32_t>(d_expert), rf.weight = ptr<float>(d_weight), rf.scores = ptr<float>(d_scores);
    rf.aux_probs = ptr<float>(d_probs), rf.lse = ptr<float>(d_lse), rf.select = ptr<float>(d_sel);
    rf.group_score = ptr<float>(d_gs);
    gpu::route_forward(shape_of(c), T, rf, nullptr);
    gpu::route_stats(rf.aux_probs, rf.lse, T, static_cast<int>(E), ptr<double>(d_stats), nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_EQ(host_copy<int32_t>(*d_expert, T * k), r.expert);
    const auto w = host_copy<float>(*d_weight, T * k);
    const auto probs = host_copy<float>(*d_probs, T * E);
    const auto lse = host_copy<float>(*d_lse, T);
    for (int64_t s = 0; s < T * k; ++s) EXPECT_NEAR(w[s], r.weight[s], 1e-5 * std::abs(r.weight[s]) + 1e-7);
    for (int64_t s = 0; s < T * E; ++s) EXPECT_NEAR(probs[s], r.aux_probs[s], 1e-5 * std::abs(r.aux_probs[s]) + 1e-7);
    for (int64_t t = 0; t < T; ++t) EXPECT_NEAR(lse[t], r.lse[t], 1e-5 * std::abs(r.lse[t]) + 1e-6);
    const auto stats = host_copy<double>(*d_stats, E + 1);
    for (int64_t i = 0; i < E; ++i) {
      double P = 0;
      for (int64_t t = 0; t < T; ++t) P += r.aux_probs[t * E + i];
      EXPECT_NEAR(stats[i], P, 1e-4 * P + 1e-6);
    }
    // Backward: dlogits (bf16) against route_backward.
    const auto dw = some_dweight(T * k);
    std::vector<float> want(T * E);
    route_backward(r, logits.data(), dw.data(), c, want.data());
    auto d_dw = device_copy(dw), d_daux = device_copy(aux_gradient(r, c)), d_dl = device_alloc(T * E * 2);
    gpu::RouteBackward rb;
    rb.logits = rf.logits, rb.scores = rf.scores, rb.aux_probs = rf.aux_probs, rb.lse = rf.lse;
    rb.expert = rf.expert, rb.weight = rf.weight, rb.dweight = ptr<float>(d_dw), rb.daux = ptr<float>(d_daux);
    rb.z_scale = static_cast<float>(2 * c.z_coef / T), rb.aux = c.aux_coef > 0, rb.dlogits = ptr<uint16_t>(d_dl);
    gpu::route_backward(shape_of(c), T, rb, nullptr);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto dl16 = host_copy<uint16_t>(*d_dl, T * E);
    std::vector<float> dl(dl16.size());
    for (size_t i = 0; i < dl.size(); ++i) dl[i] = formats::bf16_to_f32(dl16[i]);
    EXPECT_LT(rel_l2(dl, want), 1e-2);
  }
}

TEST(MoeTrainGpuKernels, AdamWMatchesTheCpuOptimizer) {
  SKIP_WITHOUT_GPU();
  AdamWConfig opt;
  opt.lr = 1e-2, opt.weight_decay = 0.1;
  const size_t n = 1003;  // not a multiple of 4: the tail path too
  const auto p0 = normal_floats(n, 1), g = normal_floats(n, 2);
  std::vector<float> cpu = p0;
  AdamW<float> adam(opt);
  adam.add(cpu, g);
  auto d_p = device_copy(p0), d_g = device_copy(g), d_m = device_copy(std::vector<float>(n)),
       d_v = device_copy(std::vector<float>(n)), d_p16 = device_alloc(n * 2);
  for (int64_t step = 1; step <= 3; ++step) {
    adam.step(1);
    math::AdamWStep s;
    s.lr = static_cast<float>(opt.lr), s.beta1 = static_cast<float>(opt.beta1), s.beta2 = static_cast<float>(opt.beta2);
    s.eps = static_cast<float>(opt.eps), s.weight_decay = static_cast<float>(opt.weight_decay);
    s.inv_bc1 = static_cast<float>(1 / (1 - std::pow(opt.beta1, static_cast<double>(step))));
    s.inv_bc2 = static_cast<float>(1 / (1 - std::pow(opt.beta2, static_cast<double>(step))));
    gpu::adamw_update(ptr<float>(d_p), ptr<float>(d_g), ptr<float>(d_m), ptr<float>(d_v), ptr<uint16_t>(d_p16),
                      static_cast<int64_t>(n), s, nullptr);
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const auto p = host_copy<float>(*d_p, n);
  const auto p16 = host_copy<uint16_t>(*d_p16, n);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_NEAR(p[i], cpu[i], 1e-5 * std::abs(cpu[i]) + 1e-7) << i;
    EXPECT_EQ(p16[i], formats::f32_to_bf16(p[i])) << i;
  }
}

// --------------------------------------------------------------------------------------- layer

struct Variant {
  std::string name;
  RouterKind router;
  int64_t hidden, ffn, topk, groups, group_topk, shared;
  double capacity_factor;
  DropPolicy drop;
};
void PrintTo(const Variant& v, std::ostream* os) { *os << v.name; }

MoeConfig config_of(const Variant& v) {
  MoeConfig c;
  c.hidden = v.hidden, c.ffn = v.ffn, c.experts = 8, c.topk = v.topk, c.router = v.router;
  c.groups = v.groups, c.group_topk = v.group_topk, c.shared_experts = v.shared, c.shared_ffn = 64;
  c.capacity_factor = v.capacity_factor, c.drop = v.drop;
  c.aux_coef = 1e-2, c.z_coef = 1e-3, c.bias_rate = 0.05;
  return c;
}

using test::round_params;  // the oracle: the CPU layer with the GPU's bf16-rounded weights

class MoeTrainGpuLayerVariants : public testing::TestWithParam<Variant> {};

TEST_P(MoeTrainGpuLayerVariants, StepMatchesTheCpuLayer) {
  SKIP_WITHOUT_GPU();
  const Variant& v = GetParam();
  const MoeConfig c = config_of(v);
  const int64_t T = 256, h = c.hidden;
  const uint64_t seed = 11;
  MoeLayer<float> cpu(c, nullptr, 1);
  cpu.init(seed);
  round_params(cpu.params());
  const auto x = normal_floats(T * h, 5), dy = normal_floats(T * h, 6);
  const auto xr = rounded(x), dyr = rounded(dy);
  AdamWConfig opt;
  opt.lr = 0;  // the weights stay, so a second step checks the expert-bias update alone
  auto gpu = make_gpu_layer(c, T, seed, opt);
  gpu->set_input(x, dy);

  std::vector<float> y(T * h), dx(T * h);
  cpu.forward(xr.data(), T, y.data());
  EXPECT_LT(rel_l2(gpu->forward_output(), y), kLayerTol) << "forward output";
  const GpuStepResult r = gpu->step();
  cpu.zero_grad();
  cpu.backward(dyr.data(), dx.data());

  EXPECT_EQ(r.load, cpu.routing().load);
  EXPECT_EQ(r.tokens_per_expert, cpu.plan().tokens_per_expert());
  EXPECT_EQ(r.dropped, cpu.plan().dropped);
  if (c.capacity_factor > 0) {
    EXPECT_GT(cpu.plan().dropped, 0) << "the capacity case must drop something";
  }
  EXPECT_NEAR(r.aux_loss, cpu.aux_loss(), 1e-3 * std::abs(cpu.aux_loss()) + 1e-7);
  EXPECT_NEAR(r.z_loss, cpu.z_loss(), 1e-3 * std::abs(cpu.z_loss()) + 1e-7);
  double dot = 0;
  for (int64_t i = 0; i < T * h; ++i) dot += static_cast<double>(y[i]) * dyr[i];
  const double objective = dot / static_cast<double>(T) + cpu.aux_loss() + cpu.z_loss();
  EXPECT_NEAR(r.objective, objective, kLayerTol * norm(y) * norm(dyr) / static_cast<double>(T));
  EXPECT_GT(r.peak_memory_bytes, 0);
  EXPECT_GE(r.forward_ms, 0);
  EXPECT_GE(r.backward_ms, 0);
  EXPECT_GE(r.optimizer_ms, 0);

  const auto& g = cpu.grads();
  EXPECT_LT(rel_l2(gpu->gradient("x"), dx), kLayerTol) << "dx";
  EXPECT_LT(rel_l2(gpu->gradient("router"), g.router), kLayerTol) << "router";
  EXPECT_LT(rel_l2(gpu->gradient("w13"), g.experts.w13), kLayerTol) << "w13";
  EXPECT_LT(rel_l2(gpu->gradient("w2"), g.experts.w2), kLayerTol) << "w2";
  if (c.shared_experts > 0) {
    EXPECT_LT(rel_l2(gpu->gradient("shared_w13"), g.shared.w13), kLayerTol) << "shared_w13";
    EXPECT_LT(rel_l2(gpu->gradient("shared_w2"), g.shared.w2), kLayerTol) << "shared_w2";
  }
  EXPECT_THROW(gpu->gradient("nope"), std::invalid_argument);

  // Second step: same weights (lr 0); the sigmoid router's bias moved by the first step's loads.
  cpu.update_bias();
  cpu.forward(xr.data(), T, y.data());
  const GpuStepResult r2 = gpu->step();
  EXPECT_EQ(r2.load, cpu.routing().load);
  EXPECT_EQ(r2.tokens_per_expert, cpu.plan().tokens_per_expert());
  EXPECT_EQ(r2.dropped, cpu.plan().dropped);
  if (c.router == RouterKind::Sigmoid) {
    EXPECT_NE(r2.load, r.load) << "the expert bias changed no choice";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Variants, MoeTrainGpuLayerVariants,
    testing::Values(
        Variant{"topk_softmax", RouterKind::TopkSoftmax, 64, 96, 2, 1, 1, 0, 0, DropPolicy::Probs},
        Variant{"softmax_topk", RouterKind::SoftmaxTopk, 64, 96, 2, 1, 1, 0, 0, DropPolicy::Probs},
        Variant{"sigmoid", RouterKind::Sigmoid, 64, 96, 2, 1, 1, 0, 0, DropPolicy::Probs},
        Variant{"sigmoid_groups_shared", RouterKind::Sigmoid, 64, 96, 2, 4, 2, 1, 0, DropPolicy::Probs},
        Variant{"topk_softmax_capacity_probs", RouterKind::TopkSoftmax, 64, 96, 2, 1, 1, 0, 1.0, DropPolicy::Probs},
        Variant{"softmax_topk_capacity_position", RouterKind::SoftmaxTopk, 64, 96, 2, 1, 1, 0, 1.0,
                DropPolicy::Position},
        Variant{"softmax_topk_groups", RouterKind::SoftmaxTopk, 64, 96, 4, 4, 2, 0, 0, DropPolicy::Probs},
        // widths not multiples of 8: the scalar paths of the row kernels
        Variant{"scalar_rows_shared", RouterKind::TopkSoftmax, 60, 90, 2, 1, 1, 1, 1.0, DropPolicy::Probs}),
    [](const testing::TestParamInfo<Variant>& info) { return info.param.name; });

TEST(MoeTrainGpuLayer, OptimizerStepMovesTheLayerAsTheCpuDoes) {
  SKIP_WITHOUT_GPU();
  // Every token to every expert (k = E): no routing discontinuity, so the output moves smoothly.
  MoeConfig c;
  c.hidden = 64, c.ffn = 96, c.experts = 4, c.topk = 4;
  const int64_t T = 256, h = c.hidden;
  const uint64_t seed = 3;
  AdamWConfig opt;
  opt.lr = 1e-2, opt.weight_decay = 0.1;
  MoeLayer<float> cpu(c, nullptr, 1);
  cpu.init(seed);
  round_params(cpu.params());
  const auto x = rounded(normal_floats(T * h, 7)), dy = rounded(normal_floats(T * h, 8));
  std::vector<float> y1(T * h), y2(T * h), dx(T * h);
  cpu.forward(x.data(), T, y1.data());
  cpu.zero_grad();
  cpu.backward(dy.data(), dx.data());
  AdamW<float> adam(opt);
  auto& p = cpu.params();
  auto& g = cpu.grads();
  adam.add(p.router, g.router);
  adam.add(p.experts.w13, g.experts.w13);
  adam.add(p.experts.w2, g.experts.w2);
  adam.step(1);
  cpu.forward(x.data(), T, y2.data());

  auto gpu = make_gpu_layer(c, T, seed, opt);
  gpu->set_input(x, dy);
  const auto g1 = gpu->forward_output();
  gpu->step();
  const auto g2 = gpu->forward_output();
  const auto moved = minus(y2, y1);
  ASSERT_GT(norm(moved), 0.02 * norm(y1)) << "the step must move the output well beyond bf16 noise";
  // AdamW's first step is lr * sign(g): gradients near 0 may flip sign under bf16 noise, hence 0.3.
  EXPECT_LT(rel_l2(minus(g2, g1), moved), 0.3);
}

#endif  // MLSB_HAVE_CUDA

}  // namespace
}  // namespace mlsb::moe_train

#undef SKIP_WITHOUT_GPU  // each GPU test file has its own; a unity build joins them
