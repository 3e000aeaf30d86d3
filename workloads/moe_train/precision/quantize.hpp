#pragma once
// The recipes' quantisers (recipe.hpp), as fake quantisation: an fp32 matrix in, the fp32 values its
// quantised form decodes to (element times its tile's decode scale) out, which an fp32 GEMM then reads. The
// emulation applies the scales before the multiplication where hardware applies them to the accumulated
// products, so it differs from a low-precision GEMM by fp32 rounding of the scaled operands and products, and by
// the accumulator (accumulate.hpp). Scales per tile:
//   tensor (delayed, current)  x -> q(x * s) / s with s = max / amax (Transformer Engine's scale and
//                              scale_inv); delayed scaling passes s from its amax history
//   block (fp8-blockwise)      the same per tile: s = 448 / the tile's amax (DeepSeek-V3)
//   mx (mxfp8)                 s = 2^-e with e = floor(log2(amax)) - emax_elem (OCP MX v1.0, 6.3): exact
//   nvfp4                      s_t = 448 * 6 / the tensor's amax; each tile's scale d = e4m3(amax_tile / 6 * s_t)
//                              (round to nearest even); x -> q(x * s_t / d) * d / s_t (arXiv 2509.25149)
// q rounds to the element (formats::fake_round: nearest even or stochastic, saturating). An all-zero tile
// (and a tile whose scale underflows) decodes to zeros (an Inf in such a tile to NaN); a tile whose scale max / amax would overflow fp32 (amax
// below about 1.3e-36 for e4m3) gets FLT_MAX, as Transformer Engine clamps it, and its elements mostly underflow; NaN passes through and does not count in an amax;
// Inf saturates. A dimension that the tile does not divide leaves a partial last tile, scaled by the elements
// it has (as Transformer Engine's kernels, which pad with zeros that do not change an amax).
#include <cstdint>

#include "workloads/moe_train/precision/recipe.hpp"

namespace mlsb::moe_train::precision {

/// What a quantiser saw and stored.
struct QuantCounts {
  int64_t values = 0;
  int64_t underflow = 0;  ///< non-zero finite inputs that decode to 0
  int64_t saturated = 0;  ///< finite inputs that, once scaled, round beyond the element's max (clamped to it)
  double bytes = 0;       ///< what the format stores: the elements at their width plus the scales
  float amax = 0;         ///< the largest finite |x| seen (0 when Scaling::None or Bf16, which need none)
  void add(const QuantCounts& o) {
    values += o.values, underflow += o.underflow, saturated += o.saturated, bytes += o.bytes;
    amax = o.amax > amax ? o.amax : amax;
  }
};

/// A row-major operand [rows, cols] with row stride ld; `k_rows`: the GEMM's reduction dimension runs down
/// its rows (a 1-D tile is block x 1), else along them (1 x block).
struct Operand {
  const float* data = nullptr;
  int64_t rows = 0, cols = 0, ld = 0;
  bool k_rows = false;
};

/// The largest finite |x| of the operand (0 when it has none).
float amax_of(const Operand& m);

/// Writes the decoded quantisation of `m` under `format` into dst (packed [rows, cols]; dst may be m.data when
/// m.ld == cols). `tensor_scale`: the scale TensorDelayed uses (ignored by the others). `random_seed`: the
/// stream of stochastic rounding (a counter-based hash of seed and element index: the same seed gives the same
/// rounding). Scaling::None copies. The Hadamard transform is not applied here (hadamard16).
QuantCounts quantize(const OperandFormat& format, const Operand& m, float tensor_scale, uint64_t random_seed,
                     float* dst);

/// NVFP4's random Hadamard transform: x -> (1/4) H16 diag(signs) x on each whole group of 16 elements along
/// the reduction dimension of the packed matrix m [rows, cols] (in place; H16 the Sylvester Hadamard matrix,
/// bit j of `signs` the sign of column j: -1 when set). Orthonormal, so applying it to both inputs of the
/// weight-gradient GEMM along their common reduction dimension leaves the product unchanged. A last partial
/// group is left as it is.
void hadamard16(float* m, int64_t rows, int64_t cols, bool k_rows, uint16_t signs);

}  // namespace mlsb::moe_train::precision
