#pragma once
// The experts' SwiGLU FFN as a grouped GEMM on the CPU: the rows of expert e are contiguous (a
// DispatchPlan's layout) and each expert's GEMMs run on its own slice (one OpenBLAS GEMM per expert
// and projection, MegaBlocks' grouped formulation without padding).
//   h13 = x_e * w13_e            [m_e, 2f]  (gate | up, fused as Megatron-Core's linear_fc1)
//   a   = silu(gate) * up        [m_e, f]   (SwiGLU, Shazeer arXiv 2002.05202)
//   y_e = a * w2_e               [m_e, h]
#include <cstdint>
#include <span>
#include <vector>

#include "workloads/moe_train/precision/quant_linear.hpp"

namespace mlsb::moe_train {

/// Weights of `experts` SwiGLU experts, row-major: w13 [experts][hidden][2 * ffn] (gate columns first,
/// then up), w2 [experts][ffn][hidden].
template <typename T>
struct ExpertWeights {
  int64_t experts = 0, hidden = 0, ffn = 0;
  std::vector<T> w13, w2;
  void resize(int64_t e, int64_t h, int64_t f) {
    experts = e, hidden = h, ffn = f;
    w13.assign(e * h * 2 * f, T(0));
    w2.assign(e * f * h, T(0));
  }
  T* w13_of(int64_t e) { return w13.data() + e * hidden * 2 * ffn; }
  const T* w13_of(int64_t e) const { return w13.data() + e * hidden * 2 * ffn; }
  T* w2_of(int64_t e) { return w2.data() + e * ffn * hidden; }
  const T* w2_of(int64_t e) const { return w2.data() + e * ffn * hidden; }
};

/// Time and floating-point work of the expert GEMMs (2 FLOP per multiply-add), summed over calls.
struct GemmStats {
  double seconds = 0, flop = 0;
};

/// Activations kept from forward for backward: h13 [rows, 2f], a [rows, f]; dh13 is backward's
/// workspace (kept so that a step allocates nothing once the sizes are steady).
template <typename T>
struct ExpertCache {
  std::vector<T> h13, a, dh13;
};

/// The quantised GEMMs of the experts' two linear layers under a low-precision recipe (precision/), instance =
/// the expert's index; nullptr: fp32.
struct ExpertSites {
  precision::QuantLinear* fc1 = nullptr;
  precision::QuantLinear* fc2 = nullptr;
};

/// y [rows, h] = SwiGLU expert FFN of x [rows, h], expert e on rows [offsets[e], offsets[e+1]).
/// `threads` splits the element-wise work (the GEMMs use OpenBLAS's threads). Adds to `stats`.
/// Only experts [first, last) run (last -1: all); the cache holds offsets[experts] rows either way, so
/// running the experts one by one makes the same GEMM calls as running them together.
template <typename T>
void experts_forward(const ExpertWeights<T>& w, const T* x, std::span<const int64_t> offsets, T* y,
                     ExpertCache<T>& cache, int threads, GemmStats& stats, int64_t first = 0, int64_t last = -1,
                     const ExpertSites& sites = {});

/// Given dy [rows, h]: dx [rows, h] (overwritten) and weight gradients added into `grad` (same shape
/// as w). Uses the cache of the matching forward. Experts [first, last) only, as experts_forward.
template <typename T>
void experts_backward(const ExpertWeights<T>& w, const T* x, std::span<const int64_t> offsets, const T* dy,
                      ExpertCache<T>& cache, T* dx, ExpertWeights<T>& grad, int threads, GemmStats& stats,
                      int64_t first = 0, int64_t last = -1, const ExpertSites& sites = {});

}  // namespace mlsb::moe_train
