#include "backends/cuda/device.hpp"

#ifdef MLSB_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace mlsb::cuda {
namespace {

/// A table row: the spec and how CUDA names the model (all `need` substrings, none of `avoid`).
struct Row {
  DeviceSpec spec;
  std::vector<std::string_view> need;
  std::vector<std::string_view> avoid;
};

const std::vector<Row>& rows() {
  static const std::vector<Row> table = {
      {{"A100 SXM4 80GB", 312, 2039, 0}, {"A100-SXM4-80GB"}, {}},
      {{"H100 SXM5", 989, 3350, 1979}, {"H100", "HBM3"}, {"PCIe", "NVL", "GH"}},
      {{"H200 SXM", 989, 4800, 1979}, {"H200"}, {"NVL", "GH200"}},
      {{"B200", 2250, 8000, 4500}, {"B200"}, {"GB200"}},
  };
  return table;
}

bool matches(const Row& row, std::string_view name) {
  for (auto s : row.need)
    if (name.find(s) == std::string_view::npos) return false;
  for (auto s : row.avoid)
    if (name.find(s) != std::string_view::npos) return false;
  return true;
}

struct Availability {
  bool ok = false;
  std::string why;
};

Availability probe_runtime() {
#ifndef MLSB_HAVE_CUDA
  return {false, "built without CUDA"};
#else
  int n = 0;
  if (const cudaError_t err = cudaGetDeviceCount(&n); err != cudaSuccess) {
    cudaGetLastError();  // clear the error so later runtime calls start clean
    return {false, std::string("no CUDA device (") + cudaGetErrorString(err) + ")"};
  }
  if (n == 0) return {false, "no CUDA device"};
  cudaDeviceProp prop{};
  if (const cudaError_t err = cudaGetDeviceProperties(&prop, 0); err != cudaSuccess) {
    cudaGetLastError();
    return {false, std::string("CUDA device 0 unusable (") + cudaGetErrorString(err) + ")"};
  }
  if (prop.major < 8)  // the kernels are built for sm_80 and sm_90 (+ PTX), so older GPUs cannot run them
    return {false, std::string("GPU ") + prop.name + " (compute capability " + std::to_string(prop.major) + "." +
                       std::to_string(prop.minor) + ") is older than the build's sm_80"};
  return {true, ""};
#endif
}

}  // namespace

bool is_mig_slice(std::string_view cuda_name) { return cuda_name.find(" MIG ") != std::string_view::npos; }

const std::vector<DeviceSpec>& device_table() {
  static const std::vector<DeviceSpec> specs = [] {
    std::vector<DeviceSpec> v;
    for (const auto& r : rows()) v.push_back(r.spec);
    return v;
  }();
  return specs;
}

std::optional<DeviceSpec> lookup_device(std::string_view cuda_name) {
  if (is_mig_slice(cuda_name)) return std::nullopt;  // a share of the GPU's SMs: not the whole GPU's peak
  for (const auto& r : rows())
    if (matches(r, cuda_name)) return r.spec;
  return std::nullopt;
}

bool cuda_available(std::string* why) {
  static const Availability a = probe_runtime();
  if (why) *why = a.why;
  return a.ok;
}

int device_count() {
  int n = 0;
#ifdef MLSB_HAVE_CUDA
  if (cuda_available() && cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
#endif
  return n;
}

std::vector<std::string> device_names() {
  std::vector<std::string> names;
#ifdef MLSB_HAVE_CUDA
  const int n = device_count();
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp prop{};
    names.push_back(cudaGetDeviceProperties(&prop, i) == cudaSuccess ? prop.name : "?");
  }
#endif
  return names;
}

std::string pci_bus_id(int device) {
#ifdef MLSB_HAVE_CUDA
  char id[32] = {};
  if (cuda_available() && cudaDeviceGetPCIBusId(id, sizeof id, device) == cudaSuccess) return id;
#else
  (void)device;
#endif
  return "";
}

}  // namespace mlsb::cuda
