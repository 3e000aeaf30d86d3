#include "backends/comm/reduce.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "backends/formats/small_floats.hpp"

namespace mlsb::comm {
namespace {

template <typename T>
T combine(T a, T b, ReduceOp op) {
  if constexpr (std::is_floating_point_v<T>) {
    if (op != ReduceOp::Sum && (std::isnan(a) || std::isnan(b))) return std::isnan(a) ? a : b;
  }
  switch (op) {
    case ReduceOp::Sum:
      if constexpr (std::is_integral_v<T>) {  // wrap instead of signed overflow
        using U = std::make_unsigned_t<T>;
        return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
      } else {
        return a + b;
      }
    case ReduceOp::Max: return b > a ? b : a;
    case ReduceOp::Min: return b < a ? b : a;
  }
  return a;
}

// Loads and stores through memcpy: collective buffers need not be aligned for T.
template <typename T>
void reduce_plain(void* acc, const void* in, size_t count, ReduceOp op) {
  auto* a = static_cast<unsigned char*>(acc);
  const auto* b = static_cast<const unsigned char*>(in);
  for (size_t i = 0; i < count; ++i) {
    T x, y;
    std::memcpy(&x, a + i * sizeof(T), sizeof(T));
    std::memcpy(&y, b + i * sizeof(T), sizeof(T));
    x = combine(x, y, op);
    std::memcpy(a + i * sizeof(T), &x, sizeof(T));
  }
}

template <float (*Widen)(uint16_t), uint16_t (*Narrow)(float)>
void reduce_half(void* acc, const void* in, size_t count, ReduceOp op) {
  auto* a = static_cast<unsigned char*>(acc);
  const auto* b = static_cast<const unsigned char*>(in);
  for (size_t i = 0; i < count; ++i) {
    uint16_t x, y;
    std::memcpy(&x, a + 2 * i, 2);
    std::memcpy(&y, b + 2 * i, 2);
    x = Narrow(combine(Widen(x), Widen(y), op));
    std::memcpy(a + 2 * i, &x, 2);
  }
}

}  // namespace

void reduce_into(void* acc, const void* in, size_t count, ElemType type, ReduceOp op) {
  switch (type) {
    case ElemType::U8: return reduce_plain<uint8_t>(acc, in, count, op);
    case ElemType::I32: return reduce_plain<int32_t>(acc, in, count, op);
    case ElemType::I64: return reduce_plain<int64_t>(acc, in, count, op);
    case ElemType::F32: return reduce_plain<float>(acc, in, count, op);
    case ElemType::F64: return reduce_plain<double>(acc, in, count, op);
    case ElemType::F16: return reduce_half<formats::fp16_to_f32, formats::f32_to_fp16>(acc, in, count, op);
    case ElemType::BF16: return reduce_half<formats::bf16_to_f32, formats::f32_to_bf16>(acc, in, count, op);
  }
  throw CommError("reduce: unknown element type");
}

}  // namespace mlsb::comm
