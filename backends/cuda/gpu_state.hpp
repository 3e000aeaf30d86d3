#pragma once
// GPU clocks, clock event (throttle) reasons, power limit, persistence, ECC and temperature read through
// NVML, loaded at run time with dlopen (no link-time dependency: without NVML or a GPU nothing is read),
// and the rule that calls a case throttled from the snapshots taken before, during and after it.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mlsb::cuda {

/// One GPU at one moment. A field NVML cannot read on this GPU (not supported, no permission) is unset.
struct GpuState {
  int cuda_index = 0;      ///< the CUDA device ordinal in this process (the order of the bus ids read)
  std::string uuid;        ///< "GPU-8c1e..."
  std::string pci_bus_id;  ///< as NVML and nvidia-smi write it, "00000000:19:00.0"
  std::string name;        ///< "NVIDIA H200"
  std::optional<unsigned> sm_clock_mhz, mem_clock_mhz;  ///< current clocks, MHz
  /// Max (boost) clocks, MHz (nvmlDeviceGetMaxClockInfo; NVML deprecates the default applications clocks in
  /// CUDA 13).
  std::optional<unsigned> max_sm_clock_mhz, max_mem_clock_mhz;
  /// nvmlDeviceGetCurrentClocksEventReasons (NVML 12.2 and later): bits named by clock_event_reason_names.
  std::optional<uint64_t> clock_event_mask;
  std::optional<double> power_limit_w;  ///< enforced power limit, W
  std::optional<bool> persistence_mode;
  std::optional<bool> ecc_enabled;          ///< current ECC mode
  std::optional<unsigned> temperature_c;  ///< GPU core temperature, °C
};

/// {"cuda_index", "uuid", "pci_bus_id", "name", "sm_clock_mhz", "mem_clock_mhz", "max_sm_clock_mhz",
/// "max_mem_clock_mhz", "clock_event_mask", "clock_event_reasons": [names], "power_limit_w",
/// "persistence_mode", "ecc_enabled", "temperature_c"}; unset fields are absent.
nlohmann::json to_json(const GpuState& s);

/// The names of the bits of a clock event mask, lowest bit first: gpu_idle, applications_clocks_setting,
/// sw_power_cap, hw_slowdown, sync_boost, sw_thermal_slowdown, hw_thermal_slowdown,
/// hw_power_brake_slowdown, display_clock_setting; a bit NVML may add later as "unknown_0x<hex>".
std::vector<std::string> clock_event_reason_names(uint64_t mask);

/// A snapshot's SM clock below this fraction of its max clock counts as throttled (the fraction is nvbench's
/// default --throttle-threshold, which nvbench applies to the default clock).
inline constexpr double kThrottleClockFraction = 0.75;
/// The pseudo-reason throttle_reasons gives for the clock rule.
inline constexpr const char* kLowSmClockReason = "sm_clock_below_75pct_of_max";

/// Why a case ran on throttled GPUs, from the snapshots taken before and after it and while its timed samples
/// ran (GpuWatch; sorted, no duplicates; empty = not throttled). A GPU in any snapshot counts as throttled when
///   - it shows a clock event reason other than gpu_idle, applications_clocks_setting and
///     display_clock_setting (those are idleness or clocks set on purpose, e.g. locked with
///     `nvidia-smi -lgc`); an unknown bit counts; or
///   - none of those three is set (busy, clocks not set on purpose) and its SM clock is below
///     kThrottleClockFraction of its max (kLowSmClockReason). A snapshot whose reasons or clocks
///     could not be read is not judged by this rule.
std::vector<std::string> throttle_reasons(const std::vector<GpuState>& before, const std::vector<GpuState>& after,
                                          const std::vector<GpuState>& during = {});

/// What a case stores (reports::CaseRecord::gpu and ::throttled).
struct CaseGpuRecord {
  /// {"before": [to_json...], "after": [...], "during": [...] (when read), "throttle_reasons": [...]}; {} when no
  /// snapshot has a GPU.
  nlohmann::json json = nlohmann::json::object();
  bool throttled = false;  ///< !throttle_reasons(before, after, during).empty()
};
CaseGpuRecord case_gpu_record(const std::vector<GpuState>& before, const std::vector<GpuState>& after,
                              const std::vector<GpuState>& during = {});

/// Of repeated reads of the same GPUs (read_gpu_states), per GPU (by bus id, in first-seen order) the most
/// throttled snapshot: the first one throttle_reasons names a reason for, else the one with the lowest SM
/// clock (relative to its max when known).
std::vector<GpuState> most_throttled(const std::vector<std::vector<GpuState>>& reads);

/// Reads the GPUs with these bus ids every `period_s` seconds on a thread of its own, from construction
/// until stop(): what a case's timed samples ran under. Before and after them a GPU is idle and its clocks
/// drop, so only these reads can show it throttling under load. stop() ends the thread and returns
/// most_throttled of the reads ({} without NVML or GPUs; no thread runs for no bus id). The caller has
/// just read the GPUs itself, so construction reads nothing. Never throws.
class GpuWatch {
 public:
  explicit GpuWatch(std::vector<std::string> pci_bus_ids, double period_s = 0.1);
  ~GpuWatch();
  GpuWatch(const GpuWatch&) = delete;
  GpuWatch& operator=(const GpuWatch&) = delete;
  std::vector<GpuState> stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Reads the GPUs with these PCI bus ids ("domain:bus:device.function" in hex, as cuda::Probe's
/// GpuInfo::pci_bus_id, in CUDA order), one GpuState each; an id NVML does not know is left out. NVML (libnvidia-ml.so.1) is loaded and
/// initialised on the first call that has a bus id, and kept for the process; when it is absent or fails
/// to initialise, that is remembered and every call returns {} at once. Thread-safe; never throws.
std::vector<GpuState> read_gpu_states(const std::vector<std::string>& pci_bus_ids);

}  // namespace mlsb::cuda
