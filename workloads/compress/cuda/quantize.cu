// CUDA kernels of the lossy element-wise codecs (format: workloads/compress/quantize.hpp; arithmetic:
// quant_math.hpp and codec_math.hpp, shared with the host so GPU streams equal CPU streams byte for byte).
// Each thread handles 4 consecutive elements (one 8- or 16-byte load, one 4-byte code store); block
// codecs with block | 128 and 4 | block reduce each block's absmax over B/4 lanes with shuffles, other
// block sizes take one warp per block.
#include "backends/cuda/launch.hpp"
#include "workloads/compress/cuda/codec_math.hpp"
#include "workloads/compress/cuda/kernels.hpp"

namespace mlsb::compress::gpu::detail {
namespace {

namespace m = math;
using cuda::kWarp;
constexpr int kThreads = 256;
constexpr size_t kHeader = 16;  // kQuantHeaderBytes

/// Loads elements 4g..4g+3 as fp32 (all in range: 4g + 3 < count); aligned vector loads.
template <int DT>
__device__ __forceinline__ void load4(const uint8_t* in, int64_t g, float v[4]) {
  if constexpr (DT == 0) {
    const float4 x = reinterpret_cast<const float4*>(in)[g];
    v[0] = x.x, v[1] = x.y, v[2] = x.z, v[3] = x.w;
  } else {
    const uint2 x = reinterpret_cast<const uint2*>(in)[g];
    const uint16_t h[4] = {static_cast<uint16_t>(x.x), static_cast<uint16_t>(x.x >> 16), static_cast<uint16_t>(x.y),
                           static_cast<uint16_t>(x.y >> 16)};
    for (int k = 0; k < 4; ++k) v[k] = DT == 1 ? m::fp16_to_f32(h[k]) : m::bf16_to_f32(h[k]);
  }
}

/// Stores 4 values as dtype DT at elements 4g..4g+3 of `out` (aligned vector store).
template <int DT>
__device__ __forceinline__ void store4(uint8_t* out, int64_t g, const float v[4]) {
  if constexpr (DT == 0) {
    reinterpret_cast<float4*>(out)[g] = make_float4(v[0], v[1], v[2], v[3]);
  } else {
    uint16_t h[4];
    for (int k = 0; k < 4; ++k) h[k] = DT == 1 ? m::f32_to_fp16(v[k]) : m::f32_to_bf16(v[k]);
    reinterpret_cast<uint2*>(out)[g] = make_uint2(h[0] | static_cast<uint32_t>(h[1]) << 16, h[2] | static_cast<uint32_t>(h[3]) << 16);
  }
}

using quant::finite_abs_bits;

template <int DT>
__global__ void __launch_bounds__(kThreads) absmax_kernel(const uint8_t* in, int64_t count, unsigned int* absmax) {
  uint32_t mx = 0;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count; i += stride)
    mx = max(mx, finite_abs_bits(m::load_elem<DT>(in, i)));
  for (int o = kWarp / 2; o > 0; o /= 2) mx = max(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, o));
  if (threadIdx.x % kWarp == 0 && mx) atomicMax(absmax, mx);
}

/// 16-bit outputs of a cast: element i at payload + 2i.
template <int DT, int KIND>
__global__ void __launch_bounds__(kThreads) cast_encode_kernel(const uint8_t* in, int64_t count, const unsigned int* absmax,
                                                              uint8_t* stream) {
  int k = 0;
  if constexpr (KIND == 2) {
    k = quant::fp16_scale_exponent(m::u2f(*absmax));
    if (blockIdx.x == 0 && threadIdx.x == 0) *reinterpret_cast<int32_t*>(stream + kHeader) = k;
  }
  uint8_t* payload = stream + kHeader + (KIND == 2 ? 4 : 0);  // 4-byte aligned
  auto convert = [k](float x) -> uint16_t {
    return KIND == 1 ? m::f32_to_bf16(x) : m::f32_to_fp16(m::ldexp_like_host(x, k));
  };
  const int64_t groups = count / 4;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < groups; g += stride) {
    float v[4];
    load4<DT>(in, g, v);
    uint32_t* dst = reinterpret_cast<uint32_t*>(payload + 8 * g);
    dst[0] = convert(v[0]) | static_cast<uint32_t>(convert(v[1])) << 16;
    dst[1] = convert(v[2]) | static_cast<uint32_t>(convert(v[3])) << 16;
  }
  if (blockIdx.x == 0 && threadIdx.x < count % 4) {
    const int64_t i = groups * 4 + threadIdx.x;
    reinterpret_cast<uint16_t*>(payload)[i] = convert(m::load_elem<DT>(in, i));
  }
}

