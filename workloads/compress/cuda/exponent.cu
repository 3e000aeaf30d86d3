// CUDA kernels of the `exponent` codec (format: workloads/compress/exponent.hpp).
// Encoder: histogram (per-warp shared-memory bins) -> the host builds the length-limited canonical code
// -> per-stream byte counts (one warp per stream) -> chunk offsets (one-block scan) -> encoding, one warp
// per stream: each lane concatenates the codes of 4 consecutive elements, a warp scan places them, and
// shared-memory atomics pack them MSB-first before a coalesced copy out; the raw bytes are written on the
// way. Decoder: one block per chunk, one thread per stream decoding a window of symbols into shared
// memory with the decode table there, then the whole block merges symbols and raw bytes (coalesced).
#include <climits>

#include "backends/cuda/launch.hpp"
#include "workloads/compress/cuda/codec_math.hpp"
#include "workloads/compress/cuda/kernels.hpp"

namespace mlsb::compress::gpu::detail {
namespace {

using math::ExpTraits;

using cuda::kWarp;
constexpr int kMaxLen = 12;                                          // kExponentMaxCodeLen
constexpr uint32_t kStreamElems = kGpuChunkElems / kGpuStreams;      // 1024
constexpr uint32_t kStreamWords = kStreamElems * kMaxLen / 32;       // worst-case bits of one stream
constexpr uint32_t kStageBytes = 16384;                              // decoder's symbol window, all streams
constexpr int kDecodeThreads = 256;

template <int DT>
__device__ __forceinline__ uint32_t bits_at(const uint8_t* in, int64_t i) {
  return reinterpret_cast<const typename ExpTraits<DT>::Bits*>(in)[i];
}

template <int DT>
__global__ void __launch_bounds__(256) histogram_kernel(const uint8_t* in, int64_t count, unsigned long long* hist) {
  __shared__ unsigned int bins[256 / kWarp][256];
  for (int i = threadIdx.x; i < 256 / kWarp * 256; i += blockDim.x) (&bins[0][0])[i] = 0;
  __syncthreads();
  unsigned int* mine = bins[threadIdx.x / kWarp];
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    atomicAdd(&mine[ExpTraits<DT>::symbol(bits_at<DT>(in, i))], 1u);
  __syncthreads();
  for (int s = threadIdx.x; s < 256; s += blockDim.x) {
    unsigned long long sum = 0;
    for (int w = 0; w < 256 / kWarp; ++w) sum += bins[w][s];
    if (sum) atomicAdd(&hist[s], sum);
  }
}

/// Elements [begin, end) of stream `warp` of chunk c in the GPU layout.
struct GpuStream {
  int64_t base;  // first element of the chunk
  uint32_t begin, end;
  __device__ GpuStream(int64_t c, int64_t count, int warp) {
    base = c * kGpuChunkElems;
    const int64_t left = count - base;
    const uint32_t n = left < kGpuChunkElems ? static_cast<uint32_t>(left) : kGpuChunkElems;
    const uint32_t q = (n + kGpuStreams - 1) / kGpuStreams;
    begin = min(n, warp * q);
    end = min(n, begin + q);
  }
};

template <int DT>
__global__ void __launch_bounds__(kGpuStreams * kWarp) stream_bytes_kernel(const uint8_t* in, int64_t count, int64_t chunks,
                                                                          CodeTable table, uint32_t* stream_bytes) {
  __shared__ uint8_t len[256];
  for (int s = threadIdx.x; s < 256; s += blockDim.x) len[s] = table.len[s];
  __syncthreads();
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const GpuStream st(c, count, warp);
    uint32_t bits = 0;
    for (uint32_t j = st.begin + lane; j < st.end; j += kWarp) bits += len[ExpTraits<DT>::symbol(bits_at<DT>(in, st.base + j))];
    for (int o = kWarp / 2; o > 0; o /= 2) bits += __shfl_xor_sync(0xFFFFFFFFu, bits, o);
    if (lane == 0) stream_bytes[c * kGpuStreams + warp] = (bits + 7) / 8;
  }
}

__global__ void __launch_bounds__(1024) chunk_offsets_kernel(const uint32_t* stream_bytes, uint32_t streams, int64_t chunks,
                                                             uint64_t* offsets) {
  __shared__ uint64_t part[1024];
  const int t = threadIdx.x;
  const int64_t per = (chunks + 1023) / 1024;
  const int64_t begin = min(chunks, t * per), end = min(chunks, begin + per);
  auto chunk_sum = [&](int64_t c) {
    uint64_t s = 0;
    for (uint32_t k = 0; k < streams; ++k) s += stream_bytes[c * streams + k];
    return s;
  };
  uint64_t sum = 0;
  for (int64_t c = begin; c < end; ++c) sum += chunk_sum(c);
  part[t] = sum;
  __syncthreads();
  for (int d = 1; d < 1024; d *= 2) {
    const uint64_t v = t >= d ? part[t - d] : 0;
    __syncthreads();
    part[t] += v;
    __syncthreads();
  }
  uint64_t run = part[t] - sum;
  for (int64_t c = begin; c < end; ++c) {
    offsets[c] = run;
    run += chunk_sum(c);
  }
  if (t == 1023) offsets[chunks] = part[1023];
}

/// ORs the low `nb` bits of `v` into an MSB-first bit buffer at bit `pos`.
__device__ __forceinline__ void put_bits(uint32_t* buf, uint32_t pos, uint64_t v, int nb) {
  while (nb > 0) {
    const int room = 32 - static_cast<int>(pos & 31);
    const int take = nb < room ? nb : room;
    const uint32_t piece = static_cast<uint32_t>(v >> (nb - take)) & (0xFFFFFFFFu >> (32 - take));
    atomicOr(&buf[pos >> 5], piece << (room - take));
    pos += take;
    nb -= take;
  }
}

template <int DT, bool CODED>
__global__ void __launch_bounds__(kGpuStreams * kWarp) encode_kernel(const uint8_t* in, int64_t count, int64_t chunks,
                                                                    CodeTable table, const uint32_t* stream_bytes,
                                                                    const uint64_t* offsets, uint8_t* bits) {
  using T = ExpTraits<DT>;
  __shared__ uint32_t code[256];  // code << 4 | length
  __shared__ uint32_t buf[CODED ? kGpuStreams : 1][CODED ? kStreamWords : 1];
  for (int s = threadIdx.x; s < 256; s += blockDim.x) code[s] = static_cast<uint32_t>(table.code[s]) << 4 | table.len[s];
  __syncthreads();
  const int warp = threadIdx.x / kWarp, lane = threadIdx.x % kWarp;
  uint8_t* raw = CODED ? bits + offsets[chunks] : bits;
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const GpuStream st(c, count, warp);
    if constexpr (CODED)
      for (uint32_t w = lane; w < kStreamWords; w += kWarp) buf[warp][w] = 0;
    __syncwarp();
    uint32_t pos = 0;  // bits written to this stream so far (warp-uniform)
    for (uint32_t j0 = st.begin; j0 < st.end; j0 += 4 * kWarp) {
      uint64_t v = 0;
      int nb = 0;
      for (int k = 0; k < 4; ++k) {
        const uint32_t j = j0 + 4 * lane + k;
        if (j >= st.end) break;
        const int64_t e = st.base + j;
        const uint32_t x = bits_at<DT>(in, e);
        const uint32_t r = T::raw(x);
        for (int b = 0; b < T::raw_bytes; ++b) raw[e * T::raw_bytes + b] = static_cast<uint8_t>(r >> (8 * b));
        if constexpr (CODED) {
          const uint32_t cl = code[T::symbol(x)];
          v = v << (cl & 15) | (cl >> 4);
          nb += cl & 15;
        }
      }
      if constexpr (CODED) {
        int incl = nb;
        for (int o = 1; o < kWarp; o *= 2) {
          const int u = __shfl_up_sync(0xFFFFFFFFu, incl, o);
          if (lane >= o) incl += u;
        }
        put_bits(buf[warp], pos + incl - nb, v, nb);
        pos += __shfl_sync(0xFFFFFFFFu, incl, kWarp - 1);
      }
    }
    if constexpr (CODED) {
      __syncwarp();
      uint64_t off = offsets[c];
      for (int s = 0; s < warp; ++s) off += stream_bytes[c * kGpuStreams + s];
      const uint32_t nbytes = (pos + 7) / 8;
      for (uint32_t b = lane; b < nbytes; b += kWarp)
        bits[off + b] = static_cast<uint8_t>(buf[warp][b >> 2] >> (24 - 8 * (b & 3)));
      __syncwarp();
    }
  }
}

