// The compress workload through the real CLI: codecs on generated and file tensors, bad input,
// the cuda backend without a GPU, the planner, collectives on one rank, and `import gbench`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "reports/store.hpp"
#include "support/case_metrics.hpp"
#include "support/test_support.hpp"
#include "workloads/compress/inputs.hpp"

namespace mlsb {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

using test::shell_quote;

reports::RunData latest(const fs::path& db) {
  reports::Store store(db.string(), /*read_only=*/true);
  return store.load_run(*store.resolve_run("latest"));
}

const reports::SummaryRow* summary(const reports::CaseRecord& c, const std::string& metric) {
  return test::find_summary(c, metric);
}

std::string codec_of(const reports::CaseRecord& c) { return c.params.value("codec", std::string()); }

TEST(CompressCli, LosslessAndLossyCodecsRecordTheirMetrics) {
  test::TempDir dir;
  const auto r = test::run_cli("run compress -p codec=none,exponent,zstd,lz4,int8-block,topk -p elements=200000 "
                     "--repetitions 2 --db " + shell_quote(dir / "r.db"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run = latest(dir / "r.db");
  ASSERT_EQ(run.cases.size(), 6u);
  for (const auto& c : run.cases) {
    ASSERT_EQ(c.status, reports::CaseStatus::Ok) << codec_of(c) << ": " << c.reason;
    EXPECT_EQ(c.primary_metric, "time_ms");
    ASSERT_TRUE(summary(c, "ratio")) << codec_of(c);
    ASSERT_TRUE(summary(c, "compress_gbps")) << codec_of(c);
    if (codec_of(c) == "exponent") {
      ASSERT_TRUE(summary(c, "ratio_vs_ideal"));
      EXPECT_GT(summary(c, "ratio_vs_ideal")->stats.median, 0.95);
      EXPECT_GT(summary(c, "ratio")->stats.median, 1.4);  // bf16 Gaussian: ideal about 1.52x
      EXPECT_GT(summary(c, "break_even_gbps")->stats.median, 0);
    }
    if (codec_of(c) == "int8-block") {
      ASSERT_TRUE(summary(c, "rel_l2_error"));
      EXPECT_LT(summary(c, "rel_l2_error")->stats.median, 0.05);
      EXPECT_FALSE(summary(c, "ideal_ratio"));
    }
    if (codec_of(c) == "topk") {
      EXPECT_TRUE(summary(c, "ef_rel_l2_error"));
    }
  }
}

TEST(CompressCli, PathologicalTensorsRoundTripInEveryDtypeAndSize) {
  test::TempDir dir;
  const auto r = test::run_cli("run compress -p codec=exponent,zstd,lz4 -p distribution=pathological -p dtype=bf16,fp16,fp32 "
                     "-p elements=1,2,70001 --repetitions 1 --db " + shell_quote(dir / "r.db"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run = latest(dir / "r.db");
  EXPECT_EQ(run.cases.size(), 27u);
  for (const auto& c : run.cases) EXPECT_EQ(c.status, reports::CaseStatus::Ok) << c.params_key << ": " << c.reason;
}

// A generated tensor of no elements is an input error at plan time; an empty tensor read from a file
// round-trips, and has no compression ratio (not a ratio of 0).
TEST(CompressCli, EmptyTensorsHaveNoRatio) {
  test::TempDir dir;
  const auto zero = test::run_cli("run compress -p elements=0 --db " + shell_quote(dir / "z.db"));
  EXPECT_EQ(zero.exit_code, 2) << zero.err;
  EXPECT_THAT(zero.err, HasSubstr("elements"));
  EXPECT_FALSE(fs::exists(dir / "z.db"));

  compress::Tensor empty{"empty", compress::DType::F32, {0}, {}};
  compress::write_npy(dir / "empty.npy", empty);
  const auto r = test::run_cli("run compress -p codec=exponent,zstd -p dtype=fp32 -p tensor_file=" +
                               shell_quote(dir / "empty.npy") + " --repetitions 1 --db " + shell_quote(dir / "r.db"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run = latest(dir / "r.db");
  ASSERT_EQ(run.cases.size(), 2u);
  for (const auto& c : run.cases) {
    EXPECT_EQ(c.status, reports::CaseStatus::Ok) << c.reason;
    EXPECT_FALSE(summary(c, "ratio")) << c.params_key;
    EXPECT_TRUE(summary(c, "time_ms")) << c.params_key;
  }
}

// A file's tensor keeps its own dtype unless the run names one: the lossless round trip checks the
// file's bits; a cast is an explicit choice, and said.
// With error feedback a lossy codec's rel_l2_error is its error on its own input (x plus the residual),
// bounded for top-k by sqrt(1 - density) whatever the sample count; ef_rel_l2_error, the error of the
// running sum, shrinks as the samples go on.
TEST(CompressCli, ErrorFeedbackErrorsDoNotGrowWithTheSampleCount) {
  test::TempDir dir;
  const auto r = test::run_cli("run compress -p codec=topk -p density=0.1 -p elements=65536 --repetitions 40 --db " +
                               shell_quote(dir / "r.db"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run = latest(dir / "r.db");
  ASSERT_EQ(run.cases.size(), 1u);
  const auto& rel = run.cases[0].samples.at("rel_l2_error");
  ASSERT_EQ(rel.size(), 40u);
  for (double v : rel) EXPECT_LE(v, std::sqrt(1 - 0.1) + 1e-6);
  EXPECT_NEAR(rel.back(), rel[2], 0.1);
  const auto& ef = run.cases[0].samples.at("ef_rel_l2_error");
  EXPECT_LT(ef.back(), ef.front() / 2);
}

TEST(CompressCli, FileTensorsKeepTheirDtypeUnlessCast) {
  test::TempDir dir;
  compress::Tensor t = compress::generate("gaussian", compress::DType::F32, 4096, 0.02, 3);
  t.name = "w";
  compress::write_npy(dir / "w.npy", t);
  const auto own = test::run_cli("run compress -p codec=zstd -p tensor_file=" + shell_quote(dir / "w.npy") +
                                 " --repetitions 1 --db " + shell_quote(dir / "r.db"));
  ASSERT_EQ(own.exit_code, 0) << own.err;
  const auto run = latest(dir / "r.db");
  ASSERT_EQ(run.cases.size(), 1u);
  EXPECT_THAT(run.cases[0].reason, ::testing::Not(::testing::HasSubstr("warning")));  // no cast, no warning
  EXPECT_EQ(run.cases[0].params["dtype"], "auto");
  const auto cast = test::run_cli("run compress -p codec=zstd -p dtype=bf16 -p tensor_file=" + shell_quote(dir / "w.npy") +
                                  " --repetitions 1 --db " + shell_quote(dir / "r.db"));
  ASSERT_EQ(cast.exit_code, 0) << cast.err;
  EXPECT_THAT(latest(dir / "r.db").cases[0].reason, HasSubstr("is fp32; cast to bf16 as -p dtype asks"));
}

TEST(CompressCli, TensorFilesAreReadAndBadOnesFailTheirCaseOnly) {
  test::TempDir dir;
  compress::Tensor a = compress::generate("gaussian", compress::DType::BF16, 5000, 0.02, 1);
  a.name = "layer.weight";
  a.shape = {50, 100};
  compress::write_safetensors(dir / "good.safetensors", {a});
  // A truncated copy: the header promises more bytes than the file holds.
  const std::string good = test::read_file(dir / "good.safetensors");
  test::write_file(dir / "cut.safetensors", good.substr(0, good.size() - 100));
  test::write_file(dir / "suite.json", R"({"name": "files", "cases": [
    {"workload": "compress", "params": {"tensor_file": ")" + (dir / "cut.safetensors").string() + R"("}},
    {"workload": "compress", "params": {"tensor_file": ")" + (dir / "good.safetensors").string() +
                                           R"(", "tensor": "layer.weight"}}]})");
  const auto r = test::run_cli("run " + shell_quote(dir / "suite.json") + " --repetitions 1 --db " + shell_quote(dir / "r.db"));
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto run = latest(dir / "r.db");
  ASSERT_EQ(run.cases.size(), 2u);
  EXPECT_EQ(run.cases[0].status, reports::CaseStatus::Failed);
  EXPECT_THAT(run.cases[0].reason, HasSubstr("cut.safetensors"));
  EXPECT_EQ(run.cases[1].status, reports::CaseStatus::Ok) << run.cases[1].reason;

  const auto missing = test::run_cli("run compress -p tensor_file=" + shell_quote(dir / "nope.safetensors") + " --db " + shell_quote(dir / "m.db"));
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_THAT(missing.err, HasSubstr("nope.safetensors"));
  EXPECT_FALSE(fs::exists(dir / "m.db"));
}

TEST(CompressCli, CudaBackendWithoutAGpuSkipsWithTheReason) {
  test::TempDir dir;
  const auto r = test::run_cli("run compress -p elements=1000 --backend cuda --db " + shell_quote(dir / "r.db"));
  const auto run = latest(dir / "r.db");
  ASSERT_EQ(run.cases.size(), 1u);
  if (run.cases[0].status == reports::CaseStatus::Ok) GTEST_SKIP() << "a GPU is present";
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(run.cases[0].status, reports::CaseStatus::Skipped);
  EXPECT_THAT(run.cases[0].reason, HasSubstr("cuda"));
}

TEST(CompressCli, PlannerRecordsThePlanAndStaysWithinTheBudget) {
  test::TempDir dir;
  const auto r = test::run_cli("run compress -p mode=plan -p scale=64 -p link_gbps=12.5 -p error_budget=0,0.05 "
                     "--repetitions 1 --db " + shell_quote(dir / "r.db"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run = latest(dir / "r.db");
  ASSERT_EQ(run.cases.size(), 2u);
  for (const auto& c : run.cases) {
    ASSERT_EQ(c.status, reports::CaseStatus::Ok) << c.reason;
    std::vector<std::pair<std::string, nlohmann::json>> tensors;  // the plan's items (not the runner's batch)
    for (const auto& item : c.items)
      if (item.first != "batch") tensors.push_back(item);
    EXPECT_EQ(tensors.size(), 49u);  // gpt2-small: the embedding and 12 layers x 4 weights
    ASSERT_TRUE(summary(c, "predicted_ms"));
    const double budget = c.params["error_budget"].get<double>();
    EXPECT_LE(summary(c, "rel_l2_error")->stats.max, budget * 1.1 + 1e-9);
    if (budget == 0) {
      for (const auto& [key, item] : tensors) {
        EXPECT_THAT((std::vector<std::string>{"none", "exponent"}), ::testing::Contains(item["codec"].get<std::string>()));
      }
    }
  }
  EXPECT_GE(summary(run.cases[1], "speedup")->stats.median, summary(run.cases[0], "speedup")->stats.median * 0.9);
}

TEST(CompressCli, CollectivesOnOneRankMatchTheUncompressedOnes) {
  test::TempDir dir;
  const auto r = test::run_cli("run compress-collectives -p elements=65536 --repetitions 1 --db " + shell_quote(dir / "r.db"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run = latest(dir / "r.db");
  EXPECT_EQ(run.cases.size(), 18u);
  for (const auto& c : run.cases) {
    EXPECT_EQ(c.status, reports::CaseStatus::Ok) << c.params_key << ": " << c.reason;
    EXPECT_EQ(c.comm, "local");
    EXPECT_EQ(c.ranks, 1);
    EXPECT_TRUE(summary(c, "algbw_gbps")) << c.params_key;
  }
}

TEST(CompressCli, ImportsGoogleBenchmarkJson) {
  test::TempDir dir;
  test::write_file(dir / "gb.json", R"({
    "context": {"executable": "/x/bench_codecs", "host_name": "h", "num_cpus": 2},
    "benchmarks": [
      {"name": "BM_A/8", "run_name": "BM_A/8", "run_type": "iteration", "repetitions": 3, "repetition_index": 0,
       "iterations": 10, "real_time": 2000, "cpu_time": 1900, "time_unit": "us", "bytes_per_second": 4e9, "ratio": 1.5},
      {"name": "BM_A/8", "run_name": "BM_A/8", "run_type": "iteration", "repetitions": 3, "repetition_index": 1,
       "iterations": 10, "real_time": 2100, "cpu_time": 2000, "time_unit": "us", "bytes_per_second": 3.8e9, "ratio": 1.5},
      {"name": "BM_A/8", "run_name": "BM_A/8", "run_type": "iteration", "repetitions": 3, "repetition_index": 2,
       "iterations": 10, "real_time": 1900, "cpu_time": 1800, "time_unit": "us", "bytes_per_second": 4.2e9, "ratio": 1.5},
      {"name": "BM_A/8_mean", "run_name": "BM_A/8", "run_type": "aggregate", "aggregate_name": "mean",
       "iterations": 3, "real_time": 2000, "cpu_time": 1900, "time_unit": "us"},
      {"name": "BM_B", "run_name": "BM_B", "run_type": "iteration", "error_occurred": true,
       "error_message": "input too small", "iterations": 0, "real_time": 0, "cpu_time": 0, "time_unit": "ns"}
    ]})");
  const auto r = test::run_cli("import gbench " + shell_quote(dir / "gb.json") + " --tag micro --db " + shell_quote(dir / "r.db"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto run = latest(dir / "r.db");
  EXPECT_EQ(run.run.suite, "gbench:bench_codecs");
  EXPECT_THAT(run.run.tags, ::testing::Contains("micro"));
  ASSERT_EQ(run.cases.size(), 2u);
  const auto& a = run.cases[0];
  EXPECT_EQ(a.status, reports::CaseStatus::Ok);
  ASSERT_TRUE(summary(a, "real_time_ms"));
  EXPECT_EQ(summary(a, "real_time_ms")->stats.n, 3);
  EXPECT_DOUBLE_EQ(summary(a, "real_time_ms")->stats.median, 2.0);
  EXPECT_NEAR(summary(a, "gbps")->stats.median, 4.0, 1e-9);
  EXPECT_DOUBLE_EQ(summary(a, "ratio")->stats.median, 1.5);
  EXPECT_EQ(run.cases[1].status, reports::CaseStatus::Failed);
  EXPECT_EQ(run.cases[1].reason, "input too small");

  // Real Google Benchmark output, when the store benchmark is built.
  const fs::path bench = fs::path(MLSB_BUILD_DIR) / "reports" / "bench" / "bench_store";
  if (fs::exists(bench)) {
    const auto b = test::run_shell(shell_quote(bench) + " --benchmark_filter=RenderHtml --benchmark_repetitions=2 "
                                   "--benchmark_min_time=0.01 --benchmark_out=" + shell_quote(dir / "real.json") +
                                   " --benchmark_out_format=json > /dev/null");
    ASSERT_EQ(b.exit_code, 0) << b.err;
    const auto imp = test::run_cli("import gbench " + shell_quote(dir / "real.json") + " --db " + shell_quote(dir / "r.db"));
    ASSERT_EQ(imp.exit_code, 0) << imp.err;
    const auto real = latest(dir / "r.db");
    ASSERT_EQ(real.cases.size(), 1u);
    EXPECT_EQ(real.cases[0].status, reports::CaseStatus::Ok);
    EXPECT_EQ(summary(real.cases[0], "real_time_ms")->stats.n, 2);
  }

  test::write_file(dir / "bad.json", R"({"benchmarks": [{"name": "X", "real_time": "fast"}]})");
  const auto bad = test::run_cli("import gbench " + shell_quote(dir / "bad.json") + " --db " + shell_quote(dir / "r.db"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("real_time"));
}

}  // namespace
}  // namespace mlsb
