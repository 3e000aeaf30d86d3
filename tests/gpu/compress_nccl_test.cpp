// The compress workload's collectives over NCCL through the real CLI, one rank on one GPU (MPI
// singleton bootstrap): every collective runs and reports algbw; a compressed codec is skipped with the
// reason. Skips where there is no GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "backends/cuda/device.hpp"
#include "reports/store.hpp"
#include "support/test_support.hpp"

namespace mlsb {
namespace {

TEST(GpuCompressNccl, EveryCollectiveOnOneGpu) {
  std::string why;
  if (!cuda::cuda_available(&why)) GTEST_SKIP() << why;
  test::TempDir dir;
  const auto r = test::run_shell("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 '" + test::binary().string() +
                                 "' run compress -p mode=collective -p codec=none,exponent "
                                 "-p collective=allreduce,allgather,reduce_scatter,alltoall,broadcast "
                                 "-p elements=1048576 --comm nccl --repetitions 3 --db '" + (dir / "r.db").string() + "'");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  reports::Store store((dir / "r.db").string(), /*read_only=*/true);
  const auto run = store.load_run(*store.resolve_run("latest"));
  ASSERT_EQ(run.cases.size(), 10u);
  for (const auto& c : run.cases) {
    EXPECT_EQ(c.comm, "nccl") << c.params_key;
    if (c.params["codec"] == "none") {
      EXPECT_EQ(c.status, reports::CaseStatus::Ok) << c.params_key << ": " << c.reason;
    } else {
      EXPECT_EQ(c.status, reports::CaseStatus::Skipped) << c.params_key;
      EXPECT_THAT(c.reason, ::testing::HasSubstr("codec none"));
    }
  }
}

}  // namespace
}  // namespace mlsb
