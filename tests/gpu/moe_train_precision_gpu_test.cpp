// moe_train's low-precision recipes on the cuda backend (label gpu; every test skips without a GPU):
//   Fp8Kernels   the amax and the casts to E4M3 / E5M2 (as stored and transposed with zero padding) equal the
//                host's formats::f32_to_e4m3 / f32_to_e5m2 of x * scale, code for code, with the CPU recipes' scale
//   Fp8Gemm      cuBLASLt's FP8 GEMM equals the fp64 product of the decoded operands times both descales
//                (fp32 output: 1e-4 of sum |a b| with promotion, 1e-2 with fast accumulation; bf16 output 2^-7 more),
//                operands and output 256-byte aligned or only 16 (an expert's rows inside a tensor)
//   layer        the cuda layer's fp8-current and fp8-delayed steps against the CPU layer under the same recipe (the
//                oracle): the GPU's error against the fp32 CPU layer is the CPU recipe's within a factor 2, and the
//                GPU is nearer the CPU recipe than the recipe is to fp32 (both quantised alike, not independently)
//   CLI          fp8-current / fp8-delayed run on cuda with mfu against the FP8 peak; block-scaled recipes skip,
//                naming the axis
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/device.hpp"
#include "backends/formats/small_floats.hpp"
#include "support/bf16_params.hpp"
#include "support/case_metrics.hpp"
#include "support/close.hpp"
#include "support/random_values.hpp"
#include "support/test_support.hpp"
#include "workloads/moe_train/gpu_layer.hpp"
#include "workloads/moe_train/moe_layer.hpp"
#include "workloads/moe_train/precision/precision.hpp"

#ifdef MLSB_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "backends/cuda/device_buffer.hpp"
#include "backends/cuda/stream.hpp"
#include "support/device_copies.hpp"
#include "workloads/moe_train/cuda/gemm_fp8.hpp"
#include "workloads/moe_train/cuda/kernels.hpp"
#endif

