#pragma once
// FP8 GEMMs with per-tensor scales through cuBLASLt (include only where MLSB_HAVE_CUDA is defined): the cuda
// layer's expert GEMMs under the fp8-current and fp8-delayed recipes, on tensor cores with FP8 (compute
// capability 8.9 and newer: Ada, Hopper, Blackwell).
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

namespace mlsb::moe_train::gpu {

/// One FP8 operand: codes stored row-major with the reduction dimension K contiguous (row stride ld), E4M3 or
/// E5M2, and the device fp32 `descale` its product is multiplied by.
struct Fp8Operand {
  const uint8_t* data = nullptr;
  int64_t ld = 0;
  bool e5m2 = false;
  const float* descale = nullptr;
};

/// C [M, N] = a_descale * b_descale * A [M, K] Bt [N, K]^T, with fp32 accumulation on the tensor cores, C bf16
/// (c_fp32 false) or fp32 with row stride ldc. Both operands are K-major (cuBLASLt's FP8 kernels take A
/// transposed and B not: its "TN" layout, in its column-major terms). `fast_accum`: cuBLASLt's fast accumulation
/// (CUBLASLT_MATMUL_DESC_FAST_ACCUM, the tensor cores' limited-precision sum throughout); otherwise cuBLASLt
/// promotes partial sums into fp32 (DeepSeek-V3's fix, section 3.3.2). Enqueues on the stream; one plan
/// (descriptors and the heuristic's algorithm) is kept per shape.
class Fp8Gemm {
 public:
  /// `workspace` (device memory of `workspace_bytes`) is the GEMMs' scratch, shared with other work on `stream`.
  /// Throws std::runtime_error when cuBLASLt cannot be loaded or its handle made.
  Fp8Gemm(cudaStream_t stream, void* workspace, size_t workspace_bytes);
  ~Fp8Gemm();
  Fp8Gemm(const Fp8Gemm&) = delete;
  Fp8Gemm& operator=(const Fp8Gemm&) = delete;

  /// M, N or K of 0 enqueues nothing. Throws std::invalid_argument when K, a.ld or bt.ld is not a multiple of 16,
  /// a pointer is not 16-byte aligned, both operands are E5M2 or a size exceeds int (cuBLASLt's FP8
  /// requirements); std::runtime_error when cuBLASLt has no algorithm for the shape or the call fails.
  void run(int64_t M, int64_t N, int64_t K, const Fp8Operand& a, const Fp8Operand& bt, void* c, int64_t ldc,
           bool c_fp32, bool fast_accum);

 private:
  struct Plan;
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, bool, bool, bool, bool>;
  const Plan& plan(const Key& key);

  cudaStream_t stream_;
  void* workspace_;
  size_t workspace_bytes_;
  void* handle_ = nullptr;  // cublasLtHandle_t
  std::map<Key, std::unique_ptr<Plan>> plans_;
};

}  // namespace mlsb::moe_train::gpu
