#pragma once
// A small deterministic random stream for the compress workload's generators and lossy codecs:
// splitmix64 (Steele, Lea & Flood, OOPSLA 2014) over a counter; same seed, same numbers everywhere.
#include <cmath>
#include <cstdint>

#include "harness/workload.hpp"

namespace mlsb::compress::detail {

class SplitRng {
 public:
  explicit SplitRng(uint64_t state) : state_(state) {}
  uint64_t next() { return splitmix64(state_ += 0x9e3779b97f4a7c15ULL); }
  /// Uniform in the open interval (0, 1).
  double open01() { return (static_cast<double>(next() >> 11) + 0.5) * 0x1p-53; }
  /// Uniform integer in [0, bound) without modulo bias (Lemire, "Fast random integer generation in an
  /// interval", TOMACS 2019). bound > 0.
  uint64_t below(uint64_t bound) {
    while (true) {
      const unsigned __int128 m = static_cast<unsigned __int128>(next()) * bound;
      const uint64_t low = static_cast<uint64_t>(m);
      if (low >= bound || low >= (0 - bound) % bound) return static_cast<uint64_t>(m >> 64);
    }
  }
  /// Standard normal (Marsaglia's polar method; the second value of each pair is kept for the next call).
  double normal();

 private:
  uint64_t state_;
  double spare_ = 0;
  bool has_spare_ = false;
};

inline double SplitRng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u, v, s;
  do {
    u = 2 * open01() - 1;
    v = 2 * open01() - 1;
    s = u * u + v * v;
  } while (s >= 1 || s == 0);
  const double f = std::sqrt(-2 * std::log(s) / s);
  spare_ = v * f;
  has_spare_ = true;
  return u * f;
}

}  // namespace mlsb::compress::detail
