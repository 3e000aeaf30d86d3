#pragma once
// The sigmoid and SwiGLU of the MoE experts and the sigmoid router, for the host and (under nvcc) the
// device: one definition for moe_train (CPU experts and router, CUDA kernels) and moe_offload (CPU and CUDA
// executors), so the CPU and GPU paths evaluate the same expression in the same order.
//   sigmoid(x) = 1 / (1 + exp(-x))
//   swiglu(gate, up) = silu(gate) * up = gate * sigmoid(gate) * up   (Shazeer, arXiv 2002.05202)
// T is float (fp32 arithmetic, expf) or double (fp64, exp). C++17 (nvcc). The CPU reference of the MoE
// layer check (workloads/moe_train/layer_check.cpp) keeps its own formula on purpose: it is the oracle.
#include <math.h>

#include "backends/cuda/host_device.hpp"

namespace mlsb::common {

MLSB_HD float exp_of(float x) { return expf(x); }
MLSB_HD double exp_of(double x) { return exp(x); }

template <typename T>
MLSB_HD T sigmoid(T x) {
  return T(1) / (T(1) + exp_of(-x));
}

/// a = silu(gate) * up.
template <typename T>
MLSB_HD T swiglu(T gate, T up) {
  return gate * sigmoid(gate) * up;
}

/// Given da = d(loss)/d(a) of a = swiglu(gate, up): d(gate) = da * up * s * (1 + gate * (1 - s)) and
/// d(up) = da * gate * s, s = sigmoid(gate).
template <typename T>
MLSB_HD void swiglu_backward(T gate, T up, T da, T& dgate, T& dup) {
  const T s = sigmoid(gate);
  dgate = da * up * s * (T(1) + gate * (T(1) - s));
  dup = da * gate * s;
}

}  // namespace mlsb::common
