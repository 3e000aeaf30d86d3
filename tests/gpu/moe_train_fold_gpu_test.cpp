// The folded block on GPUs (workloads/moe_train/fold/gpu_block.hpp) under a real mpirun: four ranks sharing the GPU
// (mpi, tensors through pinned host memory) against the one-rank CPU block on every legal mapping, the same over
// nccl group communicators where there are two GPUs, and moe_train.block through the CLI on the cuda backend, whose
// verify checks every case against the CPU block. Skips (with the reason) without a GPU, two GPUs for nccl, or
// mpirun.
#include <gtest/gtest.h>

#include <string>

#include "backends/cuda/device.hpp"
#include "support/test_support.hpp"
#include "workloads/moe_train/fold/gpu_block.hpp"

namespace mlsb::moe_train::fold {
namespace {

// Rank-independent bad input is refused before any GPU is looked for, naming the axis.
TEST(MoeTrainFoldGpu, MakeGpuBlockRefusesTheAllGatherDispatcher) {
  BlockConfig c;
  c.moe.hidden = 16, c.moe.ffn = 16, c.moe.experts = 4, c.moe.topk = 2, c.moe.aux_coef = 0, c.moe.z_coef = 0;
  c.dispatcher = Dispatcher::AllGather;
  const Mapping m = make_mapping(1, 1, 1, 1, 1, 1, std::string(kDefaultOrder));
  const Groups g = make_groups(m);
  RankComms comms;
  try {
    make_gpu_block(c, m, g, comms, 0, init_block(c, 1));
    FAIL() << "the all-gather dispatcher accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dispatcher"), std::string::npos) << e.what();
  }
}

TEST(MoeTrainFoldGpu, MatchesTheCpuBlockOnFourRanksSharingTheGpu) {
  std::string why;
  if (!cuda::cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  if (test::run_shell("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed";
  const auto r = test::run_shell(test::mpirun(4, 300) + test::shell_quote(test::mpi_program("moe_fold_gpu_check")));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(" 0 mismatched"), std::string::npos) << r.out;
  EXPECT_EQ(test::count(r.out, "MISMATCH"), 0) << r.out;
}

TEST(MoeTrainFoldGpu, NcclMatchesTheCpuBlockOnTwoGpus) {
  std::string why;
  if (!cuda::cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  if (cuda::device_count() < 2) GTEST_SKIP() << "nccl needs a GPU per rank: this machine has one";
  if (test::run_shell("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed";
  const auto r =
      test::run_shell(test::mpirun(2, 300) + test::shell_quote(test::mpi_program("moe_fold_gpu_check")) + " nccl");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find(" 0 mismatched"), std::string::npos) << r.out;
}

// The CLI on the cuda backend: every case ok (verify compares with the CPU block), per-group metrics recorded, and the
// all-gather dispatcher skipped naming the axis.
TEST(MoeTrainFoldGpu, BlockBenchmarkOnFourRanksSharingTheGpu) {
  std::string why;
  if (!cuda::cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  if (test::run_shell("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed";
  test::TempDir dir;
  const auto db = dir / "fold.db";
  const auto r = test::run_shell(test::mpirun(4, 300) + test::shell_quote(test::binary()) + " --db " +
                                 test::shell_quote(db) +
                                 " run moe_train.block --backend cuda --comm mpi -p tp=2 -p etp=1,2 -p ep=2"
                                 " -p dispatcher=alltoall,allgather -p ranks_per_node=2 -p inter_gbps=5 --max-time 2");
  const auto run = test::only_run(db);
  ASSERT_EQ(run.cases.size(), 4u) << r.out << r.err;
  int ok = 0, skipped = 0;
  for (const auto& c : run.cases) {
    if (c.params_key.find("allgather") != std::string::npos) {
      EXPECT_EQ(c.status, reports::CaseStatus::Skipped) << c.params_key;
      EXPECT_NE(c.reason.find("dispatcher"), std::string::npos) << c.reason;
      ++skipped;
      continue;
    }
    EXPECT_EQ(c.status, reports::CaseStatus::Ok) << c.params_key << ": " << c.reason;
    for (const char* metric : {"step_ms", "ep_bytes", "tp_comm_ms", "cross_node_bytes", "model_tflops"})
      EXPECT_EQ(c.samples.count(metric), 1u) << c.params_key << " lacks " << metric;
    ++ok;
  }
  EXPECT_EQ(ok, 2);
  EXPECT_EQ(skipped, 2);
}

}  // namespace
}  // namespace mlsb::moe_train::fold
