// MoE Parallel Folding on 8 real Open MPI ranks: the folded block equals the one-rank block for every legal
// mapping (moe_fold_check), moe_train.block runs a folding sweep through the CLI with per-group metrics and its
// check, a modelled cluster of 2 nodes counts cross-node bytes, --dry-run prints Megatron's groups, and the bad
// mappings are errors naming the axis (at plan time) or skipped cases naming the rule (with the run's ranks).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

#include "reports/model.hpp"
#include "support/case_metrics.hpp"
#include "support/test_support.hpp"

namespace mlsb {
namespace {

namespace fs = std::filesystem;

using test::count;
using test::mpi_program;
using test::median_of;
using test::mpirun;
using test::shell_quote;
using ::testing::HasSubstr;
using ::testing::Not;

bool have_mpirun() { return test::run_shell("command -v mpirun").exit_code == 0; }

TEST(MoeTrainFold, EveryLegalMappingOfEightRanksEqualsTheOneRankBlock) {
  const fs::path check = mpi_program("moe_fold_check");
  if (!have_mpirun() || !fs::exists(check)) GTEST_SKIP() << "no mpirun or check";
  const auto r = test::run_shell(mpirun(8, 600) + shell_quote(check));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr(", 0 mismatched"));
  EXPECT_EQ(count(r.out, "MISMATCH"), 0) << r.out;
  EXPECT_GE(count(r.out, "ok dropless tp"), 30) << r.out;
  EXPECT_EQ(count(r.out, "ok dropless tp"), count(r.out, "ok dropless (allgather) tp")) << "every mapping, both dispatchers";
  EXPECT_EQ(count(r.out, "ok capacity"), 12) << r.out;
  EXPECT_GE(count(r.out, "ok empty splits (allgather)"), 1) << r.out;
}

TEST(MoeTrainFold, BlockSweepOnEightRanksWithAModelledClusterOfTwoNodes) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not installed";
  test::TempDir dir;
  const auto r = test::run_cli_on_ranks(8, dir / "r.db",
                              "run moe_train.block -p hidden=32 -p ffn=64 -p seq=32 -p batch=8 -p tp=2 "
                              "-p etp=1,2 -p ep=2,4,8 -p ranks_per_node=4 -p inter_gbps=5 --repetitions 3");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto run = test::only_run(dir / "r.db");
  ASSERT_EQ(run.cases.size(), 6u);
  for (const auto& c : run.cases) {
    if (c.params["etp"] == 2 && c.params["ep"] == 8) {
      EXPECT_EQ(c.status, reports::CaseStatus::Skipped);
      EXPECT_THAT(c.reason, HasSubstr("ep: etp x ep x pp = 16 does not divide the 8 ranks"));
      continue;
    }
    ASSERT_EQ(c.status, reports::CaseStatus::Ok) << c.params_key << ": " << c.reason;
    EXPECT_EQ(c.ranks, 8);
    EXPECT_GT(median_of(c, "step_ms"), 0);
    EXPECT_GT(median_of(c, "tp_bytes"), 0) << "the attention's all-gathers and reduce-scatters over TP";
    EXPECT_GT(median_of(c, "dp_bytes"), 0) << "the dense gradients over DP x CP";
    EXPECT_EQ(median_of(c, "cp_bytes"), 0) << "cp = 1";
    EXPECT_GT(median_of(c, "ep_bytes"), 0);
    EXPECT_GT(median_of(c, "mfu"), 0);
    const bool etp2 = c.params["etp"] == 2;
    const auto* etp = test::find_summary(c, "etp_bytes");
    EXPECT_EQ(etp && etp->stats.median > 0, etp2) << c.params_key;
    // EP groups on nodes of 4: etp 1, ep 4 -> [0..3] [4..7], inside a node (only DP x CP and EDP cross);
    // etp 1, ep 8 -> every rank, 4 of its 7 peers on the other node.
    if (!etp2 && c.params["ep"] == 4) {
      EXPECT_LE(median_of(c, "cross_node_bytes"), median_of(c, "dp_bytes") + median_of(c, "edp_bytes")) << c.params_key;
    }
    if (!etp2 && c.params["ep"] == 8) {
      EXPECT_GT(median_of(c, "cross_node_bytes"), 0.4 * median_of(c, "ep_bytes"));
    }
    EXPECT_GT(median_of(c, "cross_node_bytes"), 0) << "DP groups span both nodes";
  }
}

