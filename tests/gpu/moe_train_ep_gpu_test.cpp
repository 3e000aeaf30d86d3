// The CUDA MoE layer with expert parallelism (gpu_layer.hpp) under a real mpirun: two ranks (sharing the
// GPU where there is one) against the CPU layer, and through the CLI with both schedules and a modelled
// link, where the case's verify checks overlap=chunked against overlap=none bit for bit on the GPU; the
// same on nccl (rows between device buffers) where there are two GPUs. Skips (with the reason) without a
// GPU, two GPUs for nccl, or mpirun.
#include <gtest/gtest.h>

#include <string>

#include "backends/cuda/device.hpp"
#include "support/test_support.hpp"
#include "workloads/moe_train/gpu_layer.hpp"

namespace mlsb::moe_train {
namespace {

// Bad expert-parallel options are refused before any GPU is looked for, naming the axis.
TEST(MoeTrainGpuEp, MakeGpuLayerRejectsBadOverlapOptions) {
  MoeConfig c;
  c.hidden = 64, c.ffn = 96;
  EpOptions ep;
  ep.overlap = Overlap::Chunked, ep.chunks = 0;
  try {
    make_gpu_layer(c, 256, 1, AdamWConfig{}, nullptr, ep);
    FAIL() << "chunks=0 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("chunks"), std::string::npos) << e.what();
  }
}

// The layer against the CPU layer on two ranks (tests/mpi/moe_ep_gpu_check: 2 configurations x 2 schedules).
TEST(MoeTrainGpuEp, MatchesTheCpuLayerOnTwoRanks) {
  std::string why;
  if (!cuda::cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  if (test::run_shell("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed";
  const auto r = test::run_shell(test::mpirun(2, 300) + test::shell_quote(test::mpi_program("moe_ep_gpu_check")));
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(test::count(r.out, ": ok\n"), 8) << r.out;
}

// nccl: the rows between device buffers on NCCL's communication stream (one GPU per rank).
TEST(MoeTrainGpuEp, NcclMatchesTheCpuLayerOnTwoGpus) {
  std::string why;
  if (!cuda::cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  if (cuda::device_count() < 2) GTEST_SKIP() << "nccl needs a GPU per rank: this machine has one";
  if (test::run_shell("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed";
  const auto r =
      test::run_shell(test::mpirun(2, 300) + test::shell_quote(test::mpi_program("moe_ep_gpu_check")) + " nccl");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(test::count(r.out, ": ok\n"), 8) << r.out;
}

// Both schedules through the CLI on two ranks; verify checks chunked against none bit for bit on the GPU.
void run_both_schedules(const std::string& comm) {
  test::TempDir dir;
  const auto db = dir / "ep.db";
  const auto r = test::run_shell(test::mpirun(2, 300) + test::shell_quote(test::binary()) + " --db " +
                                 test::shell_quote(db) + " run moe_train.layer --backend cuda --comm " + comm +
                                 " -p hidden=256 -p ffn=512 -p tokens=512"
                                 " -p shared_experts=1 -p overlap=none,chunked -p chunks=3 -p link_gbps=20"
                                 " --repetitions 3");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto run = test::only_run(db);
  ASSERT_EQ(run.cases.size(), 2u);
  for (const auto& c : run.cases) {
    EXPECT_EQ(c.status, reports::CaseStatus::Ok) << c.params_key << ": " << c.reason;
    EXPECT_EQ(c.comm, comm) << c.params_key;
    for (const char* metric : {"step_ms", "comm_ms", "exposed_comm_ms", "overlap_efficiency", "dropped_fraction"})
      EXPECT_EQ(c.samples.count(metric), 1u) << c.params_key << " lacks " << metric;
  }
}

TEST(MoeTrainGpuEp, TwoRanksRunBothSchedulesAndChunkedEqualsNone) {
  std::string why;
  if (!cuda::cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  if (test::run_shell("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed";
  run_both_schedules("mpi");
}

TEST(MoeTrainGpuEp, NcclTwoGpusRunBothSchedulesAndChunkedEqualsNone) {
  std::string why;
  if (!cuda::cuda_available(&why)) GTEST_SKIP() << "no GPU: " << why;
  if (cuda::device_count() < 2) GTEST_SKIP() << "nccl needs a GPU per rank: this machine has one";
  if (test::run_shell("command -v mpirun").exit_code != 0) GTEST_SKIP() << "mpirun not installed";
  run_both_schedules("nccl");
}

}  // namespace
}  // namespace mlsb::moe_train