template <int DT>
__global__ void __launch_bounds__(kDecodeThreads) exponent_decode_kernel(const uint8_t* bits, const uint32_t* stream_bytes,
                                                              const uint64_t* offsets, int64_t count, int64_t chunks,
                                                              uint32_t chunk_elems, uint32_t streams, int L,
                                                              const uint16_t* table, uint8_t* out, int* error) {
  using T = ExpTraits<DT>;
  using Bits = typename T::Bits;
  extern __shared__ uint8_t smem[];
  uint16_t* tab = reinterpret_cast<uint16_t*>(smem);
  uint8_t* stage = smem + (sizeof(uint16_t) << L);
  for (int i = threadIdx.x; i < (1 << L); i += blockDim.x) tab[i] = table[i];
  __syncthreads();
  const uint8_t* raw = bits + offsets[chunks];
  const uint32_t window = kStageBytes / streams;
  const int wshift = (window & (window - 1)) == 0 ? __ffs(window) - 1 : -1;  // streams a power of two: shift
  const int t = threadIdx.x;
  for (int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const int64_t base = c * chunk_elems;
    const int64_t left = count - base;
    const uint32_t n = left < chunk_elems ? static_cast<uint32_t>(left) : chunk_elems;
    const uint32_t q = n / streams + (n % streams != 0);
    math::BitReader rd{};
    uint32_t my_len = 0;
    if (t < static_cast<int>(streams)) {
      uint64_t start = offsets[c];
      for (int s = 0; s < t; ++s) start += stream_bytes[c * streams + s];
      rd.init(bits + start, bits + start + stream_bytes[c * streams + t]);
      my_len = static_cast<uint32_t>(math::stream_span(n, q, t).len);
    }
    const uint32_t windows = q / window + (q % window != 0);
    for (uint32_t w = 0; w < windows; ++w) {
      const uint32_t w0 = w * window;
      if (t < static_cast<int>(streams)) {
        const uint32_t cnt = my_len > w0 ? min(window, my_len - w0) : 0;
        int err = rd.decode(tab, L, stage + t * window, cnt);
        if (!err && w + 1 == windows) err = rd.finish();
        if (err) atomicCAS(error, 0, err);
      }
      __syncthreads();
      for (uint32_t idx = t; idx < streams * window; idx += blockDim.x) {
        const uint32_t s = wshift >= 0 ? idx >> wshift : idx / window;
        const uint32_t j = w0 + (idx - s * window);
        const math::StreamSpan span = math::stream_span(n, q, s);
        if (j >= span.len) continue;
        const int64_t e = base + static_cast<int64_t>(span.first) + j;
        uint32_t r = 0;
        for (int b = 0; b < T::raw_bytes; ++b) r |= static_cast<uint32_t>(raw[e * T::raw_bytes + b]) << (8 * b);
        reinterpret_cast<Bits*>(out)[e] = static_cast<Bits>(T::join(stage[idx], r));
      }
      __syncthreads();
    }
  }
}

