#include "workloads/compress/tensor.hpp"

#include <bit>
#include <cctype>
#include <stdexcept>

namespace mlsb::compress {

size_t dtype_size(DType t) { return t == DType::F32 ? 4 : 2; }

std::string_view to_string(DType t) {
  switch (t) {
    case DType::F32: return "fp32";
    case DType::F16: return "fp16";
    case DType::BF16: return "bf16";
  }
  return "?";
}

DType parse_dtype(std::string_view name) {
  std::string s(name);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (s == "fp32" || s == "f32" || s == "float32") return DType::F32;
  if (s == "fp16" || s == "f16" || s == "float16") return DType::F16;
  if (s == "bf16" || s == "bfloat16") return DType::BF16;
  throw std::invalid_argument("dtype: unknown dtype '" + std::string(name) + "' (known: fp32, fp16, bf16)");
}

float bf16_to_float(uint16_t h) { return std::bit_cast<float>(static_cast<uint32_t>(h) << 16); }

uint16_t float_to_bf16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  // NaN: truncate the payload and set the quiet bit, so a NaN whose payload sits in the low half stays NaN.
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x0040u);
  // Round to nearest even; a carry out of the mantissa moves into the exponent (up to ±Inf).
  const uint32_t lsb = (x >> 16) & 1u;
  return static_cast<uint16_t>((x + 0x7FFFu + lsb) >> 16);
}

float fp16_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) return std::bit_cast<float>(sign | 0x7F800000u | (mant << 13));  // Inf, NaN (payload kept)
  if (exp != 0) return std::bit_cast<float>(sign | ((exp + 112u) << 23) | (mant << 13));
  // Zero or subnormal: mant * 2^-24 is exact in fp32.
  const float mag = static_cast<float>(mant) * 0x1p-24f;
  return sign ? -mag : mag;
}

uint16_t float_to_fp16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7FFFFFFFu;
  if (abs > 0x7F800000u) return static_cast<uint16_t>(sign | 0x7E00u | ((abs >> 13) & 0x3FFu));  // quiet NaN
  if (abs == 0x7F800000u) return static_cast<uint16_t>(sign | 0x7C00u);
  const int e = static_cast<int>(abs >> 23) - 127;
  if (e > 15) return static_cast<uint16_t>(sign | 0x7C00u);  // overflow
  // Significand with its implicit bit (24 bits) and how far it must shift to reach fp16's grid: normals
  // keep 10 fraction bits (shift 13); subnormals are multiples of 2^-24 (shift 13 + (-14 - e)).
  const uint32_t m = (abs & 0x7FFFFFu) | 0x800000u;
  uint32_t shift = 13;
  uint32_t base = 0;  // the exponent field before rounding, shifted into place
  if (e >= -14) {
    base = static_cast<uint32_t>(e + 14) << 10;  // (e + 15) - 1: the implicit bit adds the last 1
  } else {
    shift = static_cast<uint32_t>(13 + (-14 - e));
    if (shift > 24) return sign;  // below half the smallest subnormal (fp32 subnormals included)
  }
  uint32_t h = base + (m >> shift);
  const uint32_t rem = m & ((1u << shift) - 1u);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (h & 1u))) ++h;  // carries reach the exponent and, at the top, Inf
  return static_cast<uint16_t>(sign | h);
}

void to_float(TensorView in, std::span<float> out) {
  if (static_cast<int64_t>(out.size()) != in.count)
    throw std::invalid_argument("to_float: output has " + std::to_string(out.size()) + " elements, input " +
                                std::to_string(in.count));
  switch (in.dtype) {
    case DType::F32:
      if (in.count > 0) std::memcpy(out.data(), in.data, in.bytes());
      return;
    case DType::F16:
      for (int64_t i = 0; i < in.count; ++i) out[i] = load_float(in.data, DType::F16, i);
      return;
    case DType::BF16:
      for (int64_t i = 0; i < in.count; ++i) out[i] = load_float(in.data, DType::BF16, i);
      return;
  }
}

void from_float(std::span<const float> in, MutableTensorView out) {
  if (static_cast<int64_t>(in.size()) != out.count)
    throw std::invalid_argument("from_float: input has " + std::to_string(in.size()) + " elements, output " +
                                std::to_string(out.count));
  switch (out.dtype) {
    case DType::F32:
      if (out.count > 0) std::memcpy(out.data, in.data(), out.bytes());
      return;
    case DType::F16:
      for (int64_t i = 0; i < out.count; ++i) store_float(out.data, DType::F16, i, in[i]);
      return;
    case DType::BF16:
      for (int64_t i = 0; i < out.count; ++i) store_float(out.data, DType::BF16, i, in[i]);
      return;
  }
}

}  // namespace mlsb::compress
