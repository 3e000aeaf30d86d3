// GPU state through NVML on a real GPU (backends/cuda/gpu_state.hpp): every GPU CUDA shows is read with its
// UUID and clocks, and a cuda case run by the runner records it before and after. Prints what it read
// (the gpu-check log keeps it). Skips (with the reason) where no CUDA device is present.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>

#include "backends/cuda/gpu_state.hpp"
#include "backends/cuda/probe.hpp"
#include "harness/plan.hpp"
#include "harness/registry.hpp"
#include "harness/runner.hpp"

namespace mlsb {
namespace {

#define SKIP_WITHOUT_GPU()                                                          \
  do {                                                                              \
    if (cuda::probe().gpus.empty()) GTEST_SKIP() << "no GPU: " << cuda::probe().note; \
  } while (0)

std::vector<std::string> bus_ids() {
  std::vector<std::string> ids;
  for (const auto& g : cuda::probe().gpus) ids.push_back(g.pci_bus_id);
  return ids;
}

TEST(GpuStateOnGpu, ReadsEveryVisibleGpuWithUuidAndClocks) {
  SKIP_WITHOUT_GPU();
  const auto ids = bus_ids();
  const auto t0 = std::chrono::steady_clock::now();
  const auto states = cuda::read_gpu_states(ids);
  const double first_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(states.size(), ids.size()) << "NVML did not find every CUDA device by its PCI bus id";
  for (const auto& s : states) {
    EXPECT_EQ(s.uuid.rfind("GPU-", 0), 0u) << s.uuid;
    EXPECT_EQ(s.pci_bus_id.size(), 16u) << s.pci_bus_id;  // "00000000:19:00.0", as nvidia-smi writes it
    ASSERT_TRUE(s.max_sm_clock_mhz);
    EXPECT_GT(*s.max_sm_clock_mhz, 0u);
    ASSERT_TRUE(s.sm_clock_mhz);
    EXPECT_GT(*s.sm_clock_mhz, 0u);
    EXPECT_TRUE(s.clock_event_mask) << "no clock event reasons";
    std::printf("[gpu state] %s\n", cuda::to_json(s).dump().c_str());
  }
  const auto t1 = std::chrono::steady_clock::now();
  cuda::read_gpu_states(ids);
  const double again_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t1).count();
  std::printf("[gpu state] %zu GPU(s): first read (loads NVML) %.2f ms, then %.2f ms per read\n", states.size(),
              first_ms, again_ms);
}

TEST(GpuStateOnGpu, ACudaCaseRecordsTheStateBeforeAndAfter) {
  SKIP_WITHOUT_GPU();
  CaseSpec spec;
  spec.workload = "compress.codec";
  const WorkloadInfo info = make_workload(spec.workload)->info();
  spec.params = expand_axes(info, {}).front();
  spec.params["codec"] = std::string("cast-fp16");
  spec.params["elements"] = int64_t{1} << 24;
  spec.runner = info.runner;
  spec.runner.warmup = 1;
  spec.runner.min_samples = spec.runner.max_samples = 3;
  std::atomic<bool> cancel{false};
  const reports::CaseRecord rec = run_case(spec, "cuda", 1, cancel);
  ASSERT_EQ(rec.status, reports::CaseStatus::Ok) << rec.reason;
  EXPECT_EQ(rec.backend, "cuda");
  ASSERT_TRUE(rec.gpu.contains("before")) << rec.gpu.dump();
  EXPECT_EQ(rec.gpu["before"].size(), cuda::probe().gpus.size());
  EXPECT_EQ(rec.gpu["after"].size(), cuda::probe().gpus.size());
  EXPECT_EQ(rec.gpu["before"][0]["uuid"], rec.gpu["after"][0]["uuid"]);
  EXPECT_EQ(rec.throttled, !rec.gpu["throttle_reasons"].empty());
  std::printf("[gpu state] case throttled=%d reasons=%s\n", rec.throttled, rec.gpu["throttle_reasons"].dump().c_str());
}

}  // namespace
}  // namespace mlsb

#undef SKIP_WITHOUT_GPU  // each GPU test file has its own; a unity build joins them
