#pragma once
// The element loops of the lossy element-wise codecs (quantize.cpp) on fp32 arrays, in a portable version and
// an AVX2 one chosen at run time (util/simd.hpp; set_simd_limit(Simd::scalar) forces the portable one). The
// portable loops call quant_math.hpp's per-element functions, which the CUDA kernels share; the AVX2 loops
// compute the same functions eight lanes at a time and write the same bytes for every input, NaN payloads,
// infinities and subnormals included (tests/unit/compress/simd_paths_test.cpp compares the two).
#include <cstdint>

#include "workloads/compress/tensor.hpp"

namespace mlsb::compress::quant_kernels {

/// Widens n elements of dtype t (little-endian bits at `in`, any alignment) to fp32, as load_float does.
void widen(DType t, const uint8_t* in, int64_t n, float* out);

/// cast-fp16's decoder: out[i] = formats::fp16_to_f32(the fp16 bits at in + 2i) * scale.
void widen_fp16_scaled(const uint8_t* in, int64_t n, float scale, float* out);

/// The largest finite |x[i]| (the maximum of quant::finite_abs_bits); 0 when no element is finite and non-zero.
float finite_absmax(const float* x, int64_t n);

/// Block quantisation (KIND as quant_math.hpp: 3 int8, 4 e4m3, 5 e5m2) of x[0, n) in blocks of `block`
/// elements (the last may be short): the fp32 scale of block j, quant::block_scale<KIND>(its absmax), at
/// scales + 4j (little-endian, any alignment), and codes[i] = quant::encode<KIND>(x[i], its block's scale).
template <int KIND>
void encode_blocks(const float* x, int64_t n, int64_t block, uint8_t* scales, uint8_t* codes);

/// The decoder of encode_blocks: out[i] = quant::decode<KIND>(codes[i], the fp32 scale of its block at scales + 4j).
template <int KIND>
void decode_blocks(const uint8_t* scales, const uint8_t* codes, int64_t n, int64_t block, float* out);

/// Narrows n fp32 values to dtype t at `out` (any alignment), as store_float does.
void narrow(DType t, const float* x, int64_t n, uint8_t* out);

/// cast-bf16: the little-endian bf16 bits of f32_to_bf16(x[i]) at dst + 2i.
void cast_bf16(const float* x, int64_t n, uint8_t* dst);

/// cast-fp16: the little-endian fp16 bits of f32_to_fp16((x[i] * first) * second) at dst + 2i (first and
/// second are the powers of two whose product is 2^k, quantize.hpp).
void cast_fp16(const float* x, int64_t n, float first, float second, uint8_t* dst);

}  // namespace mlsb::compress::quant_kernels
