// GPU state (backends/cuda/gpu_state.hpp): the clock event reason names, the throttle rule on synthetic
// snapshots (before, during and after the samples), the case record, and reading on a machine without NVML
// (the build machines).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "backends/cuda/gpu_state.hpp"
#include "backends/cuda/probe.hpp"

namespace mlsb::cuda {
namespace {

using Names = std::vector<std::string>;

constexpr uint64_t kIdle = 0x1, kAppClocks = 0x2, kSwPowerCap = 0x4, kSwThermal = 0x20, kDisplay = 0x100;

GpuState gpu(uint64_t mask, unsigned sm_mhz, unsigned max_sm_mhz = 1980) {
  GpuState s;
  s.uuid = "GPU-00000000-0000-0000-0000-000000000001";
  s.pci_bus_id = "00000000:19:00.0";
  s.name = "NVIDIA H200";
  s.clock_event_mask = mask;
  s.sm_clock_mhz = sm_mhz;
  s.max_sm_clock_mhz = max_sm_mhz;
  return s;
}

TEST(GpuState, DecodesEveryClockEventReasonBit) {
  EXPECT_EQ(clock_event_reason_names(0), Names{});
  EXPECT_EQ(clock_event_reason_names(0x1FF),
            (Names{"gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown", "sync_boost",
                   "sw_thermal_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown", "display_clock_setting"}));
  EXPECT_EQ(clock_event_reason_names(kSwThermal | kIdle), (Names{"gpu_idle", "sw_thermal_slowdown"}));
  EXPECT_EQ(clock_event_reason_names(0x400), Names{"unknown_0x400"});
}

TEST(GpuState, IdleOrClocksSetOnPurposeIsNotThrottled) {
  // An idle GPU runs far below its default clock: not a throttle.
  EXPECT_EQ(throttle_reasons({gpu(kIdle, 345)}, {gpu(kIdle, 345)}), Names{});
  // Clocks locked low on purpose (applications clocks, nvidia-smi -lgc), or limited by the display clock.
  EXPECT_EQ(throttle_reasons({gpu(kAppClocks, 1200)}, {gpu(kDisplay, 1200)}), Names{});
  const auto rec = case_gpu_record({gpu(kIdle, 345)}, {gpu(0, 1980)});
  EXPECT_FALSE(rec.throttled);
  EXPECT_EQ(rec.json["throttle_reasons"], nlohmann::json::array());
}

TEST(GpuState, AThrottleReasonInEitherSnapshotIsThrottled) {
  EXPECT_EQ(throttle_reasons({gpu(kIdle, 1980)}, {gpu(kSwThermal, 1900)}), Names{"sw_thermal_slowdown"});
  EXPECT_EQ(throttle_reasons({gpu(kSwPowerCap | kIdle, 1980)}, {}), Names{"sw_power_cap"});
  // Reasons of several GPUs and snapshots, sorted and without duplicates; an unknown bit counts.
  EXPECT_EQ(throttle_reasons({gpu(kSwThermal, 1980), gpu(0x400, 1980)}, {gpu(kSwThermal | kSwPowerCap, 1980)}),
            (Names{"sw_power_cap", "sw_thermal_slowdown", "unknown_0x400"}));
  const auto rec = case_gpu_record({gpu(kIdle, 1980)}, {gpu(kSwThermal, 1900)});
  EXPECT_TRUE(rec.throttled);
  EXPECT_EQ(rec.json["throttle_reasons"], nlohmann::json::array({"sw_thermal_slowdown"}));
}

TEST(GpuState, ASmClockBelow75PercentOfDefaultIsThrottled) {
  EXPECT_EQ(throttle_reasons({}, {gpu(0, 600, 1000)}), Names{kLowSmClockReason});   // 60%, no reason
  EXPECT_EQ(throttle_reasons({gpu(0, 600, 1000)}, {}), Names{kLowSmClockReason});   // before counts too
  EXPECT_EQ(throttle_reasons({gpu(0, 800, 1000)}, {gpu(0, 800, 1000)}), Names{});  // 80%
  EXPECT_EQ(throttle_reasons({}, {gpu(0, 750, 1000)}), Names{});                    // the bound itself
  // Not judged without the reasons (idle unknown) or without a default clock.
  GpuState no_mask = gpu(0, 300, 1000);
  no_mask.clock_event_mask.reset();
  GpuState no_max = gpu(0, 300, 1000);
  no_max.max_sm_clock_mhz.reset();
  EXPECT_EQ(throttle_reasons({no_mask}, {no_max}), Names{});
}

TEST(GpuState, NoGpuGivesAnEmptyRecord) {
  EXPECT_EQ(throttle_reasons({}, {}), Names{});
  const auto rec = case_gpu_record({}, {});
  EXPECT_FALSE(rec.throttled);
  EXPECT_EQ(rec.json, nlohmann::json::object());
}

TEST(GpuState, RecordKeepsBothSnapshotsWithUnitsAndOmitsUnreadFields) {
  GpuState s = gpu(kIdle | kSwPowerCap, 1755);
  s.mem_clock_mhz = 3201;
  s.max_mem_clock_mhz = 3201;
  s.power_limit_w = 700;
  s.persistence_mode = true;
  s.ecc_enabled = true;
  s.temperature_c = 41;
  const auto rec = case_gpu_record({s}, {gpu(0, 1980)});
  const auto& before = rec.json["before"][0];
  EXPECT_EQ(before["uuid"], s.uuid);
  EXPECT_EQ(before["pci_bus_id"], "00000000:19:00.0");
  EXPECT_EQ(before["sm_clock_mhz"], 1755);
  EXPECT_EQ(before["max_sm_clock_mhz"], 1980);
  EXPECT_EQ(before["mem_clock_mhz"], 3201);
  EXPECT_EQ(before["clock_event_mask"], 5);
  EXPECT_EQ(before["clock_event_reasons"], nlohmann::json::array({"gpu_idle", "sw_power_cap"}));
  EXPECT_EQ(before["power_limit_w"], 700.0);
  EXPECT_EQ(before["persistence_mode"], true);
  EXPECT_EQ(before["ecc_enabled"], true);
  EXPECT_EQ(before["temperature_c"], 41);
  const auto& after = rec.json["after"][0];
  EXPECT_FALSE(after.contains("power_limit_w"));
  EXPECT_FALSE(after.contains("temperature_c"));
  EXPECT_EQ(rec.json["throttle_reasons"], nlohmann::json::array({"sw_power_cap"}));
}

TEST(GpuState, AThrottleSeenOnlyWhileTheSamplesRanCounts) {
  // Idle before and after (low clocks, gpu_idle), thermally slowed under load: only the reads during show it.
  const auto rec = case_gpu_record({gpu(kIdle, 345)}, {gpu(kIdle, 345)}, {gpu(kSwThermal, 1500)});
  EXPECT_TRUE(rec.throttled);
  EXPECT_EQ(rec.json["throttle_reasons"], nlohmann::json::array({"sw_thermal_slowdown"}));
  ASSERT_TRUE(rec.json.contains("during"));
  EXPECT_EQ(rec.json["during"][0]["sm_clock_mhz"], 1500);
  EXPECT_FALSE(case_gpu_record({gpu(kIdle, 345)}, {gpu(kIdle, 345)}).json.contains("during"));
  EXPECT_TRUE(case_gpu_record({}, {}, {gpu(0, 600, 1000)}).throttled);  // 60% of the default, busy
}

TEST(GpuState, MostThrottledKeepsEachGpusThrottledOrSlowestRead) {
  auto other = [](uint64_t mask, unsigned mhz) {
    GpuState s = gpu(mask, mhz);
    s.pci_bus_id = "00000000:2A:00.0";
    return s;
  };
  const auto worst = most_throttled({{gpu(0, 1980), other(0, 1980)},
                                     {gpu(0, 1700), other(kSwThermal, 1900)},
                                     {gpu(0, 1800), other(0, 1200)}});
  ASSERT_EQ(worst.size(), 2u);
  EXPECT_EQ(worst[0].sm_clock_mhz, 1700u);  // the slowest, none throttled
  EXPECT_EQ(worst[1].clock_event_mask, kSwThermal);  // throttled beats slower but unthrottled
  EXPECT_TRUE(most_throttled({}).empty());
}

TEST(GpuState, AWatchWithoutNvmlOrAGpuReadsNothing) {
  if (!probe().gpus.empty()) GTEST_SKIP() << "a GPU is present (tests/gpu reads it)";
  GpuWatch watch({"0000:19:00.0"}, 0.001);
  EXPECT_TRUE(watch.stop().empty());
  EXPECT_TRUE(watch.stop().empty());  // stopping twice is harmless
}

TEST(GpuState, ReadingWithoutNvmlOrAGpuIsEmptyAndCheap) {
  if (!probe().gpus.empty()) GTEST_SKIP() << "a GPU is present (tests/gpu reads it)";
  EXPECT_TRUE(read_gpu_states({}).empty());
  // A bus id (or none) with no NVML or no such GPU behind it: nothing, and the failure is remembered.
  EXPECT_TRUE(read_gpu_states({"", "not a bus id"}).empty());
  EXPECT_TRUE(read_gpu_states({"0000:19:00.0"}).empty());
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) EXPECT_TRUE(read_gpu_states({"0000:19:00.0"}).empty());
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.05);
}

}  // namespace
}  // namespace mlsb::cuda