namespace mlsb::moe_train {
namespace {

// Skips without a GPU, and without FP8 tensor cores (compute capability 8.9) where `fp8`.
bool usable_gpu(bool fp8, std::string* why) {
  if (!cuda::cuda_available(why)) return false;
#ifdef MLSB_HAVE_CUDA
  cudaDeviceProp prop{};
  if (fp8 && (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || prop.major * 10 + prop.minor < 89)) {
    *why = std::string("GPU ") + prop.name + " has no FP8 tensor cores";
    return false;
  }
#endif
  return true;
}
#define SKIP_WITHOUT_GPU(fp8)            \
  do {                                   \
    std::string why;                     \
    if (!usable_gpu(fp8, &why)) {        \
      GTEST_SKIP() << "no GPU: " << why; \
    }                                    \
  } while (0)

TEST(MoeTrainPrecisionGpu, TheCudaLayerRunsFp8AndSkipsBlockScaledRecipes) {
  SKIP_WITHOUT_GPU(true);
  test::TempDir dir;
  const auto r = test::run_cli(dir / "c.db",
                               "run moe_train.layer --backend cuda -p dtype=bf16 -p hidden=64 -p ffn=128 "
                               "-p tokens=512 -p precision=bf16,fp8-current,fp8-delayed,mxfp8 "
                               "-p accumulate=promoted,limited --repetitions 2");
  const auto run = test::only_run(dir / "c.db");
  ASSERT_EQ(run.cases.size(), 7u) << r.out << r.err;  // bf16 once (accumulate does not apply), the others twice
  const auto spec = cuda::lookup_device(cuda::device_names().at(0));
  int fp8_ok = 0;
  for (const auto& c : run.cases) {
    const std::string p = c.params.value("precision", "");
    if (p == "mxfp8") {
      EXPECT_THAT(c.reason, testing::StartsWith("precision: mxfp8"));
      continue;
    }
    ASSERT_EQ(c.status, reports::CaseStatus::Ok) << p << ": " << c.reason;
    EXPECT_GT(test::median_of(c, "step_ms"), 0) << p;
    if (spec && p != "bf16") {
      EXPECT_EQ(test::median_of(c, "peak_tflops"), spec->peak_fp8_tflops) << p;
      ++fp8_ok;
    } else if (spec) {
      EXPECT_EQ(test::median_of(c, "peak_tflops"), spec->peak_bf16_tflops);
    }
  }
  if (spec) {
    EXPECT_EQ(fp8_ok, 4);
  }
}

#ifdef MLSB_HAVE_CUDA

using test::normal_floats;
using test::rel_l2;

using test::device_copy;
using test::host_copy;

// bf16 values over the whole range an activation or gradient takes: normal, tiny, huge (saturating), zero, and
// non-finite ones the scale must ignore.
std::vector<uint16_t> test_values(size_t n, float spread) {
  std::vector<uint16_t> x(n);
  const auto g = normal_floats(n, 3, spread);
  for (size_t i = 0; i < n; ++i) x[i] = formats::f32_to_bf16(g[i] * (i % 97 == 0 ? 1e-6f : 1.0f));
  x[5] = formats::f32_to_bf16(0.0f);
  x[11] = formats::f32_to_bf16(std::numeric_limits<float>::infinity());
  x[12] = formats::f32_to_bf16(std::numeric_limits<float>::quiet_NaN());
  return x;
}

float host_amax(const std::vector<uint16_t>& x) {
  float a = 0;
  for (uint16_t v : x) {
    const float f = std::fabs(formats::bf16_to_f32(v));
    if (f <= FLT_MAX) a = std::max(a, f);
  }
  return a;
}

uint8_t host_code(float v, bool e5m2) { return e5m2 ? formats::f32_to_e5m2(v) : formats::f32_to_e4m3(v); }

TEST(Fp8Kernels, AmaxAndCastsEqualTheHostRounding) {
  SKIP_WITHOUT_GPU(false);
  const int64_t rows = 37, cols = 80, padded = 48;  // rows not a multiple of the 32-row tile nor of 16
  const auto x = test_values(static_cast<size_t>(rows * cols), 3.0f);
  const auto d_x = device_copy(x);
  for (bool e5m2 : {false, true})
    for (bool current : {true, false}) {
      gpu::Fp8Scale s0;
      s0.scale = 0.37f;  // delayed scaling's scale from the host (current scaling computes its own)
      const auto d_s = device_copy(std::vector<gpu::Fp8Scale>{s0});
      auto* s = d_s->as<gpu::Fp8Scale>();
      cuda::DeviceBuffer plain(rows * cols), transposed(cols * padded);
      gpu::fp8_amax(d_x->as<uint16_t>(), rows * cols, s, nullptr);
      gpu::fp8_cast(d_x->as<uint16_t>(), rows, cols, s, current, e5m2, false, 0, plain.as<uint8_t>(), nullptr);
      gpu::fp8_cast(d_x->as<uint16_t>(), rows, cols, s, current, e5m2, true, padded, transposed.as<uint8_t>(), nullptr);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const gpu::Fp8Scale got = host_copy<gpu::Fp8Scale>(*d_s, 1)[0];
      const float amax = host_amax(x), max = e5m2 ? 57344.0f : 448.0f;
      EXPECT_EQ(got.amax, amax);
      const float scale = current ? std::min(max / amax, FLT_MAX) : s0.scale;
      EXPECT_EQ(got.scale, scale);
      EXPECT_EQ(got.descale, 1.0f / scale);
      const auto q = host_copy<uint8_t>(plain, static_cast<size_t>(rows * cols));
      const auto qt = host_copy<uint8_t>(transposed, static_cast<size_t>(cols * padded));
      int wrong = 0, wrong_t = 0;
      for (int64_t r = 0; r < padded; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          if (r >= rows) {
            wrong_t += qt[c * padded + r] != 0;
            continue;
          }
          const uint8_t want = host_code(formats::bf16_to_f32(x[r * cols + c]) * scale, e5m2);
          wrong += q[r * cols + c] != want, wrong_t += qt[c * padded + r] != want;
        }
      EXPECT_EQ(wrong, 0) << (e5m2 ? "e5m2" : "e4m3") << (current ? " current" : " delayed");
      EXPECT_EQ(wrong_t, 0) << (e5m2 ? "e5m2" : "e4m3") << (current ? " current" : " delayed") << ", transposed";
    }
}

TEST(Fp8Kernels, AnAllZeroTensorGetsScaleOne) {
  SKIP_WITHOUT_GPU(false);
  const auto d_x = device_copy(std::vector<uint16_t>(64, 0));
  const auto d_s = device_copy(std::vector<gpu::Fp8Scale>{gpu::Fp8Scale{}});
  cuda::DeviceBuffer out(64);
  gpu::fp8_amax(d_x->as<uint16_t>(), 64, d_s->as<gpu::Fp8Scale>(), nullptr);
  gpu::fp8_cast(d_x->as<uint16_t>(), 4, 16, d_s->as<gpu::Fp8Scale>(), true, false, false, 0, out.as<uint8_t>(),
                nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const gpu::Fp8Scale s = host_copy<gpu::Fp8Scale>(*d_s, 1)[0];
  EXPECT_EQ(s.amax, 0.0f);
  EXPECT_EQ(s.scale, 1.0f);
  EXPECT_EQ(s.descale, 1.0f);
}

// Random finite codes of a [rows, k] operand whose last `zero_tail` columns are zero (padding).
std::vector<uint8_t> random_codes(int64_t rows, int64_t k, bool e5m2, uint64_t seed, int64_t zero_tail = 0) {
  const auto g = normal_floats(static_cast<size_t>(rows * k), seed, 2.0f);
  std::vector<uint8_t> q(g.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < k; ++c) q[r * k + c] = c >= k - zero_tail ? 0 : host_code(g[r * k + c], e5m2);
  return q;
}
float decode(uint8_t q, bool e5m2) { return e5m2 ? formats::e5m2_to_f32(q) : formats::e4m3_to_f32(q); }

TEST(Fp8Gemm, EqualsTheProductOfTheDecodedOperands) {
  SKIP_WITHOUT_GPU(true);
  const int64_t M = 50, N = 48, K = 272;  // M arbitrary; N, K multiples of 16; K spans more than 128 (promotion)
  const float da = 0.5f, db = 0.125f;
  cuda::Stream stream;
  cuda::DeviceBuffer workspace(size_t{32} << 20);
  gpu::Fp8Gemm gemm(stream.get(), workspace.data(), workspace.size());
  const auto d_scales = device_copy(std::vector<float>{da, db});
  for (const auto& [a_e5m2, b_e5m2] : {std::pair{false, false}, std::pair{true, false}, std::pair{false, true}}) {
    const auto a = random_codes(M, K, a_e5m2, 1, 16), bt = random_codes(N, K, b_e5m2, 2);
    // Each operand also 16 bytes into its buffer (as an expert's rows start inside a tensor), not 256-aligned.
    auto shifted = [](std::vector<uint8_t> v) {
      v.insert(v.begin(), 16, 0);
      return v;
    };
    const auto d_a = device_copy(a), d_bt = device_copy(bt), d_a16 = device_copy(shifted(a)),
               d_bt16 = device_copy(shifted(bt));
    std::vector<double> ref(M * N), mag(M * N);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double s = 0, sa = 0;
        for (int64_t k = 0; k < K; ++k) {
          const double p = static_cast<double>(decode(a[m * K + k], a_e5m2)) * decode(bt[n * K + k], b_e5m2);
          s += p, sa += std::fabs(p);
        }
        ref[m * N + n] = s * da * db, mag[m * N + n] = sa * da * db;
      }
    for (bool fast : {false, true})
      for (bool c_fp32 : {true, false})
        for (int shift : {0, 16}) {
          cuda::DeviceBuffer c(static_cast<size_t>(M * N) * 4 + 16);
          const uint8_t* pa = (shift ? d_a16 : d_a)->as<uint8_t>() + shift;
          const uint8_t* pb = (shift ? d_bt16 : d_bt)->as<uint8_t>() + shift;
          gemm.run(M, N, K, {pa, K, a_e5m2, d_scales->as<float>()}, {pb, K, b_e5m2, d_scales->as<float>() + 1},
                   c.as<uint8_t>() + shift, N, c_fp32, fast);
          ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
          std::vector<float> out(M * N);
          if (c_fp32) {
            std::vector<float> all = host_copy<float>(c, out.size() + 4);
            std::copy(all.begin() + shift / 4, all.begin() + shift / 4 + static_cast<int64_t>(out.size()), out.begin());
          } else {
            const auto h = host_copy<uint16_t>(c, out.size() + 8);
            for (size_t i = 0; i < out.size(); ++i)
              out[i] = formats::bf16_to_f32(h[i + static_cast<size_t>(shift / 2)]);
          }
          int bad = 0;
          for (size_t i = 0; i < out.size(); ++i) {
            const double tol = (fast ? 1e-2 : 1e-4) * mag[i] + (c_fp32 ? 0 : 0x1p-7 * std::fabs(ref[i]));
            bad += !(std::fabs(out[i] - ref[i]) <= tol);
          }
          EXPECT_EQ(bad, 0) << "a " << (a_e5m2 ? "e5m2" : "e4m3") << ", b " << (b_e5m2 ? "e5m2" : "e4m3")
                            << (fast ? ", fast accumulation" : ", promoted") << (c_fp32 ? ", fp32 out" : ", bf16 out")
                            << (shift ? ", operands 16 bytes off 256-byte alignment" : "");
        }
  }
}

TEST(Fp8Gemm, RejectsWhatCublasLtsFp8KernelsCannotRun) {
  SKIP_WITHOUT_GPU(true);
  cuda::Stream stream;
  cuda::DeviceBuffer workspace(size_t{1} << 20), a(4096), b(4096), c(4096 * 4), s(16);
  gpu::Fp8Gemm gemm(stream.get(), workspace.data(), workspace.size());
  const float* d = s.as<float>();
  EXPECT_THROW(
      gemm.run(16, 16, 24, {a.as<uint8_t>(), 24, false, d}, {b.as<uint8_t>(), 24, false, d}, c.data(), 16, true, false),
      std::invalid_argument);  // K not a multiple of 16
  EXPECT_THROW(
      gemm.run(16, 16, 32, {a.as<uint8_t>(), 32, true, d}, {b.as<uint8_t>(), 32, true, d}, c.data(), 16, true, false),
      std::invalid_argument);  // E5M2 x E5M2
  EXPECT_THROW(gemm.run(16, 16, 32, {a.as<uint8_t>() + 1, 32, false, d}, {b.as<uint8_t>(), 32, false, d}, c.data(), 16,
                        true, false),
               std::invalid_argument);  // misaligned
}

// ------------------------------------------------------------------------------- layer vs the CPU recipe

MoeConfig fp8_config() {
  MoeConfig c;
  c.hidden = 64, c.ffn = 96, c.experts = 8, c.topk = 2, c.router = RouterKind::TopkSoftmax;
  c.shared_experts = 1, c.shared_ffn = 64, c.aux_coef = 1e-2, c.z_coef = 1e-3;
  return c;
}

struct CpuStep {
  std::vector<float> y, dx;
  MoeParams<float> grads;
};

// `steps` training steps of the CPU layer (lr 0: the weights stay) under `recipe`, the last one's numbers.
CpuStep cpu_steps(const precision::PrecisionConfig& pc, int steps, const std::vector<float>& x,
                  const std::vector<float>& dy, int64_t T, uint64_t seed) {
  const MoeConfig c = fp8_config();
  MoeLayer<float> layer(c, nullptr, 1);
  layer.init(seed);
  test::round_params(layer.params());
  precision::Precision prec(pc, 1);
  using precision::Site;
  layer.set_precision({prec.site(0, Site::ExpertFc1), prec.site(0, Site::ExpertFc2)},
                      {prec.site(0, Site::SharedFc1), prec.site(0, Site::SharedFc2)});
  CpuStep r;
  r.y.resize(x.size()), r.dx.resize(x.size());
  for (int s = 0; s < steps; ++s) {
    prec.begin_step(false);
    layer.forward(x.data(), T, r.y.data());
    layer.zero_grad();
    layer.backward(dy.data(), r.dx.data());
    prec.end_step();
  }
  r.grads = layer.grads();
  return r;
}

struct Fp8LayerCase {
  const char* name;
  precision::Recipe recipe;
  precision::Accumulate accumulate;
  int steps;  // delayed scaling: the second step quantises with the first one's amaxes
};
void PrintTo(const Fp8LayerCase& v, std::ostream* os) { *os << v.name; }

class Fp8LayerVsCpuRecipe : public testing::TestWithParam<Fp8LayerCase> {};

TEST_P(Fp8LayerVsCpuRecipe, ErrorsAreTheCpuRecipesAndAlike) {
  SKIP_WITHOUT_GPU(true);
  const Fp8LayerCase& v = GetParam();
  const MoeConfig c = fp8_config();
  const int64_t T = 256, h = c.hidden;
  const uint64_t seed = 21;
  const auto x = test::rounded(normal_floats(T * h, 5)), dy = test::rounded(normal_floats(T * h, 6));
  precision::PrecisionConfig pc;
  pc.recipe = v.recipe, pc.accumulate = v.accumulate, pc.seed = seed;
  const CpuStep exact = cpu_steps({}, v.steps, x, dy, T, seed);
  const CpuStep recipe = cpu_steps(pc, v.steps, x, dy, T, seed);

  AdamWConfig opt;
  opt.lr = 0;
  auto gpu = make_gpu_layer(c, T, seed, opt, nullptr, {}, pc);
  gpu->set_input(x, dy);
  for (int s = 1; s < v.steps; ++s) gpu->step();
  const std::vector<float> y = gpu->forward_output();
  gpu->step();

  auto check = [&](const char* what, const std::vector<float>& g, const std::vector<float>& cpu_recipe,
                   const std::vector<float>& cpu_exact) {
    const double e_recipe = rel_l2(cpu_recipe, cpu_exact), e_gpu = rel_l2(g, cpu_exact), apart = rel_l2(g, cpu_recipe);
    EXPECT_GT(e_recipe, 1e-3) << what << ": the recipe changed nothing";
    EXPECT_GT(e_gpu, 0.5 * e_recipe) << what << ": gpu " << e_gpu << ", cpu recipe " << e_recipe;
    EXPECT_LT(e_gpu, 2.0 * e_recipe) << what << ": gpu " << e_gpu << ", cpu recipe " << e_recipe;
    EXPECT_LT(apart, 0.8 * e_recipe) << what << ": gpu vs cpu recipe " << apart << ", cpu recipe " << e_recipe;
  };
  check("y", y, recipe.y, exact.y);
  check("dx", gpu->gradient("x"), recipe.dx, exact.dx);
  check("w13", gpu->gradient("w13"), recipe.grads.experts.w13, exact.grads.experts.w13);
  check("w2", gpu->gradient("w2"), recipe.grads.experts.w2, exact.grads.experts.w2);
  check("shared_w13", gpu->gradient("shared_w13"), recipe.grads.shared.w13, exact.grads.shared.w13);
  check("shared_w2", gpu->gradient("shared_w2"), recipe.grads.shared.w2, exact.grads.shared.w2);
}

INSTANTIATE_TEST_SUITE_P(
    Recipes, Fp8LayerVsCpuRecipe,
    testing::Values(Fp8LayerCase{"current_promoted", precision::Recipe::Fp8Current, precision::Accumulate::Promoted, 1},
                    Fp8LayerCase{"current_limited", precision::Recipe::Fp8Current, precision::Accumulate::Limited, 1},
                    Fp8LayerCase{"delayed_second_step", precision::Recipe::Fp8Delayed, precision::Accumulate::Promoted,
                                 2}),
    [](const testing::TestParamInfo<Fp8LayerCase>& info) { return std::string(info.param.name); });

#endif

}  // namespace
}  // namespace mlsb::moe_train
