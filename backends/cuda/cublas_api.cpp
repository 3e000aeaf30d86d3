// cuBLAS loaded on first use (cublas_api.hpp); compiled only with CUDA.
#ifdef MLSB_HAVE_CUDA
#include "backends/cuda/cublas_api.hpp"

#include <dlfcn.h>

#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace mlsb::cuda {
namespace {

#define MLSB_NAME_OF(symbol) MLSB_NAME_OF_EXPANDED(symbol)
#define MLSB_NAME_OF_EXPANDED(symbol) #symbol

// Loads the library and every entry point, or throws; leaves nothing loaded on failure.
CublasApi load() {
  const std::string soname = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  void* lib = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  std::string why = lib ? "" : std::string(dlerror());
#ifdef MLSB_CUBLAS_LIBRARY
  if (!lib) lib = dlopen(MLSB_CUBLAS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
#endif
  if (!lib) throw std::runtime_error("cuda: cannot load cuBLAS (" + soname + "): " + why);
  CublasApi api;
  auto bind = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    if (!fn) {
      const std::string missing = name;
      dlclose(lib);
      throw std::runtime_error("cuda: " + soname + " lacks " + missing);
    }
  };
  bind(api.create, MLSB_NAME_OF(cublasCreate));
  bind(api.destroy, MLSB_NAME_OF(cublasDestroy));
  bind(api.set_stream, MLSB_NAME_OF(cublasSetStream));
  bind(api.set_math_mode, MLSB_NAME_OF(cublasSetMathMode));
  bind(api.set_workspace, MLSB_NAME_OF(cublasSetWorkspace));
  bind(api.gemm_ex, MLSB_NAME_OF(cublasGemmEx));
  bind(api.status_string, MLSB_NAME_OF(cublasGetStatusString));
  return api;  // the library stays loaded for the life of the process
}

}  // namespace

const CublasApi& cublas() {
  static std::mutex mu;
  static CublasApi api;
  static bool loaded = false;
  std::lock_guard lock(mu);
  if (!loaded) api = load(), loaded = true;
  return api;
}

}  // namespace mlsb::cuda
#endif