TEST(MoeTrainFold, PlannerRanksEveryMappingAndRunsTheBestFoldedAndLegacyOnes) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not installed";
  test::TempDir dir;
  const auto r = test::run_cli_on_ranks(8, dir / "r.db",
                                        "run moe_train.fold_plan -p hidden=32 -p ffn=64 -p seq=32 -p batch=8 -p tp=2 "
                                        "-p ranks_per_node=4 -p inter_gbps=0.05 -p plan_steps=2 --repetitions 3");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto run = test::only_run(dir / "r.db");
  ASSERT_EQ(run.cases.size(), 1u);
  const auto& c = run.cases[0];
  ASSERT_EQ(c.status, reports::CaseStatus::Ok) << c.reason;
  EXPECT_THAT(c.reason, HasSubstr("plan: 10 mappings; best predicted"));
  EXPECT_THAT(c.reason, HasSubstr("ranked by prediction, predicted -> measured ms: #1 tp2 cp1 dp4 | "));
  for (const char* m : {"step_ms", "predicted_ms", "prediction_error", "legacy_ms", "legacy_predicted_ms",
                        "folding_gain", "ranking_agreement"})
    EXPECT_GE(median_of(c, m), 0) << m;
  const nlohmann::json* ranking = nullptr;
  for (const auto& [key, item] : c.items)
    if (key == "ranking") ranking = &item;
  ASSERT_NE(ranking, nullptr);
  ASSERT_EQ(ranking->size(), 10u) << "tp 2 on 8 ranks: the 10 (etp, ep) with etp x ep | 8";
  int measured = 0, legacy_measured = 0;
  double last = 0;
  for (const auto& row : *ranking) {
    EXPECT_GE(row["predicted_ms"].get<double>(), last) << "sorted by prediction";
    last = row["predicted_ms"].get<double>();
    EXPECT_NEAR(row["predicted_ms"].get<double>(), row["base_ms"].get<double>() + row["modelled_comm_ms"].get<double>(),
                1e-6);
    if (row.contains("measured_ms")) ++measured, legacy_measured += row["legacy"].get<bool>();
  }
  EXPECT_TRUE((*ranking)[0].contains("measured_ms") && (*ranking)[2].contains("measured_ms")) << "the top three run";
  EXPECT_GE(measured, 3);
  EXPECT_LE(measured, 5);
  EXPECT_GE(legacy_measured, 1) << "the best legacy mapping runs";
}

// The emulated cluster of scripts/netns-cluster (root only): two network namespaces joined by a veth pair limited
// with tbf, Open MPI over TCP between them. A 2 x 4-rank folding case runs across it, and what the veth carried
// covers what the ranks of node 0 reported sending across nodes.
TEST(MoeTrainFold, TwoByFourRanksAcrossAnEmulatedTwoNodeCluster) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not installed";
  const std::string script = shell_quote(test::source_dir() / "scripts" / "netns-cluster");
  const auto check = test::run_shell(script + " check");
  if (check.exit_code == 77) GTEST_SKIP() << check.err;
  ASSERT_EQ(check.exit_code, 0) << check.err;
  struct Down {
    std::string script;
    ~Down() { test::run_shell(script + " down"); }
  } down{script};
  const auto up = test::run_shell(script + " up 200mbit");
  ASSERT_EQ(up.exit_code, 0) << up.out << up.err;
  test::TempDir dir;
  const auto r = test::run_shell("timeout 300 " + script + " mpirun 4 " + shell_quote(test::binary()) + " --db " +
                                 shell_quote(dir / "r.db") +
                                 " run moe_train.block -p hidden=32 -p ffn=64 -p seq=32 -p batch=8 -p tp=2 -p etp=1 "
                                 "-p ep=4 -p ranks_per_node=4 --repetitions 2");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto run = test::only_run(dir / "r.db");
  ASSERT_EQ(run.cases.size(), 1u);
  const auto& c = run.cases[0];
  ASSERT_EQ(c.status, reports::CaseStatus::Ok) << c.reason;
  EXPECT_EQ(c.ranks, 8);
  const double cross = median_of(c, "cross_node_bytes");
  EXPECT_GT(cross, 0) << "DP and EDP groups span the two nodes";
  const auto stats = test::run_shell("ip netns exec mlsb-n0 tc -s qdisc show dev v0");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(stats.out, m, std::regex("Sent ([0-9]+) bytes"))) << stats.out;
  EXPECT_GE(std::stod(m[1].str()), 4 * cross) << "node 0's 4 ranks sent at least one step's cross-node bytes over the veth";
}

