#pragma once
// Internals shared by the CPU `exponent` codec's files (not a public interface): element traits, the
// split of elements into symbols and raw bytes and their merge, the chunk/stream layout, threading.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>

#include "util/parallel.hpp"
#include "workloads/compress/exponent.hpp"

namespace mlsb::compress::exponent_detail {

// Symbol and raw bytes per dtype, as exponent.hpp defines them.
struct Bf16 {
  using U = uint16_t;
  static constexpr size_t kRaw = 1;
  static uint32_t symbol(U x) { return (x >> 7) & 0xFF; }
};
struct Fp16 {
  using U = uint16_t;
  static constexpr size_t kRaw = 1;
  static uint32_t symbol(U x) { return x >> 8; }
};
struct Fp32 {
  using U = uint32_t;
  static constexpr size_t kRaw = 3;
  static uint32_t symbol(U x) { return (x >> 23) & 0xFF; }
};

template <typename E>
typename E::U load_elem(const uint8_t* data, int64_t i) {
  typename E::U x;
  std::memcpy(&x, data + i * sizeof x, sizeof x);
  return x;
}

/// Splits elements [0, n) of `in` into their symbols (`sym`, n bytes) and raw bytes (`raw`).
void split(Bf16, const uint8_t* in, int64_t n, uint8_t* sym, uint8_t* raw);
void split(Fp16, const uint8_t* in, int64_t n, uint8_t* sym, uint8_t* raw);
void split(Fp32, const uint8_t* in, int64_t n, uint8_t* sym, uint8_t* raw);
/// The same for a dtype known at run time.
void split_symbols(DType t, const uint8_t* in, int64_t n, uint8_t* sym, uint8_t* raw);
/// Writes raw bytes only.
void split_raw(DType t, const uint8_t* in, int64_t n, uint8_t* raw);
/// How merge() writes: `cached` with ordinary stores; `streaming` with non-temporal stores, which bypass the caches,
/// for the whole 64-byte lines of 16-bit outputs on the AVX2 path (for outputs larger than the caches; store_fence()
/// must follow them before other threads read the output).
enum class Stores { cached, streaming };
/// Writes elements [0, n) to `out` from their symbols and raw bytes.
void merge(Bf16, const uint8_t* sym, const uint8_t* raw, int64_t n, uint8_t* out, Stores how);
void merge(Fp16, const uint8_t* sym, const uint8_t* raw, int64_t n, uint8_t* out, Stores how);
void merge(Fp32, const uint8_t* sym, const uint8_t* raw, int64_t n, uint8_t* out, Stores how);
/// Orders earlier streaming stores before later stores (x86 sfence; a no-op elsewhere).
void store_fence();

/// Chunks and streams of a tensor (exponent.hpp).
struct Geometry {
  int64_t count;
  int64_t chunk_elems;
  int64_t streams;  ///< S
  int64_t chunks;

  Geometry(int64_t count_, uint32_t chunk_elems_, uint32_t streams_)
      : count(count_), chunk_elems(chunk_elems_), streams(streams_),
        chunks(count_ == 0 ? 0 : (count_ - 1) / chunk_elems_ + 1) {}
  int64_t chunk_begin(int64_t c) const { return c * chunk_elems; }
  int64_t chunk_size(int64_t c) const { return std::min(chunk_elems, count - c * chunk_elems); }
  /// Stream s of a chunk of n elements holds [stream_begin(n, s), stream_begin(n, s + 1)).
  int64_t stream_begin(int64_t n, int64_t s) const { return std::min(n, s * ((n + streams - 1) / streams)); }
};


/// Throws std::invalid_argument naming the field (see make_exponent_codec).
void validate(const ExponentParams& p);

inline void store_be64(uint8_t* p, uint64_t v) {
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  std::memcpy(p, &v, 8);
}

inline uint64_t load_be64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  return v;
}

/// Throws CodecError("exponent: WHAT"): a stream or buffer the codec cannot take.
[[noreturn]] inline void fail(const std::string& what) { throw CodecError("exponent: " + what); }

}  // namespace mlsb::compress::exponent_detail
