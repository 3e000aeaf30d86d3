// The runner's communicator and backend handling on one rank (the MPI side: tests/mpi, tests/integration/mpi).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>

#include "backends/comm/communicator.hpp"
#include "harness/progress.hpp"
#include "harness/registry.hpp"
#include "harness/runner.hpp"
#include "reports/store.hpp"
#include "support/test_support.hpp"

namespace mlsb {
namespace {

using ::testing::HasSubstr;

// Records the size of State::comm() and checks the runner gave the case its own communicator.
class CommProbe : public Workload {
 public:
  WorkloadInfo info() const override {
    WorkloadInfo i;
    i.name = "test_comm_probe";
    i.description = "records the case communicator's size";
    i.metrics = {{"ranks", "1", Better::Higher, "communicator size"}};
    i.primary_metric = "ranks";
    i.runner.warmup = 0;
    i.runner.min_samples = i.runner.max_samples = 2;
    i.runner.min_time_s = 0;
    return i;
  }
  void sample(State& s) override {
    int32_t one = 1, sum = 0;
    s.comm().allreduce(&one, &sum, 1, comm::ElemType::I32, comm::ReduceOp::Sum);
    if (s.comm().name() != "local") s.fail("expected a local communicator, got " + s.comm().name());
    s.record("ranks", sum);
  }
};
MLSB_REGISTER_WORKLOAD(CommProbe);

WorkloadInfo info_with(std::vector<std::string> backends) {
  WorkloadInfo i;
  i.name = "w";
  i.backends = std::move(backends);
  return i;
}

cuda::Probe no_gpu() {
  cuda::Probe p;
  p.note = "no CUDA driver (libcuda.so.1 not found)";
  return p;
}

cuda::Probe one_gpu() {
  cuda::Probe p;
  p.gpus.push_back({"NVIDIA H200", 141ull << 30});
  return p;
}

std::string skip_reason(const std::string& requested, const WorkloadInfo& info, const cuda::Probe& gpu) {
  try {
    resolve_backend(requested, info, gpu);
  } catch (const SkipCase& e) {
    return e.what();
  }
  return "";
}

TEST(CommRunner, AutoBackendPrefersCudaOnlyWithAGpu) {
  EXPECT_EQ(resolve_backend("auto", info_with({"cpu", "cuda"}), one_gpu()), "cuda");
  EXPECT_EQ(resolve_backend("auto", info_with({"cpu", "cuda"}), no_gpu()), "cpu");
  EXPECT_EQ(resolve_backend("auto", info_with({"cpu"}), one_gpu()), "cpu");
  EXPECT_THAT(skip_reason("auto", info_with({"cuda"}), no_gpu()), HasSubstr("libcuda.so.1 not found"));
}

TEST(CommRunner, MissingBackendsSkipWithReasons) {
  EXPECT_EQ(resolve_backend("cpu", info_with({"cpu", "cuda"}), no_gpu()), "cpu");
  EXPECT_EQ(resolve_backend("cuda", info_with({"cpu", "cuda"}), one_gpu()), "cuda");
  EXPECT_EQ(skip_reason("cuda", info_with({"cpu"}), one_gpu()), "workload w has no cuda path");
  EXPECT_EQ(skip_reason("cpu", info_with({"cuda"}), one_gpu()), "workload w has no cpu path");
  EXPECT_THAT(skip_reason("cuda", info_with({"cpu", "cuda"}), no_gpu()),
              HasSubstr("no usable GPU: no CUDA driver (libcuda.so.1 not found)"));
  cuda::Probe silent;  // no devices and no note
  EXPECT_THAT(skip_reason("cuda", info_with({"cuda"}), silent), HasSubstr("no CUDA device found"));
}

TEST(CommRunner, LocalRunGivesEachCaseALocalCommAndRecordsIt) {
  test::TempDir dir;
  reports::Store store(dir / "r.db");
  Plan plan;
  plan.suite = "unit";
  CaseSpec spec;
  spec.workload = "test_comm_probe";
  spec.runner = CommProbe().info().runner;
  plan.cases = {spec, spec};
  std::FILE* sink = std::fopen("/dev/null", "w");
  Progress progress(sink, false, std::vector<PlannedCase>(2, {"test"}));
  std::atomic<bool> interrupt{false};
  RunOptions opts;
  opts.comm = "local";
  const auto out = run_plan(plan, opts, store, progress, interrupt);
  std::fclose(sink);
  ASSERT_EQ(out.status, reports::RunStatus::Ok);
  const auto data = store.load_run(out.run_id);
  ASSERT_EQ(data.cases.size(), 2u);
  for (const auto& c : data.cases) {
    EXPECT_EQ(c.status, reports::CaseStatus::Ok) << c.reason;
    EXPECT_EQ(c.comm, "local");
    EXPECT_EQ(c.ranks, 1);
    EXPECT_EQ(c.backend, "cpu");
    EXPECT_EQ(c.samples.at("ranks"), (std::vector<double>{1, 1}));
  }
}

TEST(CommRunner, RunCommsForLocalAndUnknownKinds) {
  RunComms local = RunComms::create("local");
  EXPECT_EQ(local.cases().name(), "local");
  EXPECT_EQ(local.rank(), 0);
  EXPECT_EQ(local.world, nullptr);
  EXPECT_THROW(RunComms::create("carrier-pigeon"), std::invalid_argument);
}

TEST(CommRunner, StateOutsideTheRunnerHasALocalComm) {
  const WorkloadInfo info = CommProbe().info();
  State s(info, {}, 1, "/tmp");
  EXPECT_EQ(s.comm().name(), "local");
  EXPECT_EQ(s.comm().size(), 1);
}

}  // namespace
}  // namespace mlsb
