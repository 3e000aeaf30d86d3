#pragma once
// A linear layer's three GEMMs in FP8 with per-tensor scales on the device (include only where MLSB_HAVE_CUDA is
// defined): the cuda layer's fp8-current and fp8-delayed recipes (precision/recipe.hpp; Transformer Engine's
// Float8CurrentScaling and DelayedScaling, format HYBRID). Operands as the CPU recipes quantise them:
//   fprop  y [m, out] = x [m, in] w            x E4M3, w E4M3
//   dgrad  dx [m, in] = dy [m, out] w^T        dy E5M2, w E4M3
//   wgrad  dw [in, out] = x^T dy               x E4M3, dy E5M2 (dw fp32)
// each tensor with one scale per step (per instance: an expert of the grouped GEMM keeps its own, as on the CPU):
// current scaling from the tensor's own amax, delayed scaling from the amax history of the steps before
// (AmaxHistory, the CPU recipe's, kept on the host). The wgrad operands are cast transposed (K = m rows, padded
// with zeros to a multiple of 16). Everything is enqueued on the layer's stream.
#include <cuda_runtime_api.h>

#include <array>
#include <cstdint>
#include <vector>

#include "backends/cuda/pinned_buffer.hpp"
#include "workloads/moe_train/cuda/gemm_fp8.hpp"
#include "workloads/moe_train/cuda/grown.hpp"
#include "workloads/moe_train/cuda/kernels.hpp"
#include "workloads/moe_train/precision/amax_history.hpp"
#include "workloads/moe_train/precision/recipe.hpp"

namespace mlsb::moe_train::gpu {

struct Fp8Recipe {
  /// fp8-current or fp8-delayed: each role's element and scaling come from precision::operand_format, the CPU
  /// recipes' table
  precision::Recipe recipe = precision::Recipe::Fp8Current;
  bool fast_accum = false;  ///< accumulate=limited (cuBLASLt's fast accumulation); else promoted
  int amax_history = 1024;  ///< fp8-delayed: steps of amax history
};

class Fp8Linear {
 public:
  /// `instances` weights of [in, out] (bf16, one after the other); in and out multiples of 16, and a recipe that
  /// scales per tensor. Throws std::invalid_argument otherwise, and what AmaxHistory and the allocations throw.
  Fp8Linear(int64_t instances, int64_t in, int64_t out, const Fp8Recipe& recipe, Fp8Gemm& gemm, cudaStream_t stream);

  /// Scratch for GEMMs of up to `rows` rows in all (instances included), sized before work is in flight.
  void reserve(int64_t rows);
  /// Start of a forward: the amaxes cleared and delayed scaling's scales set (one upload), and the weights w
  /// [instances, in, out] quantised, transposed for fprop and as stored for dgrad.
  void begin(const bf16* w);
  /// fprop of instance i on m rows: y [m, out] bf16.
  void fprop(int64_t i, const bf16* x, int64_t m, bf16* y);
  /// wgrad of instance i: dw [in, out] fp32 (overwritten); records dy's amax. m = 0 enqueues nothing.
  void wgrad(int64_t i, const bf16* x, const bf16* dy, int64_t m, float* dw);
  /// dgrad of instance i: dx [m, in], bf16 or fp32 (overwritten). Call after the same step's wgrad of i (dy's scale).
  void dgrad(int64_t i, const bf16* dy, int64_t m, void* dx, bool dx_fp32);
  /// End of a step, after its last GEMM: the step's amaxes copied to the host (lands at the step's synchronisation).
  void end_step();
  /// After the step's synchronisation: delayed scaling's histories take the step's amaxes and give the next
  /// step's scales.
  void roll();
  /// Device bytes held (quantised weights, scales, scratch).
  double bytes() const;

 private:
  enum Role { kInput = 0, kWeight = 1, kGrad = 2 };  // precision::Role's order
  Fp8Scale* slot(int64_t i, Role r) const { return scales_ + i * 3 + r; }
  void cast(const bf16* x, int64_t rows, int64_t cols, int64_t i, Role r, bool transposed, int64_t out_ld,
            uint8_t* out);
  bool e5m2(Role r) const { return element_[r] == formats::Element::E5M2; }

  int64_t n_, in_, out_;
  Fp8Recipe recipe_;
  bool delayed_ = false;                      // delayed scaling, else current
  std::array<formats::Element, 3> element_{};  // by role
  Fp8Gemm& gemm_;
  cudaStream_t stream_;
  DeviceMemory mem_, qa_, qb_;  // mem_: scales [n, 3], then weights transposed [n, out, in] and as stored
  Fp8Scale* scales_ = nullptr;
  uint8_t *wt_ = nullptr, *w_ = nullptr;
  cuda::PinnedBuffer<Fp8Scale> up_, down_;         // the scales' host side: set for the next step, read after a step
  std::vector<precision::AmaxHistory> histories_;  // [instance * 3 + role], delayed scaling
  std::vector<bool> ran_;                          // [instance]: whether it had rows since begin()
};

}  // namespace mlsb::moe_train::gpu
