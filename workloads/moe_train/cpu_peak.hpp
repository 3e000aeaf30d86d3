#pragma once
// The peak a CPU case's mfu and expert_gemm_peak_ratio divide by, kept an upper bound of what the case
// achieves: measured at the case's own expert GEMM shapes and threads (best of several runs, in the case's
// process), measured again when a step beats it, and a fraction above 1 fails verification.
#include <vector>

#include "backends/cpu/gemm_peak.hpp"
#include "harness/workload.hpp"

namespace mlsb::moe_train {

class CpuPeak {
 public:
  CpuPeak() = default;
  /// Measures the peak (cpu::measured_gemm_peak_tflops) at `shapes` on `threads` OpenBLAS threads; not when
  /// the runner counts instructions (State::counting: the peak is wall-clock work, NaN then).
  CpuPeak(int threads, std::vector<cpu::GemmShape> shapes, bool counting);

  /// The peak in TFLOP/s (0 before it is measured).
  double tflops() const { return tflops_; }

  /// The peak for a step that reached `achieved_tflops` on this process (its expert GEMMs' rate, or its
  /// model rate per device): when the step beat the peak, the peak is measured again and the higher kept (the
  /// first measurement may have met a slower machine). It can still be below `achieved_tflops`: then the
  /// step's fraction is above 1 and verify_peak_fractions fails the case.
  double cover(double achieved_tflops);

 private:
  int threads_ = 1;
  std::vector<cpu::GemmShape> shapes_;
  double tflops_ = 0;
};

/// Fails the case (State::fail) when a recorded sample of `mfu` or `expert_gemm_peak_ratio` is above 1: a
/// fraction of a measured peak above 1 means the peak is wrong, and no such number is stored.
void verify_peak_fractions(State& state);

}  // namespace mlsb::moe_train
