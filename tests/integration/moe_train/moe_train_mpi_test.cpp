// Expert parallelism on 4 real Open MPI ranks: all-to-all dispatch verified against the per-token
// reference (remote experts included), time split into compute and communication, and E not divisible
// by the ranks skipped naming the axis; overlap=chunked bit-identical to overlap=none with its metrics, and
// a rank that dies or hangs mid-chunk ending the job; the schedule planner (moe_train.plan) run on 2 ranks,
// and its bad inputs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "reports/model.hpp"
#include "support/test_support.hpp"

namespace mlsb {
namespace {

namespace fs = std::filesystem;

using test::count;
using test::mpi_program;
using test::mpirun;
using test::shell_quote;

TEST(MoeTrainMpi, ExpertParallelLayerOnFourRanks) {
  if (test::run_shell("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed";
  test::TempDir dir;
  const auto r = test::run_cli_on_ranks(4, dir / "r.db",
                              "run moe_train "
                              "-p hidden=32 -p ffn=48 -p experts=8,6 -p tokens=200 -p router=topk_softmax,sigmoid "
                              "-p capacity_factor=0,1 --repetitions 3");
  ASSERT_EQ(r.exit_code, 0) << "experts=6 cases skip on 4 ranks, the rest pass\n" << r.out << r.err;
  const auto run = test::only_run(dir / "r.db");
  ASSERT_EQ(run.cases.size(), 8u);
  for (const auto& c : run.cases) {
    EXPECT_EQ(c.ranks, 4);
    if (c.params["experts"] == 6) {
      EXPECT_EQ(c.status, reports::CaseStatus::Skipped);
      EXPECT_THAT(c.reason, testing::HasSubstr("experts:"));
      continue;
    }
    ASSERT_EQ(c.status, reports::CaseStatus::Ok) << c.params_key << ": " << c.reason;
    bool comm = false, compute = false;
    for (const auto& s : c.summaries) {
      comm |= s.metric == "comm_ms" && s.stats.median > 0;
      compute |= s.metric == "compute_ms" && s.stats.median > 0;
    }
    EXPECT_TRUE(comm && compute) << c.params_key;
  }
}

TEST(MoeTrainMpi, ExpertParallelGradientsEqualOneRankWithEveryExpert) {
  const fs::path check = mpi_program("moe_ep_check");
  if (test::run_shell("command -v mpirun").exit_code != 0 || !fs::exists(check)) GTEST_SKIP() << "no mpirun or check";
  for (int ranks : {2, 4}) {
    const auto r = test::run_shell(mpirun(ranks, 120) + shell_quote(check));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_EQ(count(r.out, " ok router"), 3 * ranks) << r.out;
  }
}

TEST(MoeTrainMpi, ChunkedOverlapIsBitIdenticalToNoneForEveryRouterAndCapacity) {
  const fs::path check = mpi_program("moe_overlap_check");
  if (test::run_shell("command -v mpirun").exit_code != 0 || !fs::exists(check)) GTEST_SKIP() << "no mpirun or check";
  const auto r = test::run_shell(mpirun(4, 300) + shell_quote(check));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(count(r.out, " ok router"), 3 * 3 * 2 * 4) << "routers x capacity modes x token counts x ranks\n" << r.out;
}

// A rank that exits mid-chunk: mpirun ends the job. One that hangs there: its peers leave the pipeline with
// CommTimeout after the 2 s collective timeout and 2 s settling what is in flight, and exit.
TEST(MoeTrainMpi, ARankThatDiesOrHangsMidChunkEndsTheJobWithAnErrorNotAHang) {
  const fs::path check = mpi_program("moe_overlap_check");
  if (test::run_shell("command -v mpirun").exit_code != 0 || !fs::exists(check)) GTEST_SKIP() << "no mpirun or check";
  for (const std::string mode : {"die", "absent"}) {
    const auto t = test::run_timed(mpirun(4, 120) + shell_quote(check) + " " + mode);
    EXPECT_NE(t.r.exit_code, 0) << mode << "\n" << t.r.out << t.r.err;
    EXPECT_NE(t.r.exit_code, 124) << mode << ": mpirun hung\n" << t.r.out << t.r.err;
    EXPECT_EQ(count(t.r.out, "FAIL"), 0) << t.r.out;
    if (mode == "absent") {
      EXPECT_EQ(count(t.r.out, "ok CommTimeout after "), 3) << t.r.out;
    }
    EXPECT_LT(t.seconds, 20) << mode << "\n" << t.r.out << t.r.err;
  }
}

TEST(MoeTrainMpi, ChunkedOverlapRunsVerifiedAndRecordsExposedCommunication) {
  if (test::run_shell("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed";
  test::TempDir dir;
  // tokens=2: every rank receives at most a few rows, so 64 chunks outnumber them; the modelled link makes
  // every all-to-all take at least 0.2 ms.
  const auto r = test::run_cli_on_ranks(4, dir / "r.db",
                              "run moe_train.layer "
                              "-p hidden=32 -p ffn=48 -p experts=8 -p tokens=2,300 -p overlap=none,chunked "
                              "-p chunks=64 -p link_gbps=10 -p link_latency_us=200 --repetitions 2");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto run = test::only_run(dir / "r.db");
  ASSERT_EQ(run.cases.size(), 4u);
  for (const auto& c : run.cases) {
    ASSERT_EQ(c.status, reports::CaseStatus::Ok) << c.params_key << ": " << c.reason;
    std::map<std::string, double> m;
    for (const auto& s : c.summaries) m[s.metric] = s.stats.median;
    ASSERT_TRUE(m.count("exposed_comm_ms") && m.count("overlap_efficiency") && m.count("comm_ms")) << c.params_key;
    EXPECT_GE(m["comm_ms"], 4 * 0.2) << "counts, two all-to-allv per direction: each waits the modelled latency";
    EXPECT_LE(m["comm_ms"], m["step_ms"] * 1.001) << "the union of the intervals communicating, not their sum";
    EXPECT_LE(m["exposed_comm_ms"], m["comm_ms"] * 1.001);
    EXPECT_NEAR(m["compute_ms"] + m["exposed_comm_ms"], m["step_ms"], 1e-6 * m["step_ms"] + 1e-9);
    EXPECT_GE(m["overlap_efficiency"], 0);
    EXPECT_LE(m["overlap_efficiency"], 1);
    if (c.params["overlap"] == "none") {
      EXPECT_NEAR(m["overlap_efficiency"], 0, 1e-9) << "nothing is in flight outside a communication call";
    }
  }
}

TEST(MoeTrainMpi, PlanOnTwoRanksRunsItsPlanVerifiedBesideItsPrediction) {
  if (test::run_shell("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed";
  test::TempDir dir;
  // A slow modelled link (50 MB/s, 1.3 ms per all-to-all of 256 tokens) so that the schedule matters.
  const auto r = test::run_cli_on_ranks(2, dir / "r.db",
                              "run moe_train.plan -p hidden=64 -p ffn=128 -p experts=4 -p shared_experts=0,1 "
                              "-p tokens=256 -p link_gbps=0.05 -p link_latency_us=50 --repetitions 2");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto run = test::only_run(dir / "r.db");
  ASSERT_EQ(run.cases.size(), 2u);
  for (const auto& c : run.cases) {
    ASSERT_EQ(c.status, reports::CaseStatus::Ok) << c.reason;
    EXPECT_EQ(c.ranks, 2);
    const bool shared = c.params.at("shared_experts") == 1;
    std::map<std::string, double> m;
    for (const auto& s : c.summaries) m[s.metric] = s.stats.median;
    EXPECT_GT(m["step_ms"], 0);
    EXPECT_GT(m["sequential_ms"], 0);
    EXPECT_GT(m["predicted_ms"], 0);
    EXPECT_LE(m["predicted_ms"], m["predicted_sequential_ms"]) << "the sequential order is one the planner weighs";
    EXPECT_NEAR(m["prediction_error"], std::abs(m["predicted_ms"] - m["step_ms"]) / m["step_ms"], 0.5);
    std::map<std::string, nlohmann::json> items(c.items.begin(), c.items.end());
    ASSERT_TRUE(items.count("plan") && items.count("tasks/0") && items.count("tasks/1"));
    const nlohmann::json& plan = items["plan"];
    EXPECT_GE(plan["chunks"].get<int>(), 1);
    EXPECT_LE(plan["chunks"].get<int>(), 64);
    const std::string args = plan["layer_args"].get<std::string>();
    EXPECT_THAT(args, testing::StartsWith("-p overlap=chunked -p chunks="));
    EXPECT_THAT(args, testing::EndsWith(" -p link_gbps=0.05 -p link_latency_us=50")) << "the plan's own link";
    if (shared) {
      EXPECT_THAT(args, testing::HasSubstr("-p shared_slot_fwd="));
    } else {
      EXPECT_THAT(args, testing::Not(testing::HasSubstr("shared_slot"))) << "no shared experts to place";
      EXPECT_EQ(plan["shared_forward"], "no shared experts");
      EXPECT_EQ(plan["shared_slot_fwd"], -1);
      EXPECT_EQ(plan["shared_slot_bwd"], -1);
    }
    EXPECT_EQ(items["tasks/1"]["backward"]["experts_ms"].size(), 2u) << "two local experts per rank";
    EXPECT_TRUE(items.count("series/predicted_step/64"));
  }
}

TEST(MoeTrainMpi, PlanBadInputsNameTheAxis) {
  test::TempDir dir;
  const auto one = test::run_cli(dir / "r.db", "run moe_train.plan -p hidden=16 -p ffn=16 --repetitions 1");
  EXPECT_EQ(one.exit_code, 1) << "its only case skipped\n" << one.out << one.err;
  EXPECT_THAT(one.out + one.err, testing::HasSubstr("2 or more ranks")) << "one rank: skipped, saying why";
  const auto no_link = test::run_cli(dir / "r.db", "run moe_train.plan -p link_gbps=0 --dry-run");
  EXPECT_EQ(no_link.exit_code, 2);
  EXPECT_THAT(no_link.err, testing::HasSubstr("link_gbps"));
  if (test::run_shell("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed";
  const auto r =
      test::run_cli_on_ranks(2, dir / "e.db", "run moe_train.plan -p hidden=16 -p ffn=16 -p experts=1 -p topk=1 --repetitions 1");
  EXPECT_EQ(r.exit_code, 1) << "its only case skipped\n" << r.out << r.err;
  const auto run = test::only_run(dir / "e.db");
  ASSERT_EQ(run.cases.size(), 1u);
  EXPECT_EQ(run.cases[0].status, reports::CaseStatus::Skipped);
  EXPECT_THAT(run.cases[0].reason, testing::StartsWith("experts: 1 experts for 2 ranks"));
}

TEST(MoeTrainMpi, ChunkedOverlapOnOneRankRunsWithANote) {
  test::TempDir dir;
  const auto r = test::run_cli(dir / "r.db",
                               "run moe_train.layer -p hidden=16 -p ffn=16 -p tokens=64 "
                               "-p overlap=chunked -p chunks=8 --repetitions 1");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out + r.err, testing::HasSubstr("nothing is communicated"));
}

}  // namespace
}  // namespace mlsb
