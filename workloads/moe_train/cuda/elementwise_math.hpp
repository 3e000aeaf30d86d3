#pragma once
// Per-element arithmetic of the AdamW kernel (adamw.cu), for the device and the host (tests/gpu checks it
// on the CPU against adamw.cpp). fp32. The SwiGLU kernels' arithmetic is workloads/common/activations.hpp.
#include <math.h>

#include "backends/cuda/host_device.hpp"

namespace mlsb::moe_train::gpu::math {

/// One AdamW step's constants (AdamW<float>::step: the bias corrections inverted in double, then fp32).
struct AdamWStep {
  float lr = 0, beta1 = 0, beta2 = 0, eps = 0, weight_decay = 0, inv_bc1 = 1, inv_bc2 = 1;
};

/// Updates one element's moments and master weight in place (the update of adamw.cpp).
MLSB_HD void adamw_element(const AdamWStep& c, float g, float& m, float& v, float& p) {
  m = c.beta1 * m + (1.0f - c.beta1) * g;
  v = c.beta2 * v + (1.0f - c.beta2) * g * g;
  p -= c.lr * (m * c.inv_bc1 / (sqrtf(v * c.inv_bc2) + c.eps) + c.weight_decay * p);
}

}  // namespace mlsb::moe_train::gpu::math
