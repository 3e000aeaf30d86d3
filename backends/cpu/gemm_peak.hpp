#pragma once
// The CPU's GEMM peak, measured (there is no datasheet number for "this VM's cores"): the rate of a
// large square fp32 GEMM through the same BLAS the workloads use, so MFU on the CPU is achieved FLOP/s
// over what this machine's BLAS reaches on an ideal shape in the same run.

namespace mlsb::cpu {

/// TFLOP/s (10^12 FLOP/s, 2*n^3 per GEMM) of fp32 sgemm with n = 2048 on `threads` OpenBLAS threads:
/// the best of 5 timed GEMMs after one warm-up. Measured once per process and thread count (about
/// 1 s on 2 cores), then cached. Leaves OpenBLAS at `threads` threads.
double measured_gemm_peak_tflops(int threads);

}  // namespace mlsb::cpu
