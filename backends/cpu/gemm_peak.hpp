#pragma once
// The CPU's GEMM peak, measured (there is no datasheet number for "this VM's cores"): the best rate of
// fp32 GEMMs through the same BLAS the workloads use, at the shapes a workload runs and on an ideal square,
// so that MFU on the CPU is achieved FLOP/s over what this machine's BLAS reaches in the same process.
#include <cstdint>
#include <span>

namespace mlsb::cpu {

/// One fp32 GEMM: C[m x n] = op(A)[m x k] * op(B)[k x n], op transposing when trans_a / trans_b.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  auto operator<=>(const GemmShape&) const = default;
};

/// TFLOP/s (10^12 FLOP/s, 2*m*n*k per GEMM) of the fastest of `shapes` and a 2048 x 2048 x 2048 square on
/// `threads` OpenBLAS threads, each the best of 2 to 5 timed GEMMs after one warm-up (as many as fit in about a
/// second). Each shape's rate is measured once per process and thread count, then cached; `remeasure` measures the
/// shapes again and keeps the higher rate (a peak is a maximum: a first measurement that met a slower machine must not
/// stand). Leaves OpenBLAS at `threads` threads. Throws std::invalid_argument naming the shape when a dimension is not
/// positive.
double measured_gemm_peak_tflops(int threads, std::span<const GemmShape> shapes = {}, bool remeasure = false);

}  // namespace mlsb::cpu
