// FP8 GEMMs through cuBLASLt (gemm_fp8.hpp); compiled only with CUDA.
#ifdef MLSB_HAVE_CUDA
#include "workloads/moe_train/cuda/gemm_fp8.hpp"

#include <cublasLt.h>

#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include "backends/cuda/cublas_api.hpp"
#include "workloads/moe_train/cuda/check.hpp"

namespace mlsb::moe_train::gpu {
namespace {

constexpr size_t kMaxPlans = 512;  // expert row counts change every step: the cache empties at this size

cudaDataType fp8_type(bool e5m2) { return e5m2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3; }

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

struct Fp8Gemm::Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
  ~Plan() {
    const cuda::CublasLtApi& lt = cuda::cublaslt();
    for (auto* l : {a, b, c})
      if (l) lt.layout_destroy(l);
    if (desc) lt.desc_destroy(desc);
  }
};

Fp8Gemm::Fp8Gemm(cudaStream_t stream, void* workspace, size_t workspace_bytes)
    : stream_(stream), workspace_(workspace), workspace_bytes_(workspace_bytes) {
  cublasLtHandle_t h = nullptr;
  check_blas(cuda::cublaslt().create(&h), "cublasLtCreate");
  handle_ = h;
}

Fp8Gemm::~Fp8Gemm() {
  plans_.clear();
  cuda::cublaslt().destroy(static_cast<cublasLtHandle_t>(handle_));
}

// Key: M, N, K, lda, ldb, ldc, a e5m2, b e5m2, c fp32, fast accumulation.
const Fp8Gemm::Plan& Fp8Gemm::plan(const Key& key) {
  if (auto it = plans_.find(key); it != plans_.end()) return *it->second;
  if (plans_.size() >= kMaxPlans) plans_.clear();
  const auto [M, N, K, lda, ldb, ldc, a_e5m2, b_e5m2, c_fp32, fast] = key;
  const cuda::CublasLtApi& lt = cuda::cublaslt();
  auto p = std::make_unique<Plan>();
  check_blas(lt.desc_create(&p->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  // Column-major view of the row-major C [M, N]: C^T [N, M] = Bt [N, K] A^T [K, M]. cuBLASLt's A is Bt, stored
  // column-major [K, N] (ld ldb) and transposed; its B is A, stored [K, M] (ld lda), not transposed; D [N, M].
  const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  check_blas(lt.desc_set(p->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta), "cublasLtMatmulDescSetAttribute");
  check_blas(lt.desc_set(p->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb), "cublasLtMatmulDescSetAttribute");
  const int8_t fast_accum = fast ? 1 : 0;
  check_blas(lt.desc_set(p->desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast_accum, sizeof fast_accum),
             "cublasLtMatmulDescSetAttribute (fast accumulation)");
  check_blas(lt.layout_create(&p->a, fp8_type(b_e5m2), static_cast<uint64_t>(K), static_cast<uint64_t>(N), ldb),
             "cublasLtMatrixLayoutCreate");
  check_blas(lt.layout_create(&p->b, fp8_type(a_e5m2), static_cast<uint64_t>(K), static_cast<uint64_t>(M), lda),
             "cublasLtMatrixLayoutCreate");
  check_blas(lt.layout_create(&p->c, c_fp32 ? CUDA_R_32F : CUDA_R_16BF, static_cast<uint64_t>(N),
                              static_cast<uint64_t>(M), ldc),
             "cublasLtMatrixLayoutCreate");
  cublasLtMatmulPreference_t pref = nullptr;
  check_blas(lt.preference_create(&pref), "cublasLtMatmulPreferenceCreate");
  cublasLtMatmulHeuristicResult_t result{};
  int found = 0;
  cublasStatus_t set =
      lt.preference_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes_, sizeof workspace_bytes_);
  // The heuristic assumes 256-byte aligned operands unless told otherwise; ours are 16-byte aligned (an expert's
  // rows start inside its tensor), which run() checks.
  const uint32_t alignment = 16;
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
    if (set == CUBLAS_STATUS_SUCCESS) set = lt.preference_set(pref, attr, &alignment, sizeof alignment);
  const cublasStatus_t asked = set != CUBLAS_STATUS_SUCCESS
                                   ? set
                                   : lt.heuristic(static_cast<cublasLtHandle_t>(handle_), p->desc, p->a, p->b, p->c,
                                                  p->c, pref, 1, &result, &found);
  lt.preference_destroy(pref);
  check_blas(asked, "cublasLtMatmulAlgoGetHeuristic");
  if (found == 0 || result.state != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error("moe_train gpu: cuBLASLt has no FP8 algorithm for M " + std::to_string(M) + ", N " +
                             std::to_string(N) + ", K " + std::to_string(K));
  p->algo = result.algo;
  return *plans_.emplace(key, std::move(p)).first->second;
}

void Fp8Gemm::run(int64_t M, int64_t N, int64_t K, const Fp8Operand& a, const Fp8Operand& bt, void* c, int64_t ldc,
                  bool c_fp32, bool fast_accum) {
  if (M == 0 || N == 0 || K == 0) return;
  constexpr int64_t kMax = std::numeric_limits<int>::max();
  if (M > kMax || N > kMax || K > kMax || a.ld > kMax || bt.ld > kMax || ldc > kMax)
    throw std::invalid_argument("fp8 GEMM: a dimension beyond cuBLASLt's int range");
  if (K % 16 || a.ld % 16 || bt.ld % 16 || ldc % (c_fp32 ? 4 : 8) || !aligned16(a.data) || !aligned16(bt.data) ||
      !aligned16(c))
    throw std::invalid_argument("fp8 GEMM: K " + std::to_string(K) + ", lda " + std::to_string(a.ld) + ", ldb " +
                                std::to_string(bt.ld) +
                                ": cuBLASLt's FP8 GEMMs need multiples of 16 and 16-byte "
                                "aligned operands");
  if (a.e5m2 && bt.e5m2) throw std::invalid_argument("fp8 GEMM: E5M2 x E5M2 is not an FP8 GEMM cuBLASLt offers");
  const Plan& p = plan({M, N, K, a.ld, bt.ld, ldc, a.e5m2, bt.e5m2, c_fp32, fast_accum});
  const cuda::CublasLtApi& lt = cuda::cublaslt();
  // cuBLASLt's A is our Bt, its B our A: their descales swap places too.
  check_blas(lt.desc_set(p.desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &bt.descale, sizeof bt.descale),
             "cublasLtMatmulDescSetAttribute (A scale)");
  check_blas(lt.desc_set(p.desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &a.descale, sizeof a.descale),
             "cublasLtMatmulDescSetAttribute (B scale)");
  const float alpha = 1.0f, beta = 0.0f;
  check_blas(lt.matmul(static_cast<cublasLtHandle_t>(handle_), p.desc, &alpha, bt.data, p.a, a.data, p.b, &beta, c, p.c,
                       c, p.c, &p.algo, workspace_, workspace_bytes_, stream_),
             "cublasLtMatmul (fp8)");
}

}  // namespace mlsb::moe_train::gpu
#endif
