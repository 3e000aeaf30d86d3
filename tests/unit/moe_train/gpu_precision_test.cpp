// What the cuda MoE layer runs of the precision axes (gpu_layer.hpp's gpu_precision_unsupported), asked without a
// GPU: the bf16 layer for fp32 and bf16, FP8 GEMMs for fp8-current and fp8-delayed (with a hardware accumulator and
// widths cuBLASLt's FP8 kernels take), and a reason naming the axis for everything else; make_gpu_layer rejects
// the same before it looks for a GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "workloads/moe_train/gpu_layer.hpp"

namespace mlsb::moe_train {
namespace {

using precision::Accumulate;
using precision::Recipe;
using testing::HasSubstr;
using testing::StartsWith;

MoeConfig config() {
  MoeConfig c;
  c.hidden = 64, c.ffn = 96, c.experts = 8, c.topk = 2;
  return c;
}

precision::PrecisionConfig with(Recipe r, Accumulate a = Accumulate::Promoted) {
  precision::PrecisionConfig p;
  p.recipe = r, p.accumulate = a;
  return p;
}

TEST(GpuPrecision, TheLayerRunsBf16AndPerTensorFp8) {
  for (Recipe r : {Recipe::Fp32, Recipe::Bf16})
    EXPECT_EQ(gpu_precision_unsupported(with(r, Accumulate::Fp32), config()), "");
  for (Recipe r : {Recipe::Fp8Current, Recipe::Fp8Delayed})
    for (Accumulate a : {Accumulate::Promoted, Accumulate::Limited}) {
      EXPECT_EQ(gpu_precision_unsupported(with(r, a), config()), "");
      EXPECT_TRUE(gpu_fp8(r));
    }
  EXPECT_FALSE(gpu_fp8(Recipe::Bf16));
  EXPECT_FALSE(gpu_fp8(Recipe::Fp8Blockwise));
}

TEST(GpuPrecision, EverythingElseGetsAReasonNamingTheAxis) {
  for (Recipe r : {Recipe::Fp8Blockwise, Recipe::Mxfp8, Recipe::Nvfp4})
    EXPECT_THAT(gpu_precision_unsupported(with(r), config()),
                StartsWith("precision: " + std::string(precision::name_of(r)) + " needs block-scaled GEMMs"));
  EXPECT_THAT(gpu_precision_unsupported(with(Recipe::Fp8Current, Accumulate::Fp32), config()),
              StartsWith("accumulate: fp32"));
  auto storage = with(Recipe::Fp32);
  storage.activation_storage = precision::ActivationStorage::Int8;
  EXPECT_THAT(gpu_precision_unsupported(storage, config()), StartsWith("activation_storage:"));
  MoeConfig c = config();
  c.ffn = 100;
  EXPECT_THAT(gpu_precision_unsupported(with(Recipe::Fp8Current), c), StartsWith("ffn: 100 is not a multiple of 16"));
  EXPECT_EQ(gpu_precision_unsupported(with(Recipe::Bf16), c), "") << "the bf16 layer takes any width";
  c = config();
  c.hidden = 72;
  EXPECT_THAT(gpu_precision_unsupported(with(Recipe::Fp8Delayed), c), StartsWith("hidden: 72"));
  c = config();
  c.shared_experts = 1, c.shared_ffn = 40;
  EXPECT_THAT(gpu_precision_unsupported(with(Recipe::Fp8Current), c), StartsWith("shared_ffn: 40"));
}

TEST(GpuPrecision, MakeGpuLayerRejectsAnUnsupportedPrecisionBeforeLookingForAGpu) {
  try {
    make_gpu_layer(config(), 256, 1, AdamWConfig{}, nullptr, {}, with(Recipe::Mxfp8));
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("precision: mxfp8"));
  }
}

}  // namespace
}  // namespace mlsb::moe_train
