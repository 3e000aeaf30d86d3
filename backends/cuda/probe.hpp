#pragma once
// Run-time probe of the CUDA driver, runtime and NCCL, loaded with dlopen so the binary runs (and
// reports "no GPU") on machines without a driver.
#include <cstdint>
#include <string>
#include <vector>

namespace mlsb::cuda {

struct GpuInfo {
  std::string name;
  uint64_t memory_bytes = 0;
  std::string pci_bus_id = {};  ///< "0000:19:00.0" (cuDeviceGetPCIBusId); how NVML finds this GPU
};

struct Probe {
  std::string driver_version;   ///< e.g. "13.0"; empty when libcuda is absent
  std::string runtime_version;  ///< the version of the cudart this binary links; empty when built without CUDA
  std::string nccl_version;     ///< e.g. "2.28.9"; empty when libnccl is absent
  std::vector<GpuInfo> gpus;    ///< empty without a usable device (cuda_available(), device.hpp, false)
  std::string note;             ///< why there are no GPUs (e.g. "libcuda.so.1 not found"), else empty
};

/// Probes once per call; never throws.
Probe probe();

}  // namespace mlsb::cuda
