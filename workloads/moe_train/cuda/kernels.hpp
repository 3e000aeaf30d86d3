#pragma once
// Launchers of the MoE layer's CUDA kernels (routing.cu, permute.cu, swiglu.cu, adamw.cu, fp8.cu), called by
// gpu_layer.cpp. All pointers are device memory; bf16 tensors are uint16_t bit patterns (rounded to
// nearest even, backends/formats/small_floats.hpp). Row-major throughout. Every launcher enqueues on
// `stream` and returns at once (a launch error is seen by the caller's check_launch, an execution error
// at its next synchronisation); a launcher with nothing to do (0 tokens, rows or elements) enqueues
// nothing. Row kernels use 16-byte vectors when the row width is a multiple of 8, else scalars.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "workloads/moe_train/cuda/elementwise_math.hpp"
#include "workloads/moe_train/cuda/routing_math.hpp"

namespace mlsb::moe_train::gpu {

using bf16 = uint16_t;  ///< bits of a bfloat16

// ---- routing (routing.cu): one thread per token ----

struct RouteForward {
  const float* logits = nullptr;  ///< [tokens, E] router logits
  const float* bias = nullptr;    ///< [E] expert bias (Sigmoid selection only), or nullptr
  int32_t* expert = nullptr;      ///< [tokens, k] out: chosen experts, by decreasing selection score
  float* weight = nullptr;        ///< [tokens, k] out: combine weights
  float* scores = nullptr;        ///< [tokens, E] out: softmax probabilities or sigmoid scores
  float* aux_probs = nullptr;     ///< [tokens, E] out: what the aux loss averages
  float* lse = nullptr;           ///< [tokens] out: logsumexp of the logits
  float* select = nullptr;        ///< [tokens, E] scratch
  float* group_score = nullptr;   ///< [tokens, groups] scratch (groups > 1)
};
/// route() of router.hpp on the device (semantics and tie rules there).
void route_forward(const math::RouteShape& shape, int64_t tokens, const RouteForward& b, cudaStream_t stream);

/// stats[i] = sum_t aux_probs[t, i] for i < E, stats[E] = sum_t lse[t]^2 (fp64 sums, one block each).
void route_stats(const float* aux_probs, const float* lse, int64_t tokens, int experts, double* stats,
                 cudaStream_t stream);

struct RouteBackward {
  const float* logits = nullptr, *scores = nullptr, *aux_probs = nullptr, *lse = nullptr;  ///< as forward
  const int32_t* expert = nullptr;  ///< [tokens, k]
  const float* weight = nullptr;    ///< [tokens, k]
  const float* dweight = nullptr;   ///< [tokens, k] d(loss)/d(weight), 0 where dropped
  const float* daux = nullptr;      ///< [E] aux_coef * E * f_i / tokens
  float z_scale = 0;                ///< 2 * z_coef / tokens
  bool aux = false;                 ///< aux_coef > 0
  bf16* dlogits = nullptr;          ///< [tokens, E] out
};
/// route_backward() of router.hpp on the device; dlogits rounded to bf16 (the router GEMMs' input).
void route_backward(const math::RouteShape& shape, int64_t tokens, const RouteBackward& b, cudaStream_t stream);

// ---- permutation and combine (permute.cu): one block per row or token ----

/// xp[r] = x[row_token[r]] for r < rows; x [tokens, h], xp [rows, h].
void permute_rows(const bf16* x, const int32_t* row_token, int64_t rows, int64_t hidden, bf16* xp,
                  cudaStream_t stream);

/// y[t] = (accumulate ? y[t] : 0) + sum_j weight[t, j] * yp[slot_row[t, j]] over kept slots (row >= 0),
/// summed in fp32 in slot order; also ydot[t] = <y[t] (as stored), dy[t]>. y, dy [tokens, h].
void combine(const bf16* yp, const int32_t* slot_row, const float* weight, int64_t tokens, int topk, int64_t hidden,
             bool accumulate, const bf16* dy, bf16* y, float* ydot, cudaStream_t stream);

/// Backward of combine: dyp[slot_row[t, j]] = weight[t, j] * dy[t] and dweight[t, j] = <dy[t], yp[row]>
/// (0 for dropped slots). Every row of dyp is written once.
void combine_backward(const bf16* dy, const bf16* yp, const int32_t* slot_row, const float* weight, int64_t tokens,
                      int topk, int64_t hidden, bf16* dyp, float* dweight, cudaStream_t stream);

/// dx[t] (fp32) = (accumulate ? dx[t] : 0) + sum over kept slots of dxp[slot_row[t, j]].
void unpermute_add(const bf16* dxp, const int32_t* slot_row, int64_t tokens, int topk, int64_t hidden,
                   bool accumulate, float* dx, cudaStream_t stream);

// ---- SwiGLU (swiglu.cu): one block per row ----

/// a [rows, f] = silu(gate) * up of h13 [rows, 2f] (gate columns first, then up).
void swiglu_forward(const bf16* h13, int64_t rows, int64_t ffn, bf16* a, cudaStream_t stream);

/// In place: h13 [rows, 2f] (gate | up) becomes (d gate | d up) given da [rows, f].
void swiglu_backward(bf16* h13, const bf16* da, int64_t rows, int64_t ffn, cudaStream_t stream);

// ---- optimizer and casts (adamw.cu): grid-stride, 4 elements per thread ----

/// AdamW on n elements: master p, gradient g, moments m, v (fp32, updated in place), and p16 = bf16(p).
/// Every pointer 16-byte aligned (whole cudaMalloc'd tensors).
void adamw_update(float* p, const float* g, float* m, float* v, bf16* p16, int64_t n, const math::AdamWStep& step,
                  cudaStream_t stream);

/// out[i] = bf16(in[i]) for i < n; both 16-byte aligned.
void cast_to_bf16(const float* in, int64_t n, bf16* out, cudaStream_t stream);

// ---- FP8 per-tensor scaling (fp8.cu): the fp8-current and fp8-delayed recipes (precision/recipe.hpp) ----

/// One tensor's FP8 scale, Transformer Engine's per-tensor scaling: a value x is stored as fp8(x * scale) and
/// the GEMM multiplies its product by descale = 1 / scale (cuBLASLt's A/B scale pointers).
struct Fp8Scale {
  float amax = 0;     ///< the largest finite |x| recorded since the host last cleared it
  float scale = 1;    ///< encode scale: delayed scaling's, from the host; current scaling's, written by fp8_cast
  float descale = 1;  ///< 1 / scale, written by fp8_cast
  float unused = 0;   ///< pads the struct to 16 bytes
};

/// s->amax = max(s->amax, the largest finite |x[i]|, i < n); x bf16. Non-finite values are not recorded (as
/// the CPU quantisers' amax).
void fp8_amax(const bf16* x, int64_t n, Fp8Scale* s, cudaStream_t stream);

/// x [rows, cols] (bf16, row stride cols) cast to fp8 codes: E5M2 (`e5m2`) or E4M3, each value x * scale rounded
/// to nearest even and saturated to the format's max (formats::f32_to_e4m3 / f32_to_e5m2). scale is s->scale,
/// or with `current` min(max / s->amax, FLT_MAX) (1 when amax is 0; stored in s->scale); s->descale = 1 / scale.
/// transposed: out [cols, out_ld], out[c, r] = code of x[r, c], zero codes for rows <= r < out_ld (padding of a
/// reduction dimension); else out [rows, cols] (out_ld unused). Nothing enqueued for an empty output.
void fp8_cast(const bf16* x, int64_t rows, int64_t cols, Fp8Scale* s, bool current, bool e5m2, bool transposed,
              int64_t out_ld, uint8_t* out, cudaStream_t stream);

}  // namespace mlsb::moe_train::gpu
