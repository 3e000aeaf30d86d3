#pragma once
// Error of a lossy reconstruction against the original, over finite elements of the original.
#include <cstdint>

#include "workloads/compress/tensor.hpp"

namespace mlsb::compress {

struct ErrorMetrics {
  double rel_l2 = 0;       ///< ||x - y||_2 / ||x||_2 (0 when x == y; inf when ||x|| == 0 and y != x)
  double max_abs = 0;      ///< max_i |x_i - y_i|
  double snr_db = 0;       ///< 10 log10(||x||^2 / ||x - y||^2); +inf when exact (callers cap it)
  int64_t nonfinite = 0;   ///< elements where x is not finite (skipped) or y is not finite while x is
  int64_t lost = 0;        ///< of those, elements where x is finite and y is not (an unbounded error)
  double sum_sq_x = 0;     ///< ||x||^2 over the compared elements
  double sum_sq_error = 0; ///< ||x - y||^2 over the compared elements
};

/// Compares original x and reconstruction y (same count; dtypes may differ). Sums in fp64.
ErrorMetrics compare_tensors(TensorView x, TensorView y);

}  // namespace mlsb::compress