template <int DT>
__global__ void decode_sole_kernel(const uint8_t* raw, int64_t count, uint32_t sole, uint8_t* out) {
  using T = ExpTraits<DT>;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; e < count; e += stride) {
    uint32_t r = 0;
    for (int b = 0; b < T::raw_bytes; ++b) r |= static_cast<uint32_t>(raw[e * T::raw_bytes + b]) << (8 * b);
    reinterpret_cast<typename T::Bits*>(out)[e] = static_cast<typename T::Bits>(T::join(sole, r));
  }
}

template <template <int> class K, typename... Args>
void by_dtype(int dtype, Args&&... args) {
  switch (dtype) {
    case 0: K<0>::run(args...); break;
    case 1: K<1>::run(args...); break;
    default: K<2>::run(args...); break;
  }
}

int64_t gpu_chunks(int64_t count) { return count == 0 ? 0 : (count - 1) / kGpuChunkElems + 1; }

template <int DT>
struct Histogram {
  static void run(const void* in, int64_t count, unsigned long long* hist, cudaStream_t s) {
    if (count == 0) return;
    histogram_kernel<DT><<<cuda::grid_blocks((count + 255) / 256), 256, 0, s>>>(static_cast<const uint8_t*>(in), count, hist);
  }
};
template <int DT>
struct StreamBytes {
  static void run(const void* in, int64_t count, const CodeTable& t, uint32_t* sb, cudaStream_t s) {
    const int64_t chunks = gpu_chunks(count);
    if (chunks == 0) return;
    stream_bytes_kernel<DT><<<cuda::grid_blocks(chunks), kGpuStreams * kWarp, 0, s>>>(static_cast<const uint8_t*>(in), count,
                                                                           chunks, t, sb);
  }
};
template <int DT>
struct Encode {
  static void run(const void* in, int64_t count, const CodeTable& t, bool coded, const uint32_t* sb,
                  const uint64_t* off, uint8_t* bits, cudaStream_t s) {
    const int64_t chunks = gpu_chunks(count);
    if (chunks == 0) return;
    const auto* x = static_cast<const uint8_t*>(in);
    if (coded)
      encode_kernel<DT, true><<<cuda::grid_blocks(chunks), kGpuStreams * kWarp, 0, s>>>(x, count, chunks, t, sb, off, bits);
    else
      encode_kernel<DT, false><<<cuda::grid_blocks(chunks), kGpuStreams * kWarp, 0, s>>>(x, count, chunks, t, sb, off, bits);
  }
};
template <int DT>
struct Decode {
  static void run(const uint8_t* bits, const uint32_t* sb, const uint64_t* off, int64_t count, uint32_t chunk_elems,
                  uint32_t streams, int L, const uint16_t* table, void* out, int* error, cudaStream_t s) {
    const int64_t chunks = count == 0 ? 0 : (count - 1) / chunk_elems + 1;
    if (chunks == 0) return;
    const size_t smem = (sizeof(uint16_t) << L) + kStageBytes;
    exponent_decode_kernel<DT><<<cuda::grid_blocks(chunks), kDecodeThreads, smem, s>>>(bits, sb, off, count, chunks, chunk_elems, streams,
                                                                      L, table, static_cast<uint8_t*>(out), error);
  }
};
template <int DT>
struct DecodeSole {
  static void run(const uint8_t* raw, int64_t count, uint8_t sole, void* out, cudaStream_t s) {
    if (count == 0) return;
    decode_sole_kernel<DT><<<cuda::grid_blocks((count + 255) / 256), 256, 0, s>>>(raw, count, sole, static_cast<uint8_t*>(out));
  }
};

}  // namespace

