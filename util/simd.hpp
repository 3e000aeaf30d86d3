#pragma once
// Run-time choice of vector kernels: the instruction-set level the CPU supports, capped by a limit that
// tests lower to run the portable code on the same machine. Kernels are compiled per level with
// function-level target attributes, so the build needs no -march flag and runs on any x86-64.
#include <cstdint>

/// MLSB_SIMD_X86 is defined where the x86 kernels are compiled (x86-64 with GCC or Clang); there
/// MLSB_TARGET_AVX2 marks a function compiled for Simd::avx2, to be called only when simd_level() says so.
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MLSB_SIMD_X86 1
#define MLSB_TARGET_AVX2 [[gnu::target("avx2,bmi2,f16c")]]
#endif

namespace mlsb {

/// Levels in increasing order. avx2: AVX2 with BMI2 and F16C (every CPU with AVX2 since 2013 has both).
enum class Simd : uint8_t { scalar = 0, avx2 = 1 };

/// The best level this CPU supports, capped by the limit (set_simd_limit); scalar off x86-64.
Simd simd_level();

/// Caps simd_level() at `limit` for the whole process (Simd::scalar forces the portable kernels);
/// returns the previous limit. Not meant to change while kernels run on other threads.
Simd set_simd_limit(Simd limit);

/// Sets a limit for its lifetime and restores the previous one (tests comparing the paths).
class ScopedSimdLimit {
 public:
  explicit ScopedSimdLimit(Simd limit) : previous_(set_simd_limit(limit)) {}
  ~ScopedSimdLimit() { set_simd_limit(previous_); }
  ScopedSimdLimit(const ScopedSimdLimit&) = delete;
  ScopedSimdLimit& operator=(const ScopedSimdLimit&) = delete;

 private:
  Simd previous_;
};

}  // namespace mlsb
