// moe_train's low-precision recipes through the real CLI and a real SQLite store: a precision sweep of the LM
// trains each recipe beside an fp32 twin that is the sweep's fp32 case step for step, records the gap and the
// GEMM errors; the layer runs the accumulator models; bad recipe input is an error naming the axis (the cuda
// layer's refusal of recipes: tests/gpu/moe_train_precision_gpu_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>

#include "reports/store.hpp"
#include "support/case_metrics.hpp"
#include "support/test_support.hpp"

namespace mlsb {
namespace {

using test::find_summary;

const reports::CaseRecord& case_with(const reports::RunData& run, const std::string& precision) {
  for (const auto& c : run.cases)
    if (c.params.value("precision", "") == precision) return c;
  throw std::runtime_error("no case with precision=" + precision);
}

TEST(MoeTrainPrecision, ASweepOfTheLmTrainsEachRecipeBesideTheFp32Case) {
  test::TempDir dir;
  const auto r = test::run_cli(dir / "r.db",
                               "run moe_train.lm -p hidden=32 -p ffn=32 -p experts=4 -p seq=16 -p batch=4 -p steps=24 "
                               "-p precision=fp32,bf16,fp8-delayed,fp8-current,fp8-blockwise,mxfp8,nvfp4 "
                               "-p amax_history=16");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  reports::Store store((dir / "r.db").string(), true);
  const auto run = store.load_run(store.list_runs()[0].id);
  ASSERT_EQ(run.cases.size(), 7u);
  const auto& fp32 = case_with(run, "fp32");
  EXPECT_EQ(find_summary(fp32, "loss_gap"), nullptr) << "fp32 is the reference";
  EXPECT_EQ(find_summary(fp32, "fprop_rel_err"), nullptr);
  for (const char* name : {"bf16", "fp8-delayed", "fp8-current", "fp8-blockwise", "mxfp8", "nvfp4"}) {
    const auto& c = case_with(run, name);
    ASSERT_EQ(c.status, reports::CaseStatus::Ok) << name << ": " << c.reason;
    // The twin is the fp32 case: the same data, weights and routing seed, so final_loss - loss_gap is its final_loss.
    EXPECT_NEAR(test::median_of(c, "final_loss") - test::median_of(c, "loss_gap"), test::median_of(fp32, "final_loss"), 1e-9) << name;
    EXPECT_NEAR(test::median_of(c, "eval_loss") - test::median_of(c, "eval_loss_gap"), test::median_of(fp32, "eval_loss"), 1e-6) << name;
    EXPECT_GE(test::median_of(c, "loss_gap_max"), test::median_of(c, "loss_gap")) << name;
    EXPECT_NEAR(test::median_of(c, "loss_gap_rel"), test::median_of(c, "loss_gap") / test::median_of(fp32, "final_loss"), 1e-3) << name;
    for (const char* m : {"fprop_rel_err", "dgrad_rel_err", "wgrad_rel_err"}) {
      EXPECT_GT(test::median_of(c, m), 0) << name << " " << m;
      EXPECT_LT(test::median_of(c, m), 0.5) << name << " " << m;
    }
    EXPECT_GT(test::median_of(c, "emulation_overhead"), 0.5) << name;
    EXPECT_GT(test::median_of(c, "reference_step_ms"), 0) << name;
    int gaps = 0;
    for (const auto& [key, item] : c.items) gaps += key.rfind("series/loss_gap/", 0) == 0;
    EXPECT_EQ(gaps, 24) << name;
    std::string recipe;
    for (const auto& [key, item] : c.items)
      if (key == "gemm_error/block0.expert.fc1") recipe = item.value("recipe", "");
    EXPECT_EQ(recipe, name) << "the site's item";
  }
  // 8-bit formats store half of bf16's bytes (plus scales), 4-bit ones a quarter.
  const double bf16 = test::median_of(case_with(run, "bf16"), "activation_mb");
  EXPECT_NEAR(test::median_of(case_with(run, "fp8-current"), "activation_mb"), bf16 / 2, 0.02 * bf16);
  EXPECT_NEAR(test::median_of(case_with(run, "nvfp4"), "activation_mb"), bf16 / 4, 0.1 * bf16);
  EXPECT_GT(test::median_of(case_with(run, "fp8-delayed"), "grad_underflow"), test::median_of(case_with(run, "bf16"), "grad_underflow"));
  // The coarser the format, the larger the forward GEMMs' error.
  EXPECT_LT(test::median_of(case_with(run, "bf16"), "fprop_rel_err"), test::median_of(case_with(run, "fp8-current"), "fprop_rel_err"));
  EXPECT_LT(test::median_of(case_with(run, "fp8-blockwise"), "fprop_rel_err"), test::median_of(case_with(run, "nvfp4"), "fprop_rel_err"));
}

TEST(MoeTrainPrecision, TheLayerRunsTheAccumulatorModels) {
  test::TempDir dir;
  const auto r = test::run_cli(dir / "r.db",
                               "run moe_train.layer -p hidden=64 -p ffn=64 -p experts=4 -p tokens=512 "
                               "-p precision=fp32,fp8-blockwise -p accumulate=fp32,limited,promoted --repetitions 2");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  reports::Store store((dir / "r.db").string(), true);
  const auto run = store.load_run(store.list_runs()[0].id);
  ASSERT_EQ(run.cases.size(), 4u) << "accumulate does not apply to fp32: one case";
  std::map<std::string, double> wgrad;
  for (const auto& c : run.cases) {
    ASSERT_EQ(c.status, reports::CaseStatus::Ok) << c.params_key << ": " << c.reason;
    if (c.params.value("precision", "") == "fp32") continue;
    wgrad[c.params.value("accumulate", "")] = test::median_of(c, "wgrad_rel_err");
    int sites = 0;
    for (const auto& [key, item] : c.items) sites += key.rfind("gemm_error/", 0) == 0;
    EXPECT_EQ(sites, 2) << "the routed experts' fc1 and fc2, once per case";
    EXPECT_GT(test::median_of(c, "emulation_overhead"), 0.5);
  }
  // wgrad reduces over the tokens of an expert (hundreds): the 14-bit accumulator loses more than promotion does.
  EXPECT_GT(wgrad["limited"], wgrad["promoted"]);
  EXPECT_GE(wgrad["promoted"], 0.9 * wgrad["fp32"]);
}

TEST(MoeTrainPrecision, QuantisedActivationStorageStoresLessBesideTheTwin) {
  test::TempDir dir;
  const auto r = test::run_cli(dir / "r.db", "run moe_train.lm -p hidden=32 -p ffn=32 -p experts=4 -p seq=16 -p batch=4 "
                                             "-p steps=12 -p activation_storage=full,int8,int4");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto run = test::only_run(dir / "r.db");
  ASSERT_EQ(run.cases.size(), 3u);
  std::map<std::string, double> ratio, mb;
  for (const auto& c : run.cases) {
    ASSERT_EQ(c.status, reports::CaseStatus::Ok) << c.params_key << ": " << c.reason;
    const std::string s = c.params.value("activation_storage", "");
    EXPECT_EQ(find_summary(c, "loss_gap") != nullptr, s != "full") << s << ": the twin trains beside a quantised store";
    if (s == "full") {
      EXPECT_EQ(find_summary(c, "saved_activation_mb"), nullptr) << "full storage is the reference";
      continue;
    }
    ratio[s] = test::median_of(c, "saved_activation_ratio"), mb[s] = test::median_of(c, "saved_activation_mb");
  }
  EXPECT_LT(ratio["int4"], ratio["int8"]);
  EXPECT_LT(ratio["int8"], 0.6);
  // Both store the same tensors: their fp32 size is the same.
  EXPECT_NEAR(mb["int8"] / ratio["int8"], mb["int4"] / ratio["int4"], 1e-6 * mb["int8"] / ratio["int8"]);
}

// layer_aware with every layer type at int4 is int4, step for step; keeping the residual stream at int8 stores more,
// trains differently, and the mean width lies strictly between 4 and 8 bits.
TEST(MoeTrainPrecision, LayerAwareStorageSizesEachLayerTypeApart) {
  test::TempDir dir;
  const auto r = test::run_cli(dir / "r.db", "run moe_train.lm -p hidden=32 -p ffn=32 -p experts=4 -p seq=16 -p batch=4 "
                                             "-p steps=8 -p activation_storage=int4,layer_aware -p norm_storage=int4,int8 "
                                             "-p attention_storage=int4 -p moe_storage=int4");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto run = test::only_run(dir / "r.db");
  ASSERT_EQ(run.cases.size(), 3u) << "the per-type storages apply to layer_aware only";
  std::map<std::string, const reports::CaseRecord*> by;
  for (const auto& c : run.cases) {
    ASSERT_EQ(c.status, reports::CaseStatus::Ok) << c.params_key << ": " << c.reason;
    const std::string s = c.params.value("activation_storage", "");
    by[s == "int4" ? s : s + "/" + c.params.value("norm_storage", "")] = &c;
  }
  const auto& int4 = *by.at("int4");
  const auto& same = *by.at("layer_aware/int4");
  const auto& wider = *by.at("layer_aware/int8");
  for (const char* m : {"final_loss", "loss_gap", "saved_activation_mb", "saved_activation_bits"})
    EXPECT_EQ(test::median_of(same, m), test::median_of(int4, m)) << m;
  EXPECT_EQ(test::median_of(int4, "saved_activation_bits"), 4.0);
  const double bits = test::median_of(wider, "saved_activation_bits");
  EXPECT_GT(bits, 4.0);
  EXPECT_LT(bits, 8.0);
  EXPECT_GT(test::median_of(wider, "saved_activation_mb"), test::median_of(int4, "saved_activation_mb"));
  EXPECT_NE(test::median_of(wider, "final_loss"), test::median_of(int4, "final_loss"));
}

TEST(MoeTrainPrecision, BadRecipeInputIsAnErrorNamingTheAxis) {
  test::TempDir dir;
  for (const std::string bad :
       {"precision=fp6", "accumulate=fp22", "amax_history=0", "bf16_blocks=-2", "activation_storage=int2",
        "moe_storage=int2", "norm_storage=layer_aware"}) {
    const auto o = test::run_cli(dir / "o.db", "run moe_train.lm -p " + bad);
    EXPECT_EQ(o.exit_code, 2) << bad;
    EXPECT_THAT(o.err, testing::HasSubstr(bad.substr(0, bad.find('=')))) << bad;
  }
  const auto blocks = test::run_cli(dir / "b.db", "run moe_train.lm -p hidden=16 -p ffn=16 -p experts=4 -p seq=8 "
                                                  "-p batch=2 -p steps=2 -p precision=fp8-current -p bf16_blocks=3");
  reports::Store bs((dir / "b.db").string(), true);
  EXPECT_THAT(bs.load_run(bs.list_runs()[0].id).cases[0].reason, testing::StartsWith("bf16_blocks:"));
}

}  // namespace
}  // namespace mlsb
