#pragma once
// Central finite differences for the gradient checks: (f(p + eps) - f(p - eps)) / 2 eps, restoring p.
#include <cmath>
#include <functional>

namespace mlsb::moe_train::test {

/// The central difference of `objective` in `param` (eps 1e-6; fp64 objectives).
inline double central_difference(double& param, const std::function<double()>& objective) {
  const double keep = param, eps = 1e-6;
  param = keep + eps;
  const double up = objective();
  param = keep - eps;
  const double down = objective();
  param = keep;
  return (up - down) / (2 * eps);
}

/// The tolerance an analytic gradient must meet against a central difference `fd`.
inline double fd_tolerance(double fd) { return 1e-6 * std::max(1.0, std::abs(fd)); }

}  // namespace mlsb::moe_train::test