void exponent_histogram(int dtype, const void* in, int64_t count, unsigned long long* hist, cudaStream_t stream) {
  by_dtype<Histogram>(dtype, in, count, hist, stream);
}

void exponent_stream_bytes(int dtype, const void* in, int64_t count, const CodeTable& table, uint32_t* stream_bytes,
                           cudaStream_t stream) {
  by_dtype<StreamBytes>(dtype, in, count, table, stream_bytes, stream);
}

void exponent_chunk_offsets(const uint32_t* stream_bytes, uint32_t streams, int64_t chunks, uint64_t* offsets,
                            cudaStream_t stream) {
  chunk_offsets_kernel<<<1, 1024, 0, stream>>>(stream_bytes, streams, chunks, offsets);
}

void exponent_encode(int dtype, const void* in, int64_t count, const CodeTable& table, bool coded,
                     const uint32_t* stream_bytes, const uint64_t* offsets, uint8_t* bits, cudaStream_t stream) {
  by_dtype<Encode>(dtype, in, count, table, coded, stream_bytes, offsets, bits, stream);
}

void exponent_decode(int dtype, const uint8_t* bits, const uint32_t* stream_bytes, const uint64_t* offsets,
                     int64_t count, uint32_t chunk_elems, uint32_t streams, int L, const uint16_t* table, void* out,
                     int* error, cudaStream_t stream) {
  by_dtype<Decode>(dtype, bits, stream_bytes, offsets, count, chunk_elems, streams, L, table, out, error, stream);
}

void exponent_decode_sole(int dtype, const uint8_t* raw, int64_t count, uint8_t sole, void* out, cudaStream_t stream) {
  by_dtype<DecodeSole>(dtype, raw, count, sole, out, stream);
}

}  // namespace mlsb::compress::gpu::detail
