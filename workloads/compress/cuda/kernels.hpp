#pragma once
// Launchers of the CUDA codec kernels (exponent.cu, quantize.cu), called by gpu_codecs.cpp. All
// pointers are device memory; every launcher enqueues on `stream` and returns at once. A rejected launch
// is only in the runtime's last error: the caller checks cudaGetLastError after each launcher (a fault while
// running surfaces at the next synchronisation). dtype codes: 0 fp32, 1 fp16, 2 bf16; quant kinds as QuantKind.
#include <cuda_runtime_api.h>

#include <cstdint>

namespace mlsb::compress::gpu::detail {

// ---- exponent ----

/// The GPU encoder's layout: chunks of 16384 elements, each split into 16 streams of 1024.
inline constexpr uint32_t kGpuChunkElems = 16384;
inline constexpr uint32_t kGpuStreams = 16;

/// Canonical code of every symbol: code[s] right-aligned in len[s] bits (len 0 = absent).
struct CodeTable {
  uint16_t code[256];
  uint8_t len[256];
};

/// hist[256] += the symbol histogram of `count` elements (hist is not cleared).
void exponent_histogram(int dtype, const void* in, int64_t count, unsigned long long* hist, cudaStream_t stream);

/// stream_bytes[c * 16 + s] = bytes of stream s of chunk c in the GPU layout.
void exponent_stream_bytes(int dtype, const void* in, int64_t count, const CodeTable& table, uint32_t* stream_bytes,
                           cudaStream_t stream);

/// offsets[c] = sum of stream_bytes of chunks before c (S per chunk); offsets[chunks] = the total.
void exponent_chunk_offsets(const uint32_t* stream_bytes, uint32_t streams, int64_t chunks, uint64_t* offsets,
                            cudaStream_t stream);

/// Writes the bitstreams (GPU layout, at `bits`, placed by stream_bytes/offsets) and the raw section
/// (at bits + offsets[chunks]). With coded == false (one distinct symbol) only the raw section, at `bits`.
void exponent_encode(int dtype, const void* in, int64_t count, const CodeTable& table, bool coded,
                     const uint32_t* stream_bytes, const uint64_t* offsets, uint8_t* bits, cudaStream_t stream);

/// Decodes any valid layout: `bits` is the start of the bitstreams (stream table at stream_bytes,
/// chunk offsets from exponent_chunk_offsets), `table` the 2^L-entry decode table (codec_math.hpp).
/// The raw section starts at bits + offsets[chunks]. Sets *error (if 0) to a math::DecodeError.
void exponent_decode(int dtype, const uint8_t* bits, const uint32_t* stream_bytes, const uint64_t* offsets,
                     int64_t count, uint32_t chunk_elems, uint32_t streams, int L, const uint16_t* table,
                     void* out, int* error, cudaStream_t stream);

/// Decodes a stream whose every symbol is `sole` (L == 0): only the raw section, at `raw`.
void exponent_decode_sole(int dtype, const uint8_t* raw, int64_t count, uint8_t sole, void* out, cudaStream_t stream);

// ---- quantisers (stream format in quantize.hpp; `stream` points at its first byte) ----

/// *absmax_bits = max(*absmax_bits, fp32 bits of the largest finite |x|).
void quant_absmax(int dtype, const void* in, int64_t count, unsigned int* absmax_bits, cudaStream_t stream);

/// cast-bf16 (kind 1) or cast-fp16 (kind 2, whose scale exponent it derives from *absmax_bits and
/// writes at byte 16): the payload after the header, which the caller writes.
void quant_cast_encode(int kind, int dtype, const void* in, int64_t count, const unsigned int* absmax_bits,
                       uint8_t* stream, cudaStream_t cuda_stream);

/// int8-block / fp8-e4m3 / fp8-e5m2 (kinds 3..5): scales and codes after the 20-byte header.
void quant_block_encode(int kind, int dtype, const void* in, int64_t count, uint32_t block, uint8_t* stream,
                        cudaStream_t cuda_stream);

/// Decodes a valid stream of any kind into `out` (count elements of dtype).
void quant_decode(int kind, int dtype, const uint8_t* stream, int64_t count, uint32_t block, void* out,
                  cudaStream_t cuda_stream);

}  // namespace mlsb::compress::gpu::detail
