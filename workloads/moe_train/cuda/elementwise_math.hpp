#pragma once
// Per-element arithmetic of the SwiGLU and AdamW kernels (swiglu.cu, adamw.cu), for the device and
// the host (tests/gpu checks it on the CPU against experts.cpp and adamw.cpp). fp32.
#include <math.h>

#include "backends/formats/small_floats.hpp"  // MLSB_HD

namespace mlsb::moe_train::gpu::math {

MLSB_HD float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

/// a = silu(gate) * up (Shazeer, arXiv 2002.05202).
MLSB_HD float swiglu(float gate, float up) { return gate * sigmoid(gate) * up; }

/// Given da = d(loss)/d(a): d(gate) and d(up).
MLSB_HD void swiglu_backward(float gate, float up, float da, float& dgate, float& dup) {
  const float s = sigmoid(gate);
  dgate = da * up * s * (1.0f + gate * (1.0f - s));
  dup = da * gate * s;
}

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