/// Block codecs, block | 128 and 4 | block: each lane holds 4 consecutive elements; B/4 lanes form a block.
template <int DT, int KIND>
__global__ void __launch_bounds__(kThreads) block_encode_grouped(const uint8_t* in, int64_t count, uint32_t block,
                                                                uint8_t* stream) {
  const int64_t blocks = (count + block - 1) / block;
  float* scales = reinterpret_cast<float*>(stream + kHeader + 4);
  uint8_t* codes = stream + kHeader + 4 + 4 * blocks;  // 4-byte aligned
  const int lane = threadIdx.x % kWarp, group = static_cast<int>(block / 4);
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / kWarp);
  const int64_t tiles = (count + 4 * kWarp - 1) / (4 * kWarp);
  for (int64_t tile = static_cast<int64_t>(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp; tile < tiles;
       tile += warps) {  // warp-uniform loop: the shuffles below see every lane
    const int64_t g = tile * kWarp + lane, e0 = 4 * g;
    float v[4] = {0, 0, 0, 0};
    const bool full = e0 + 3 < count;
    if (full) {
      load4<DT>(in, g, v);
    } else {
      for (int k = 0; k < 4; ++k)
        if (e0 + k < count) v[k] = m::load_elem<DT>(in, e0 + k);
    }
    uint32_t mx = 0;
    for (int k = 0; k < 4; ++k)
      if (e0 + k < count) mx = max(mx, finite_abs_bits(v[k]));
    for (int o = group / 2; o > 0; o /= 2) mx = max(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, o));
    const float scale = quant::block_scale<KIND>(m::u2f(mx));
    if (e0 < count && lane % group == 0) scales[e0 / block] = scale;
    uint8_t q[4];
    for (int k = 0; k < 4; ++k) q[k] = quant::encode<KIND>(v[k], scale);
    if (full) {
      reinterpret_cast<uint32_t*>(codes)[g] = q[0] | q[1] << 8 | q[2] << 16 | static_cast<uint32_t>(q[3]) << 24;
    } else {
      for (int k = 0; k < 4; ++k)
        if (e0 + k < count) codes[e0 + k] = q[k];
    }
  }
}

/// Block codecs, any block size: one warp per block, two passes (the second reads through L1/L2).
template <int DT, int KIND>
__global__ void __launch_bounds__(kThreads) block_encode_warp(const uint8_t* in, int64_t count, uint32_t block,
                                                             uint8_t* stream) {
  const int64_t blocks = (count + block - 1) / block;
  float* scales = reinterpret_cast<float*>(stream + kHeader + 4);
  uint8_t* codes = stream + kHeader + 4 + 4 * blocks;
  const int lane = threadIdx.x % kWarp;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (blockDim.x / kWarp);
  for (int64_t b = static_cast<int64_t>(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp; b < blocks; b += warps) {
    const int64_t begin = b * block, end = min(count, begin + static_cast<int64_t>(block));
    uint32_t mx = 0;
    for (int64_t i = begin + lane; i < end; i += kWarp) mx = max(mx, finite_abs_bits(m::load_elem<DT>(in, i)));
    for (int o = kWarp / 2; o > 0; o /= 2) mx = max(mx, __shfl_xor_sync(0xFFFFFFFFu, mx, o));
    const float scale = quant::block_scale<KIND>(m::u2f(mx));
    if (lane == 0) scales[b] = scale;
    for (int64_t i = begin + lane; i < end; i += kWarp) codes[i] = quant::encode<KIND>(m::load_elem<DT>(in, i), scale);
  }
}

/// One element of any kind from its code/value in the payload.
template <int KIND>
struct Dequant {
  const uint8_t* payload;  // values (casts) or codes (blocks)
  const float* scales;
  uint32_t block;
  int k;  // cast-fp16 scale exponent
  __device__ float operator()(int64_t i, int64_t blk) const {
    if constexpr (KIND == 1) return m::bf16_to_f32(reinterpret_cast<const uint16_t*>(payload)[i]);
    if constexpr (KIND == 2) return m::ldexp_like_host(m::fp16_to_f32(reinterpret_cast<const uint16_t*>(payload)[i]), -k);
    if constexpr (KIND >= 3) return quant::decode<KIND>(payload[i], scales[blk]);
    return 0;
  }
};

template <int DT, int KIND>
__global__ void __launch_bounds__(kThreads) quant_decode_kernel(const uint8_t* stream, int64_t count, uint32_t block, uint8_t* out) {
  Dequant<KIND> dq{};
  if constexpr (KIND == 1) {
    dq.payload = stream + kHeader;
  } else if constexpr (KIND == 2) {
    dq.k = *reinterpret_cast<const int32_t*>(stream + kHeader);
    dq.payload = stream + kHeader + 4;
  } else {
    dq.scales = reinterpret_cast<const float*>(stream + kHeader + 4);
    dq.payload = stream + kHeader + 4 + 4 * ((count + block - 1) / block);
    dq.block = block;
  }
  const int64_t groups = (count + 3) / 4;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; g < groups; g += stride) {
    const int64_t e0 = 4 * g;
    int64_t blk = KIND >= 3 ? e0 / block : 0;
    uint32_t r = KIND >= 3 ? static_cast<uint32_t>(e0 - blk * block) : 0;  // position inside the block
    float v[4];
    for (int k = 0; k < 4; ++k) {
      v[k] = e0 + k < count ? dq(e0 + k, blk) : 0.0f;
      if (KIND >= 3 && ++r == block) r = 0, ++blk;
    }
    if (e0 + 3 < count) {
      store4<DT>(out, g, v);
    } else {
      for (int k = 0; k < 4; ++k)
        if (e0 + k < count) m::store_elem<DT>(out, e0 + k, v[k]);
    }
  }
}

