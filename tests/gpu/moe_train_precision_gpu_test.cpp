// moe_train's low-precision recipes on the cuda backend: the recipes are emulated on the CPU; the cuda layer (bf16)
// skips any other precision than fp32, naming the axis. Skips without a GPU (the runner skips cuda cases first).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "backends/cuda/device.hpp"
#include "support/test_support.hpp"

namespace mlsb {
namespace {

TEST(MoeTrainPrecisionGpu, TheCudaLayerSkipsRecipesNamingTheAxis) {
  std::string why;
  if (!cuda::cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  test::TempDir dir;
  const auto r = test::run_cli(dir / "c.db", "run moe_train.layer --backend cuda -p dtype=bf16 -p hidden=16 -p ffn=16 "
                                             "-p tokens=64 -p precision=fp32,mxfp8 --repetitions 1");
  const auto run = test::only_run(dir / "c.db");
  ASSERT_EQ(run.cases.size(), 2u) << r.out << r.err;
  for (const auto& c : run.cases) {
    if (c.params.value("precision", "") == "fp32")
      EXPECT_EQ(c.status, reports::CaseStatus::Ok) << c.reason;
    else
      EXPECT_THAT(c.reason, testing::StartsWith("precision:"));
  }
}

}  // namespace
}  // namespace mlsb
