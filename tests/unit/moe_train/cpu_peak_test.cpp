// The CPU GEMM peak behind mfu and expert_gemm_peak_ratio: measured at the layer's own expert GEMM shapes,
// never lowered by a second measurement, and a fraction above 1 fails verification.
#include "workloads/moe_train/cpu_peak.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include <filesystem>

#include "harness/plan.hpp"
#include "harness/registry.hpp"
#include "workloads/moe_train/flops.hpp"

namespace mlsb::moe_train {
namespace {

using ::testing::HasSubstr;

TEST(CpuPeak, ExpertShapesAreTheSixGemmsOfAnExpertAtBalancedRouting) {
  MoeConfig c;
  c.hidden = 64, c.ffn = 96, c.experts = 8, c.topk = 2;
  // 100 tokens x top-2 over 8 experts on 2 ranks: ceil(400 / 8) = 50 rows per expert.
  const auto routed = expert_gemm_shapes(c, 100, 2);
  ASSERT_EQ(routed.size(), 6u);
  EXPECT_EQ(routed[0], (cpu::GemmShape{50, 192, 64}));               // x w13
  EXPECT_EQ(routed[1], (cpu::GemmShape{50, 64, 96}));                // a w2
  EXPECT_EQ(routed[3], (cpu::GemmShape{96, 64, 50, true, false}));   // a^T dy
  EXPECT_EQ(routed[5], (cpu::GemmShape{50, 64, 192, false, true}));  // dh w13^T
  c.shared_experts = 2, c.shared_ffn = 32;
  const auto with_shared = expert_gemm_shapes(c, 100, 1);
  ASSERT_EQ(with_shared.size(), 12u);
  EXPECT_EQ(with_shared[0].m, 25);                            // ceil(200 / 8)
  EXPECT_EQ(with_shared[6], (cpu::GemmShape{100, 128, 64}));  // the shared experts, fused: f = 2 x 32
}

TEST(CpuPeak, AMeasurementIsPositiveCachedAndNeverLoweredByAnother) {
  const std::vector<cpu::GemmShape> shapes = {{64, 128, 32}, {32, 64, 128, true, false}};
  const double first = cpu::measured_gemm_peak_tflops(1, shapes);
  EXPECT_GT(first, 0);
  EXPECT_EQ(cpu::measured_gemm_peak_tflops(1, shapes), first) << "cached per thread count and shapes";
  CpuPeak peak(1, shapes, /*counting=*/false);
  const double p = peak.tflops();
  EXPECT_EQ(peak.cover(p / 2), p) << "a step below the peak leaves it alone";
  EXPECT_GE(peak.cover(p * 1e6), p) << "a step above it measures again, keeping the higher";
  // Under a counting instrument the peak is wall-clock work: never measured.
  CpuPeak counted(1, {{4096, 4096, 4096}}, /*counting=*/true);
  EXPECT_TRUE(std::isnan(counted.tflops()));
  EXPECT_TRUE(std::isnan(counted.cover(1e9)));
}

TEST(CpuPeak, AShapeWithANonPositiveDimensionIsRefused) {
  const std::vector<cpu::GemmShape> bad = {{0, 8, 8}};
  EXPECT_THAT([&] { cpu::measured_gemm_peak_tflops(1, bad); },
              ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("m=0 n=8 k=8")));
}

TEST(CpuPeak, AFractionAboveOneFailsVerification) {
  const WorkloadInfo info = make_workload("moe_train.layer")->info();
  const Params params = expand_axes(info, {{"hidden", {"16"}}}).front();
  State state(info, params, 1, std::filesystem::temp_directory_path());
  state.begin_sample(0, false);
  state.record("mfu", 0.5);
  state.record("expert_gemm_peak_ratio", 0.9);
  EXPECT_NO_THROW(verify_peak_fractions(state));
  state.begin_sample(1, false);
  state.record("mfu", 0.6);
  state.record("expert_gemm_peak_ratio", 1.27);
  EXPECT_THAT([&] { verify_peak_fractions(state); },
              ::testing::ThrowsMessage<FailCase>(HasSubstr("expert_gemm_peak_ratio is 1.270 in sample 1")));
}

}  // namespace
}  // namespace mlsb::moe_train
