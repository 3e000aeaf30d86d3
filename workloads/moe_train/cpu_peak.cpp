#include "workloads/moe_train/cpu_peak.hpp"

#include <cmath>
#include <cstdio>
#include <string>
#include <utility>

namespace mlsb::moe_train {

CpuPeak::CpuPeak(int threads, std::vector<cpu::GemmShape> shapes, bool counting)
    : threads_(threads),
      shapes_(std::move(shapes)),
      tflops_(counting ? NAN : cpu::measured_gemm_peak_tflops(threads_, shapes_)) {}

double CpuPeak::cover(double achieved_tflops) {
  // False for NaN: a counted case never measures.
  if (achieved_tflops > tflops_) tflops_ = cpu::measured_gemm_peak_tflops(threads_, shapes_, /*remeasure=*/true);
  return tflops_;
}

void verify_peak_fractions(State& state) {
  for (const char* metric : {"mfu", "expert_gemm_peak_ratio"}) {
    const auto it = state.samples().find(metric);
    if (it == state.samples().end()) continue;
    for (size_t i = 0; i < it->second.size(); ++i)
      if (it->second[i] > 1) {
        char buf[96];
        std::snprintf(buf, sizeof buf, "%s is %.3f in sample %zu", metric, it->second[i], i);
        state.fail(std::string(buf) +
                   ": above 1, so the measured peak (peak_tflops) is below what the case achieved; the peak is "
                   "wrong (a machine whose speed changed during the case?)");
      }
  }
}

}  // namespace mlsb::moe_train
