#include "workloads/compress/tensor.hpp"

#include <stdexcept>

#include "backends/formats/small_floats.hpp"
#include "util/text.hpp"

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
  const std::string s = ascii_lower(name);
  if (s == "fp32" || s == "f32" || s == "float32") return DType::F32;
  if (s == "fp16" || s == "f16" || s == "float16") return DType::F16;
  if (s == "bf16" || s == "bfloat16") return DType::BF16;
  throw std::invalid_argument("dtype: unknown dtype '" + std::string(name) + "' (known: fp32, fp16, bf16)");
}

float bf16_to_float(uint16_t h) { return formats::bf16_to_f32(h); }
uint16_t float_to_bf16(float f) { return formats::f32_to_bf16(f); }
float fp16_to_float(uint16_t h) { return formats::fp16_to_f32(h); }
uint16_t float_to_fp16(float f) { return formats::f32_to_fp16(f); }

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
