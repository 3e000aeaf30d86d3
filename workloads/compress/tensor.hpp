#pragma once
// Host tensors of the compress workload: raw little-endian bytes of fp32, fp16 or bf16 elements.
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mlsb::compress {

enum class DType : uint8_t { F32 = 0, F16 = 1, BF16 = 2 };
size_t dtype_size(DType t);            ///< 4, 2, 2
std::string_view to_string(DType t);   ///< "fp32", "fp16", "bf16"
/// Parses "fp32"/"f32"/"float32", "fp16"/"f16"/"float16", "bf16"/"bfloat16"; throws std::invalid_argument.
DType parse_dtype(std::string_view name);

/// Read-only view of `count` elements of `dtype` (64-bit count: tensors may exceed 2^31 bytes).
/// `shape` is row-major and may be empty (treated as 1-D); its product equals count when not empty.
struct TensorView {
  const uint8_t* data = nullptr;
  int64_t count = 0;
  DType dtype = DType::F32;
  std::span<const int64_t> shape{};
  size_t bytes() const { return static_cast<size_t>(count) * dtype_size(dtype); }
};

struct MutableTensorView {
  uint8_t* data = nullptr;
  int64_t count = 0;
  DType dtype = DType::F32;
  size_t bytes() const { return static_cast<size_t>(count) * dtype_size(dtype); }
};

/// An owned tensor (from a generator or a file).
struct Tensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;   ///< row-major; product == count()
  std::vector<uint8_t> data;    ///< count() * dtype_size(dtype) bytes

  int64_t count() const { return static_cast<int64_t>(data.size() / dtype_size(dtype)); }
  TensorView view() const { return {data.data(), count(), dtype, shape}; }
  MutableTensorView mutable_view() { return {data.data(), count(), dtype}; }
};

// Scalar conversions (round to nearest even; NaN stays NaN, keeping the sign and a quiet bit).
float bf16_to_float(uint16_t h);
uint16_t float_to_bf16(float f);
float fp16_to_float(uint16_t h);
uint16_t float_to_fp16(float f);  ///< overflow gives ±Inf, underflow subnormals or ±0

/// Element i of a tensor as float (fp16/bf16 widened exactly).
inline float load_float(const uint8_t* data, DType t, int64_t i) {
  switch (t) {
    case DType::F32: { float f; std::memcpy(&f, data + 4 * i, 4); return f; }
    case DType::F16: { uint16_t h; std::memcpy(&h, data + 2 * i, 2); return fp16_to_float(h); }
    case DType::BF16: { uint16_t h; std::memcpy(&h, data + 2 * i, 2); return bf16_to_float(h); }
  }
  return 0;
}
inline void store_float(uint8_t* data, DType t, int64_t i, float f) {
  switch (t) {
    case DType::F32: std::memcpy(data + 4 * i, &f, 4); return;
    case DType::F16: { const uint16_t h = float_to_fp16(f); std::memcpy(data + 2 * i, &h, 2); return; }
    case DType::BF16: { const uint16_t h = float_to_bf16(f); std::memcpy(data + 2 * i, &h, 2); return; }
  }
}

/// Widens a whole tensor to fp32 (out.size() == in.count).
void to_float(TensorView in, std::span<float> out);
/// Narrows fp32 values into a tensor of out.dtype (in.size() == out.count).
void from_float(std::span<const float> in, MutableTensorView out);

}  // namespace mlsb::compress
