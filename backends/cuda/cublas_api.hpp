#pragma once
// cuBLAS, loaded when first used (dlopen) instead of linked: linking it costs every process about 0.35 s of
// start-up in its libraries' initialisers (libcublasLt), GPU or not, though most runs of mlsysbench and
// of its tests never call it. Include only where MLSB_HAVE_CUDA is defined.
#include <cublas_v2.h>

namespace mlsb::cuda {

/// The cuBLAS entry points the project calls (cublas_v2.h's names: cublasCreate is cublasCreate_v2, ...).
struct CublasApi {
  decltype(&cublasCreate) create = nullptr;
  decltype(&cublasDestroy) destroy = nullptr;
  decltype(&cublasSetStream) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasSetWorkspace) set_workspace = nullptr;
  // cublasGemmEx with a cublasComputeType_t (the header also declares an inline overload taking a cudaDataType).
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                            const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                            cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

/// cuBLAS of the toolkit the project was built with (libcublas.so.MAJOR from the loader's search path, else
/// the file CMake found), loaded once on first call (thread-safe). Throws std::runtime_error naming the
/// library and the loader's message when it or an entry point is missing; a later call tries again.
const CublasApi& cublas();

}  // namespace mlsb::cuda
