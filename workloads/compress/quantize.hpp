#pragma once
// Lossy element-wise codecs and their stream format, shared by the CPU and CUDA paths (either decodes
// the other's streams).
//
// Header (16 bytes, little-endian): u32 magic "MQB1"; u8 kind (see QuantKind); u8 dtype of the
// original (0 fp32, 1 fp16, 2 bf16); u16 reserved 0; u64 count. Then, by kind:
//   cast-bf16: count bf16 values (round to nearest even from the fp32 value of each element).
//   cast-fp16: i32 scale exponent k, then count fp16 values of x * 2^k (RNE). k = 14 - floor(log2(absmax))
//              over finite elements (absmax*2^k lies in [2^14, 2^15): no overflow, little underflow);
//              k = 0 when absmax is 0 or there is no finite element. Decoding divides by 2^k (exact).
//              Scale with ldexp (x * 2^k as a product of two fp32 would overflow: k ranges -113..163).
//              Values within an fp16 rounding of FLT_MAX round up to 2^15 * 2^-k = 2^128 and decode as ±Inf.
//   int8-block / fp8-e4m3 / fp8-e5m2: u32 block B (elements per scale, the last block may be short),
//              then ceil(count / B) fp32 scales, then count one-byte codes. scale = absmax / qmax over
//              the block's finite elements (qmax 127, 448, 57344; scale 0 for an all-zero block; when
//              scale * qmax rounds to Inf in fp32, i.e. absmax near FLT_MAX, the encoder takes the next
//              smaller fp32 scale so decoding stays finite). With scale 0 every finite element encodes as 0.
//              int8: q = clamp(round_half_even(x / scale), -127, 127); -128 marks a non-finite element
//              (decoded as NaN). fp8 (OCP FP8 formats, e4m3fn and e5m2): q = fp8(x / scale) with RNE,
//              saturating to ±qmax; non-finite elements encode as NaN (e4m3 0x7F, e5m2 0x7E) with the
//              sign kept. Decoding gives q * scale (as fp32, then the original dtype).
#include <cstdint>

#include "workloads/compress/codec.hpp"

namespace mlsb::compress {

inline constexpr uint32_t kQuantMagic = 0x3142514D;  // "MQB1"
inline constexpr size_t kQuantHeaderBytes = 16;

enum class QuantKind : uint8_t { CastBf16 = 1, CastFp16 = 2, Int8Block = 3, Fp8E4M3 = 4, Fp8E5M2 = 5 };

/// OCP 8-bit floats (RNE, saturating to the largest finite value; NaN kept).
uint8_t float_to_e4m3(float f);
float e4m3_to_float(uint8_t q);
uint8_t float_to_e5m2(float f);
float e5m2_to_float(uint8_t q);

/// make_codec for "cast-bf16", "cast-fp16", "int8-block", "fp8-e4m3", "fp8-e5m2".
std::unique_ptr<Codec> make_quant_codec(QuantKind kind, int64_t block);

}  // namespace mlsb::compress
