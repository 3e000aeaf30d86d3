#include "backends/cuda/probe.hpp"

#include <dlfcn.h>

#ifdef MLSB_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include <initializer_list>

#include "backends/cuda/device.hpp"

namespace mlsb::cuda {
namespace {

void* open_first(std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (void* h = dlopen(n, RTLD_NOW | RTLD_LOCAL)) return h;
  return nullptr;
}

template <typename F>
F sym(void* lib, const char* name) {
  return lib ? reinterpret_cast<F>(dlsym(lib, name)) : nullptr;
}

std::string major_minor(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

}  // namespace

Probe probe() {
  Probe p;
#ifdef MLSB_HAVE_CUDA
  // The runtime this binary is linked against, not the first libcudart the loader finds (a machine with
  // several toolkits may have another one first on its path).
  if (int v = 0; cudaRuntimeGetVersion(&v) == cudaSuccess) p.runtime_version = major_minor(v);
#endif
  void* nccl = open_first({"libnccl.so.2", "libnccl.so", "/usr/local/cuda/lib64/libnccl.so.2"});
  if (auto get = sym<int (*)(int*)>(nccl, "ncclGetVersion")) {
    int v = 0;  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch
    if (get(&v) == 0)
      p.nccl_version = std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
  }
  void* cuda = open_first({"libcuda.so.1", "libcuda.so"});
  if (!cuda) {
    p.note = "no CUDA driver (libcuda.so.1 not found)";
    return p;
  }
  using InitFn = int (*)(unsigned);
  using IntOutFn = int (*)(int*);
  using GetFn = int (*)(int*, int);
  using NameFn = int (*)(char*, int, int);
  using MemFn = int (*)(size_t*, int);
  using BusIdFn = int (*)(char*, int, int);
  auto init = sym<InitFn>(cuda, "cuInit");
  auto driver_version = sym<IntOutFn>(cuda, "cuDriverGetVersion");
  auto count = sym<IntOutFn>(cuda, "cuDeviceGetCount");
  auto get = sym<GetFn>(cuda, "cuDeviceGet");
  auto name = sym<NameFn>(cuda, "cuDeviceGetName");
  auto mem = sym<MemFn>(cuda, "cuDeviceTotalMem_v2");
  auto bus_id = sym<BusIdFn>(cuda, "cuDeviceGetPCIBusId");  // optional: only the GPU state needs it
  int v = 0;
  if (driver_version && driver_version(&v) == 0) p.driver_version = major_minor(v);
  if (!init || !count || !get || !name || !mem) {
    p.note = "CUDA driver lacks the expected entry points";
    return p;
  }
  if (const int rc = init(0); rc != 0) {
    p.note = "cuInit failed (error " + std::to_string(rc) + "): no usable GPU";
    return p;
  }
  int n = 0;
  if (count(&n) != 0 || n == 0) {
    p.note = "no CUDA device";
    return p;
  }
  for (int i = 0; i < n; ++i) {
    int dev = 0;
    char buf[256] = {};
    size_t bytes = 0;
    if (get(&dev, i) != 0) continue;
    name(buf, sizeof buf, dev);
    mem(&bytes, dev);
    char bus[32] = {};
    if (bus_id) bus_id(bus, sizeof bus, dev);
    p.gpus.push_back({buf, bytes, bus});
  }
  // The driver sees GPUs; whether this build can run kernels on them is cuda_available()'s answer.
  if (std::string why; !p.gpus.empty() && !cuda_available(&why)) {
    p.gpus.clear();
    p.note = why;
  }
  return p;
}

}  // namespace mlsb::cuda
