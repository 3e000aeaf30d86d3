// The moe_train workload through the real CLI and a real SQLite store: every router variant and
// capacity mode passes its own verification, invalid combinations are skipped naming the axis, a
// diverging run fails, the LM's loss falls on real text, and its routing trace and loss curve land.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/store.hpp"
#include "support/case_metrics.hpp"
#include "support/test_support.hpp"

namespace mlsb {
namespace {

namespace fs = std::filesystem;

using test::shell_quote;


// A routing trace file: its header line, then its records.
struct TraceFile {
  nlohmann::json header;
  std::vector<nlohmann::json> records;
};
TraceFile read_trace(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  TraceFile t;
  if (std::getline(in, line)) t.header = nlohmann::json::parse(line);
  while (std::getline(in, line)) t.records.push_back(nlohmann::json::parse(line));
  return t;
}

TEST(MoeTrainCli, EveryRouterAndCapacityModeVerifies) {
  test::TempDir dir;
  const auto r = test::run_cli(dir / "r.db", "run moe_train -p hidden=32 -p ffn=48 -p tokens=256 -p experts=8 "
                                            "-p router=topk_softmax,softmax_topk,sigmoid -p capacity_factor=0,1 "
                                            "-p drop_policy=probs,position --repetitions 3");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  reports::Store store((dir / "r.db").string(), true);
  const auto run = store.load_run(store.list_runs()[0].id);
  ASSERT_EQ(run.cases.size(), 12u);
  for (const auto& c : run.cases) {
    ASSERT_EQ(c.status, reports::CaseStatus::Ok) << c.params_key << ": " << c.reason;
    for (const char* m : {"step_ms", "forward_ms", "backward_ms", "optimizer_ms", "tokens_per_s", "model_tflops",
                          "mfu", "peak_tflops", "expert_gemm_tflops", "peak_memory_mb", "load_imbalance",
                          "dropped_fraction", "aux_loss", "z_loss"})
      EXPECT_NE(test::find_summary(c, m), nullptr) << c.params_key << " lacks " << m;
    const double dropped = test::find_summary(c, "dropped_fraction")->stats.median;
    if (c.params["capacity_factor"].get<double>() == 0) {
      EXPECT_EQ(dropped, 0) << c.params_key;
    }
    EXPECT_GE(test::find_summary(c, "load_imbalance")->stats.median, 1.0);
    EXPECT_GT(test::find_summary(c, "mfu")->stats.median, 0);
    EXPECT_LE(test::find_summary(c, "mfu")->stats.max, 1) << c.params_key;  // a fraction of a measured peak
    EXPECT_LE(test::find_summary(c, "expert_gemm_peak_ratio")->stats.max, 1) << c.params_key;
  }
}

TEST(MoeTrainCli, PresetsScaleDownAndGroupLimitedRoutingRuns) {
  test::TempDir dir;
  const auto r = test::run_cli(dir / "r.db", "run moe_train -p preset=deepseek-v3,qwen3-30b-a3b -p scale=64 -p tokens=128 "
                                            "--repetitions 2");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  reports::Store store((dir / "r.db").string(), true);
  for (const auto& c : store.load_run(store.list_runs()[0].id).cases) EXPECT_EQ(c.status, reports::CaseStatus::Ok) << c.reason;
}

TEST(MoeTrainCli, InvalidCombinationsAreSkippedNamingTheAxis) {
  test::TempDir dir;
  const auto r = test::run_cli(dir / "r.db", "run moe_train -p hidden=16 -p ffn=16 -p tokens=64 -p experts=8 -p topk=9 "
                                            "--repetitions 1");
  EXPECT_EQ(r.exit_code, 1) << "every case skipped";
  reports::Store store((dir / "r.db").string(), true);
  auto run = store.load_run(store.list_runs()[0].id);
  ASSERT_EQ(run.cases.size(), 1u);
  EXPECT_EQ(run.cases[0].status, reports::CaseStatus::Skipped);
  EXPECT_THAT(run.cases[0].reason, testing::StartsWith("topk:"));

  const auto g = test::run_cli(dir / "g.db", "run moe_train -p hidden=16 -p ffn=16 -p tokens=64 -p groups=3 --repetitions 1");
  reports::Store gs((dir / "g.db").string(), true);
  run = gs.load_run(gs.list_runs()[0].id);
  EXPECT_THAT(run.cases[0].reason, testing::StartsWith("groups:"));

  const auto cf = test::run_cli(dir / "c.db", "run moe_train -p capacity_factor=-1");
  EXPECT_EQ(cf.exit_code, 2) << "a negative capacity factor is an input error";
  EXPECT_THAT(cf.err, testing::HasSubstr("capacity_factor"));

  for (const char* bad : {"chunks=0", "chunks=65", "link_gbps=-1", "link_latency_us=-2", "overlap=ring"}) {
    const auto o = test::run_cli(dir / "o.db", std::string("run moe_train.layer -p ") + bad);
    EXPECT_EQ(o.exit_code, 2) << bad << " is an input error";
    EXPECT_THAT(o.err, testing::HasSubstr(std::string(bad).substr(0, std::string(bad).find('=')))) << bad;
  }

  const auto lat = test::run_cli(dir / "l.db",
                                 "run moe_train.layer -p hidden=16 -p ffn=16 -p tokens=64 "
                                 "-p link_latency_us=5 --repetitions 1");
  EXPECT_EQ(lat.exit_code, 1) << "a latency without a bandwidth: the case is skipped";
  reports::Store ls((dir / "l.db").string(), true);
  EXPECT_THAT(ls.load_run(ls.list_runs()[0].id).cases[0].reason, testing::StartsWith("link_gbps:"));

  const auto bf = test::run_cli(dir / "b.db", "run moe_train -p hidden=16 -p ffn=16 -p tokens=64 -p dtype=bf16 --repetitions 1");
  reports::Store bs((dir / "b.db").string(), true);
  EXPECT_THAT(bs.load_run(bs.list_runs()[0].id).cases[0].reason, testing::StartsWith("dtype:"));
}

TEST(MoeTrainCli, ADivergingRunFailsInsteadOfReportingNaN) {
  test::TempDir dir;
  const auto r = test::run_cli(dir / "r.db", "run moe_train -p hidden=16 -p ffn=16 -p tokens=64 -p lr=1e20 "
                                            "--repetitions 6 --warmup 0");
  EXPECT_EQ(r.exit_code, 1);
  reports::Store store((dir / "r.db").string(), true);
  const auto c = store.load_run(store.list_runs()[0].id).cases.at(0);
  EXPECT_EQ(c.status, reports::CaseStatus::Failed);
  EXPECT_THAT(c.reason, testing::AnyOf(testing::HasSubstr("diverged"), testing::HasSubstr("non-finite")));
}

TEST(MoeTrainCli, LmLossFallsOnRealTextAndTheTraceAndCurveLand) {
  test::TempDir dir;
  const auto trace = dir / "trace.jsonl";
  const auto r = test::run_cli(dir / "r.db", "run moe_train -p mode=lm -p hidden=32 -p ffn=32 -p experts=4 -p seq=32 "
                                            "-p batch=8 -p steps=120 -p lr=1e-2 -p corpus_mb=0.5 -p trace_every=40 "
                                            "-p trace_out=" + shell_quote(trace));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  reports::Store store((dir / "r.db").string(), true);
  const auto run = store.load_run(store.list_runs()[0].id);
  const auto& c = run.cases.at(0);
  ASSERT_EQ(c.status, reports::CaseStatus::Ok) << c.reason;
  EXPECT_LT(test::find_summary(c, "final_loss")->stats.median, 0.75 * test::find_summary(c, "initial_loss")->stats.median);
  EXPECT_GT(test::find_summary(c, "initial_loss")->stats.median, 4.5) << "starts near ln 256 = 5.55";
  EXPECT_EQ(test::find_summary(c, "step_ms")->stats.n, 1) << "one sample is the whole run";
  int curve = 0;
  for (const auto& [key, item] : c.items) curve += key.rfind("series/loss/", 0) == 0;
  EXPECT_EQ(curve, 120);
  const TraceFile t = read_trace(trace);
  EXPECT_EQ(t.header["format"], "mlsysbench-routing-trace");
  EXPECT_EQ(t.header["experts"], 4);
  for (const auto& rec : t.records) EXPECT_EQ(rec["experts"].size(), 2u);
  EXPECT_EQ(t.records.size(), 3u * 2 * 8 * 32) << "steps 0, 40, 80 x 2 layers x 8 x 32 tokens";
  const auto html = test::run_cli(dir / "r.db", "report latest --format html -o " + shell_quote(dir / "r.html"));
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_THAT(test::read_file(dir / "r.html"), testing::HasSubstr("class=\"line\""));
}

TEST(MoeTrainCli, TraceOutNeverOverwritesTheStoreOrTheCorpus) {
  test::TempDir dir;
  const auto db = dir / "r.db";
  const std::string lm = "run moe_train -p mode=lm -p hidden=16 -p ffn=16 -p experts=4 -p seq=16 -p batch=2 "
                         "-p steps=5 -p corpus_mb=0.1 ";
  ASSERT_EQ(test::run_cli(db, lm + "-p trace_out=" + shell_quote(dir / "t.jsonl")).exit_code, 0);
  const auto again = test::run_cli(db, lm + "-p trace_out=" + shell_quote(db));
  EXPECT_EQ(again.exit_code, 1) << again.err;
  reports::Store store(db.string(), true);
  const auto runs = store.list_runs();
  ASSERT_EQ(runs.size(), 2u) << "the store survived";
  const auto c = store.load_run(runs[0].id).cases.at(0);
  EXPECT_EQ(c.status, reports::CaseStatus::Failed);
  EXPECT_THAT(c.reason, testing::HasSubstr("is not a routing trace; refusing to overwrite it"));
  test::write_file(dir / "corpus.txt", std::string(4000, 'a'));
  const auto corpus = test::run_cli(dir / "c.db", lm + "-p corpus=" + shell_quote(dir / "corpus.txt") + " -p trace_out=" +
                                             shell_quote(dir / "corpus.txt"));
  EXPECT_EQ(corpus.exit_code, 1);
  EXPECT_EQ(test::read_file(dir / "corpus.txt"), std::string(4000, 'a'));
  // An earlier trace is replaced, with a warning.
  const auto replace = test::run_cli(db, lm + "-p trace_out=" + shell_quote(dir / "t.jsonl"));
  EXPECT_EQ(replace.exit_code, 0);
  EXPECT_THAT(replace.err, testing::HasSubstr("replaced the earlier routing trace"));
}

TEST(MoeTrainCli, TraceEvalRecordsTheTrainedModelOnTheHeldOutBatches) {
  test::TempDir dir;
  const auto trace = dir / "t.jsonl";
  const auto r = test::run_cli(dir / "r.db", "run moe_train -p mode=lm -p hidden=16 -p ffn=16 -p experts=4 -p seq=16 "
                                            "-p batch=2 -p steps=5 -p corpus_mb=0.1 -p trace_every=100 -p trace_eval=1 "
                                            "-p trace_out=" + shell_quote(trace));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::map<int, int> per_step;
  std::set<std::tuple<int, int, int>> eval_keys;  // (seq, pos, layer) of the trained model's records
  for (const auto& rec : read_trace(trace).records) {
    ++per_step[rec["step"].get<int>()];
    if (rec["step"] == 5) eval_keys.insert({rec["seq"].get<int>(), rec["pos"].get<int>(), rec["layer"].get<int>()});
  }
  EXPECT_EQ(per_step, (std::map<int, int>{{0, 2 * 2 * 16}, {5, 8 * 2 * 2 * 16}}))
      << "step 0 (trace_every) and the 8 evaluation batches x 2 sequences x 16 bytes x 2 layers";
  EXPECT_EQ(eval_keys.size(), 512u) << "every (seq, pos, layer) once: sequences numbered across the batches";
  EXPECT_EQ(std::get<0>(*eval_keys.rbegin()), 15);
}

TEST(MoeTrainCli, AMissingCorpusIsSkippedWithTheReason) {
  test::TempDir dir;
  test::write_file(dir / "tiny.txt", "too short");
  const auto r = test::run_cli(dir / "r.db", "run moe_train -p mode=lm -p corpus=" + shell_quote(dir / "tiny.txt"));
  reports::Store store((dir / "r.db").string(), true);
  const auto c = store.load_run(store.list_runs()[0].id).cases.at(0);
  EXPECT_EQ(c.status, reports::CaseStatus::Skipped);
  EXPECT_THAT(c.reason, testing::StartsWith("corpus:"));
}

}  // namespace
}  // namespace mlsb
