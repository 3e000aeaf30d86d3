#include "util/simd.hpp"

#include <algorithm>
#include <atomic>

#ifdef MLSB_SIMD_X86
#include <cpuid.h>
#endif

namespace mlsb {
namespace {

Simd detect_simd() {
#ifdef MLSB_SIMD_X86
  // F16C through cpuid: clang's __builtin_cpu_supports does not know it.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  const bool f16c = __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C) != 0;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi2") && f16c) return Simd::avx2;
#endif
  return Simd::scalar;
}

std::atomic<Simd> simd_limit{Simd::avx2};

}  // namespace

Simd simd_level() {
  static const Simd cpu = detect_simd();
  return std::min(cpu, simd_limit.load(std::memory_order_relaxed));
}

Simd set_simd_limit(Simd l) { return simd_limit.exchange(l, std::memory_order_relaxed); }

}  // namespace mlsb
