#include "workloads/compress/error_metrics.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace mlsb::compress {

// Elements where x is not finite are skipped; elements where y is not finite while x is are counted in
// `nonfinite` and also skipped (their error is unbounded; callers report the count beside the metrics).
ErrorMetrics compare_tensors(TensorView x, TensorView y) {
  if (x.count != y.count)
    throw std::invalid_argument("compare_tensors: original has " + std::to_string(x.count) +
                                " elements, reconstruction " + std::to_string(y.count));
  ErrorMetrics m;
  double norm_x = 0, norm_d = 0, max_abs = 0;
  for (int64_t i = 0; i < x.count; ++i) {
    const double a = load_float(x.data, x.dtype, i);
    const double b = load_float(y.data, y.dtype, i);
    if (!std::isfinite(a) || !std::isfinite(b)) {
      ++m.nonfinite;
      m.lost += std::isfinite(a);
      continue;
    }
    const double d = a - b;
    norm_x += a * a;
    norm_d += d * d;
    max_abs = std::max(max_abs, std::fabs(d));
  }
  constexpr double inf = std::numeric_limits<double>::infinity();
  m.max_abs = max_abs;
  m.sum_sq_x = norm_x;
  m.sum_sq_error = norm_d;
  if (norm_d == 0) {
    m.rel_l2 = 0;
    m.snr_db = inf;
  } else if (norm_x == 0) {
    m.rel_l2 = inf;
    m.snr_db = -inf;
  } else {
    m.rel_l2 = std::sqrt(norm_d / norm_x);
    m.snr_db = 10 * std::log10(norm_x / norm_d);
  }
  return m;
}

}  // namespace mlsb::compress