TEST(MoeTrainFold, DryRunPrintsMegatronsGroups) {
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not installed";
  test::TempDir dir;
  const auto r = test::run_shell(mpirun(8, 120) + "--output-filename " + shell_quote((dir / "out").string()) + " " +
                                 shell_quote(test::binary()) + " run moe_train.block -p tp=2 -p etp=1 -p ep=4 --dry-run");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string out = test::read_file(dir / "out" / "1" / "rank.0" / "stdout");
  EXPECT_THAT(out, HasSubstr("on 8 rank(s): tp2 cp1 dp4 | etp1 ep4 edp2 (folded)"));
  EXPECT_THAT(out, HasSubstr("tp: [0,1] [2,3] [4,5] [6,7]"));
  EXPECT_THAT(out, HasSubstr("dp: [0,2,4,6] [1,3,5,7]"));
  EXPECT_THAT(out, HasSubstr("ep: [0,1,2,3] [4,5,6,7]"));
  EXPECT_THAT(out, HasSubstr("edp: [0,4] [1,5] [2,6] [3,7]"));
  EXPECT_THAT(out, HasSubstr("a sample lasts one call")) << "cases on several ranks are never batched";
  // Once, by rank 0, not once per rank.
  EXPECT_THAT(test::read_file(dir / "out" / "1" / "rank.1" / "stdout"), Not(HasSubstr("moe_train.block")));
}

TEST(MoeTrainFold, BadMappingsNameTheAxisAndTheRule) {
  test::TempDir dir;
  // Rank-independent rules: input errors at plan time (exit 2).
  for (const auto& [args, what] : std::vector<std::pair<std::string, std::string>>{
           {"-p experts=6 -p ep=4", "ep: the 6 experts do not divide by ep = 4"},
           {"-p ffn=250 -p etp=4", "etp: ffn 250 does not divide by etp = 4"},
           {"-p order=tp-cp-ep-dp-xx", "order: unknown name 'xx'"},
           {"-p order=tp-ep-pp -p cp=2", "order: 'tp-ep-pp' leaves out cp"},
           {"-p heads=3", "heads: 3 does not divide hidden 128"}}) {
    const auto r = test::run_shell(shell_quote(test::binary()) + " --db " + shell_quote(dir / "x.db") +
                                   " run moe_train.block " + args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.out << r.err;
    EXPECT_THAT(r.err, HasSubstr(what)) << args;
  }
  // Rules that need the run's ranks: skipped cases naming the rule.
  if (!have_mpirun()) GTEST_SKIP() << "mpirun not installed";
  const auto r = test::run_cli_on_ranks(4, dir / "r.db",
                              "run moe_train.block -p hidden=32 -p ffn=64 -p seq=32 -p batch=4 "
                              "-p ep=8,2 -p ranks_per_node=3,0 -p inter_gbps=1 --repetitions 2");
  const auto run = test::only_run(dir / "r.db");
  ASSERT_EQ(run.cases.size(), 4u) << r.out << r.err;
  for (const auto& c : run.cases) {
    EXPECT_EQ(c.status, reports::CaseStatus::Skipped) << c.params_key;
    EXPECT_THAT(c.reason, HasSubstr(c.params["ep"] == 8                 ? "ep: etp x ep x pp = 8 does not divide the 4 ranks"
                                    : c.params["ranks_per_node"] == 3 ? "ranks_per_node: 3 does not divide the 4 ranks"
                                                                      : "inter_gbps: a link between nodes needs two nodes"));
  }
}

}  // namespace
}  // namespace mlsb
