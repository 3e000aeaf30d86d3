// CUDA SwiGLU kernels: one block per row of h13 [rows, 2f] (gate | up), V-element chunks (16-byte
// loads when f % 8 == 0), fp32 arithmetic of workloads/common/activations.hpp, bf16 in and out.
#include "workloads/common/activations.hpp"
#include "workloads/moe_train/cuda/device_vec.hpp"
#include "workloads/moe_train/cuda/kernels.hpp"

namespace mlsb::moe_train::gpu {
namespace {

using detail::load_bf16;
using detail::store_bf16;

template <int V>
__global__ void swiglu_forward_kernel(const bf16* h13, int64_t f, bf16* a) {
  const int64_t r = blockIdx.x;
  const bf16* gate = h13 + r * 2 * f;
  const bf16* up = gate + f;
  bf16* out = a + r * f;
  for (int64_t c = static_cast<int64_t>(threadIdx.x) * V; c < f; c += static_cast<int64_t>(blockDim.x) * V) {
    float g[V], u[V], o[V];
    load_bf16<V>(gate + c, g);
    load_bf16<V>(up + c, u);
#pragma unroll
    for (int i = 0; i < V; ++i) o[i] = common::swiglu(g[i], u[i]);
    store_bf16<V>(out + c, o);
  }
}

template <int V>
__global__ void swiglu_backward_kernel(bf16* h13, const bf16* da, int64_t f) {
  const int64_t r = blockIdx.x;
  bf16* gate = h13 + r * 2 * f;
  bf16* up = gate + f;
  const bf16* d = da + r * f;
  for (int64_t c = static_cast<int64_t>(threadIdx.x) * V; c < f; c += static_cast<int64_t>(blockDim.x) * V) {
    float g[V], u[V], dv[V], dg[V], du[V];
    load_bf16<V>(gate + c, g);
    load_bf16<V>(up + c, u);
    load_bf16<V>(d + c, dv);
#pragma unroll
    for (int i = 0; i < V; ++i) common::swiglu_backward(g[i], u[i], dv[i], dg[i], du[i]);
    store_bf16<V>(gate + c, dg);  // in place: this thread alone read these elements
    store_bf16<V>(up + c, du);
  }
}


}  // namespace

void swiglu_forward(const bf16* h13, int64_t rows, int64_t ffn, bf16* a, cudaStream_t stream) {
  if (rows <= 0 || ffn <= 0) return;
  const unsigned grid = static_cast<unsigned>(rows);
  if (detail::vectorised(ffn))
    swiglu_forward_kernel<8><<<grid, detail::vec_row_threads(ffn), 0, stream>>>(h13, ffn, a);
  else
    swiglu_forward_kernel<1><<<grid, detail::vec_row_threads(ffn), 0, stream>>>(h13, ffn, a);
}

void swiglu_backward(bf16* h13, const bf16* da, int64_t rows, int64_t ffn, cudaStream_t stream) {
  if (rows <= 0 || ffn <= 0) return;
  const unsigned grid = static_cast<unsigned>(rows);
  if (detail::vectorised(ffn))
    swiglu_backward_kernel<8><<<grid, detail::vec_row_threads(ffn), 0, stream>>>(h13, da, ffn);
  else
    swiglu_backward_kernel<1><<<grid, detail::vec_row_threads(ffn), 0, stream>>>(h13, da, ffn);
}

}  // namespace mlsb::moe_train::gpu
