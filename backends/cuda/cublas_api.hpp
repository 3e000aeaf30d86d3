#pragma once
// cuBLAS and cuBLASLt, loaded when first used (dlopen) instead of linked: linking them costs every process
// about 0.35 s of start-up in their initialisers, GPU or not, though most runs of mlsysbench and of its tests
// never call them. Include only where MLSB_HAVE_CUDA is defined.
#include <cublasLt.h>
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

/// The cuBLASLt entry points the project calls (the FP8 GEMMs, which cublasGemmEx does not offer).
struct CublasLtApi {
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) preference_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) preference_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) preference_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) heuristic = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;
};

/// cuBLASLt of the toolkit (libcublasLt.so.MAJOR, else the file CMake found), loaded as cublas() is; throws the
/// same way.
const CublasLtApi& cublaslt();

}  // namespace mlsb::cuda