template <int DT>
void absmax_run(const void* in, int64_t count, unsigned int* absmax, cudaStream_t s) {
  if (count > 0) absmax_kernel<DT><<<cuda::grid_blocks(count, kThreads), kThreads, 0, s>>>(static_cast<const uint8_t*>(in), count, absmax);
}

template <int DT, int KIND>
void cast_run(const void* in, int64_t count, const unsigned int* absmax, uint8_t* stream, cudaStream_t s) {
  cast_encode_kernel<DT, KIND><<<cuda::grid_blocks(count / 4, kThreads), kThreads, 0, s>>>(static_cast<const uint8_t*>(in), count, absmax, stream);
}

template <int DT, int KIND>
void block_run(const void* in, int64_t count, uint32_t block, uint8_t* stream, cudaStream_t s) {
  if (count == 0) return;
  const auto* x = static_cast<const uint8_t*>(in);
  if (block % 4 == 0 && block <= 4 * kWarp && (4 * kWarp) % block == 0) {
    block_encode_grouped<DT, KIND><<<cuda::grid_blocks((count + 3) / 4, kThreads), kThreads, 0, s>>>(x, count, block, stream);
  } else {
    const int64_t blocks = (count + block - 1) / block;
    block_encode_warp<DT, KIND><<<cuda::grid_blocks(blocks * kWarp, kThreads), kThreads, 0, s>>>(x, count, block, stream);
  }
}

template <int DT, int KIND>
void decode_run(const uint8_t* stream, int64_t count, uint32_t block, void* out, cudaStream_t s) {
  if (count > 0)
    quant_decode_kernel<DT, KIND><<<cuda::grid_blocks((count + 3) / 4, kThreads), kThreads, 0, s>>>(stream, count, block, static_cast<uint8_t*>(out));
}

/// Calls F::template run<DT, KIND>(args...) for a runtime dtype and kind.
template <typename F, int KIND, typename... A>
void with_dtype(int dtype, A... a) {
  switch (dtype) {
    case 0: F::template run<0, KIND>(a...); break;
    case 1: F::template run<1, KIND>(a...); break;
    default: F::template run<2, KIND>(a...); break;
  }
}

template <typename F, typename... A>
void with_kind(int kind, int dtype, A... a) {
  switch (kind) {
    case 1: with_dtype<F, 1>(dtype, a...); break;
    case 2: with_dtype<F, 2>(dtype, a...); break;
    case 3: with_dtype<F, 3>(dtype, a...); break;
    case 4: with_dtype<F, 4>(dtype, a...); break;
    default: with_dtype<F, 5>(dtype, a...); break;
  }
}

struct CastRun {
  template <int DT, int KIND>
  static void run(const void* in, int64_t count, const unsigned int* absmax, uint8_t* stream, cudaStream_t s) {
    if constexpr (KIND <= 2) cast_run<DT, KIND>(in, count, absmax, stream, s);
  }
};
struct BlockRun {
  template <int DT, int KIND>
  static void run(const void* in, int64_t count, uint32_t block, uint8_t* stream, cudaStream_t s) {
    if constexpr (KIND >= 3) block_run<DT, KIND>(in, count, block, stream, s);
  }
};
struct DecodeRun {
  template <int DT, int KIND>
  static void run(const uint8_t* stream, int64_t count, uint32_t block, void* out, cudaStream_t s) {
    decode_run<DT, KIND>(stream, count, block, out, s);
  }
};

}  // namespace

void quant_absmax(int dtype, const void* in, int64_t count, unsigned int* absmax_bits, cudaStream_t stream) {
  switch (dtype) {
    case 0: absmax_run<0>(in, count, absmax_bits, stream); break;
    case 1: absmax_run<1>(in, count, absmax_bits, stream); break;
    default: absmax_run<2>(in, count, absmax_bits, stream); break;
  }
}

void quant_cast_encode(int kind, int dtype, const void* in, int64_t count, const unsigned int* absmax_bits,
                       uint8_t* stream, cudaStream_t cuda_stream) {
  if (kind == 2)
    with_dtype<CastRun, 2>(dtype, in, count, absmax_bits, stream, cuda_stream);
  else
    with_dtype<CastRun, 1>(dtype, in, count, absmax_bits, stream, cuda_stream);
}

void quant_block_encode(int kind, int dtype, const void* in, int64_t count, uint32_t block, uint8_t* stream,
                        cudaStream_t cuda_stream) {
  with_kind<BlockRun>(kind < 3 ? 3 : kind, dtype, in, count, block, stream, cuda_stream);
}

void quant_decode(int kind, int dtype, const uint8_t* stream, int64_t count, uint32_t block, void* out,
                  cudaStream_t cuda_stream) {
  with_kind<DecodeRun>(kind, dtype, stream, count, block, out, cuda_stream);
}

}  // namespace mlsb::compress::gpu::detail
