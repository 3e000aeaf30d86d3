#pragma once
// The cuda device backend: whether a GPU can run kernels here, and the peak numbers of known GPUs
// (for MFU and bandwidth utilisation).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mlsb::cuda {

/// Peak numbers of one GPU model, from NVIDIA's datasheets (dense, i.e. without 2:4 sparsity):
///   A100 SXM4 80GB: 312 TFLOP/s bf16, no fp8,  2039 GB/s HBM2e  (NVIDIA A100 Tensor Core GPU datasheet, 2022)
///   H100 SXM5:      989 TFLOP/s bf16, 1979 fp8, 3350 GB/s HBM3  (NVIDIA H100 Tensor Core GPU datasheet; the
///                   sheet's 1979 bf16 and 3958 fp8 are with sparsity)
///   H200 SXM:       989 TFLOP/s bf16, 1979 fp8, 4800 GB/s HBM3e (NVIDIA H200 Tensor Core GPU datasheet, 2024;
///                   1979 and 3958 with sparsity)
///   B200 (HGX):    2250 TFLOP/s bf16, 4500 fp8, 8000 GB/s HBM3e (NVIDIA HGX B200 / DGX B200 datasheets: 4.5
///                   PFLOP/s bf16 and 9 PFLOP/s fp8 with sparsity per GPU)
/// GB are 10^9 bytes, TFLOP/s 10^12 floating-point operations per second.
struct DeviceSpec {
  std::string model;          ///< e.g. "H200 SXM"
  double peak_bf16_tflops;    ///< dense bf16 tensor-core peak
  double hbm_gbps;            ///< memory bandwidth, GB/s
  double peak_fp8_tflops;     ///< dense fp8 (E4M3/E5M2) tensor-core peak; 0 where the GPU has no fp8 tensor cores
};

/// All models of the table.
const std::vector<DeviceSpec>& device_table();

/// Whether CUDA's name of a device is a MIG slice of a GPU ("NVIDIA H100 80GB HBM3 MIG 1g.10gb"): it has a
/// share of the GPU's SMs and memory bandwidth, so none of the table's peaks.
bool is_mig_slice(std::string_view cuda_name);

/// The table entry for a device name as CUDA reports it ("NVIDIA H200", "NVIDIA A100-SXM4-80GB",
/// "NVIDIA H100 80GB HBM3", "NVIDIA B200"); nullopt for other models (PCIe and NVL variants, whose
/// peaks differ, included) and for MIG slices.
std::optional<DeviceSpec> lookup_device(std::string_view cuda_name);

/// True when this build has CUDA and a device can run kernels. Otherwise false, and `why` (when
/// given) says why: "built without CUDA", "no CUDA device (CUDA driver version is insufficient)", ...
/// Never throws; never needs a driver to answer. The answer is computed once per process. This is the
/// one "is there a GPU" answer: probe() (probe.hpp) lists GPUs only when it is true.
bool cuda_available(std::string* why = nullptr);

/// How many CUDA devices this process sees (CUDA_VISIBLE_DEVICES honoured); 0 when cuda_available() is false.
int device_count();

/// Names of the visible CUDA devices (ordinal order); empty when cuda_available() is false.
std::vector<std::string> device_names();
/// The PCI bus id of visible device `device` ("0000:3B:00.0"), which names one GPU across processes whatever
/// their CUDA_VISIBLE_DEVICES; "" when cuda_available() is false or the device does not exist.
std::string pci_bus_id(int device);

}  // namespace mlsb::cuda
