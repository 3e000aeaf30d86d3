// cuBLAS and cuBLASLt loaded on first use (cublas_api.hpp); compiled only with CUDA.
#ifdef MLSB_HAVE_CUDA
#include "backends/cuda/cublas_api.hpp"

#include <dlfcn.h>

#include <mutex>
#include <stdexcept>
#include <string>

namespace mlsb::cuda {
namespace {

#define MLSB_NAME_OF(symbol) MLSB_NAME_OF_EXPANDED(symbol)
#define MLSB_NAME_OF_EXPANDED(symbol) #symbol

/// An opened library whose entry points bind() looks up; it closes the library unless keep() is called, so a
/// failed load leaves nothing loaded.
class Library {
 public:
  /// Library `name` ("cuBLAS"): `soname` from the loader's search path, else `fallback` (a path, or nullptr);
  /// throws naming the library.
  Library(const char* name, std::string soname, const char* fallback) : soname_(std::move(soname)) {
    lib_ = dlopen(soname_.c_str(), RTLD_NOW | RTLD_LOCAL);
    const std::string why = lib_ ? "" : std::string(dlerror());
    if (!lib_ && fallback) lib_ = dlopen(fallback, RTLD_NOW | RTLD_LOCAL);
    if (!lib_) throw std::runtime_error(std::string("cuda: cannot load ") + name + " (" + soname_ + "): " + why);
  }
  ~Library() {
    if (lib_) dlclose(lib_);
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  template <typename Fn>
  void bind(Fn& fn, const char* name) {
    fn = reinterpret_cast<Fn>(dlsym(lib_, name));
    if (!fn) throw std::runtime_error("cuda: " + soname_ + " lacks " + name);
  }
  void keep() { lib_ = nullptr; }  // loaded for the life of the process

 private:
  std::string soname_;
  void* lib_ = nullptr;
};

#ifdef MLSB_CUBLAS_LIBRARY
constexpr const char* kCublasFile = MLSB_CUBLAS_LIBRARY;
#else
constexpr const char* kCublasFile = nullptr;
#endif
#ifdef MLSB_CUBLASLT_LIBRARY
constexpr const char* kCublasLtFile = MLSB_CUBLASLT_LIBRARY;
#else
constexpr const char* kCublasLtFile = nullptr;
#endif

CublasApi load_cublas() {
  Library lib("cuBLAS", "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR), kCublasFile);
  CublasApi api;
  lib.bind(api.create, MLSB_NAME_OF(cublasCreate));
  lib.bind(api.destroy, MLSB_NAME_OF(cublasDestroy));
  lib.bind(api.set_stream, MLSB_NAME_OF(cublasSetStream));
  lib.bind(api.set_math_mode, MLSB_NAME_OF(cublasSetMathMode));
  lib.bind(api.set_workspace, MLSB_NAME_OF(cublasSetWorkspace));
  lib.bind(api.gemm_ex, MLSB_NAME_OF(cublasGemmEx));
  lib.bind(api.status_string, MLSB_NAME_OF(cublasGetStatusString));
  lib.keep();
  return api;
}

CublasLtApi load_cublaslt() {
  Library lib("cuBLASLt", "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR), kCublasLtFile);
  CublasLtApi api;
  lib.bind(api.create, "cublasLtCreate");
  lib.bind(api.destroy, "cublasLtDestroy");
  lib.bind(api.desc_create, "cublasLtMatmulDescCreate");
  lib.bind(api.desc_destroy, "cublasLtMatmulDescDestroy");
  lib.bind(api.desc_set, "cublasLtMatmulDescSetAttribute");
  lib.bind(api.layout_create, "cublasLtMatrixLayoutCreate");
  lib.bind(api.layout_destroy, "cublasLtMatrixLayoutDestroy");
  lib.bind(api.preference_create, "cublasLtMatmulPreferenceCreate");
  lib.bind(api.preference_destroy, "cublasLtMatmulPreferenceDestroy");
  lib.bind(api.preference_set, "cublasLtMatmulPreferenceSetAttribute");
  lib.bind(api.heuristic, "cublasLtMatmulAlgoGetHeuristic");
  lib.bind(api.matmul, "cublasLtMatmul");
  lib.keep();
  return api;
}

/// `load()` once per process on first call (thread-safe); a failed load is tried again by the next call.
template <typename Api, Api (*load)()>
const Api& loaded_once() {
  static std::mutex mu;
  static Api api;
  static bool loaded = false;
  std::lock_guard lock(mu);
  if (!loaded) api = load(), loaded = true;
  return api;
}

}  // namespace

const CublasApi& cublas() { return loaded_once<CublasApi, load_cublas>(); }
const CublasLtApi& cublaslt() { return loaded_once<CublasLtApi, load_cublaslt>(); }

}  // namespace mlsb::cuda
#endif
