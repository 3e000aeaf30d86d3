// Host side of the CUDA codecs (gpu_codecs.hpp): device buffers, the Huffman code built from the
// device histogram, stream headers, validation of streams before they reach a kernel, and timing with
// CUDA events. The kernels are in cuda/*.cu; without CUDA every entry point reports "built without CUDA".
#include "workloads/compress/gpu_codecs.hpp"

#include "backends/cuda/device.hpp"

#ifdef MLSB_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <limits>

#include "backends/cuda/copy.hpp"
#include "backends/cuda/device_buffer.hpp"
#include "backends/cuda/stream.hpp"
#include "workloads/compress/cuda/codec_math.hpp"
#include "workloads/compress/cuda/kernels.hpp"
#include "workloads/compress/exponent.hpp"
#include "workloads/compress/quantize.hpp"
#endif

namespace mlsb::compress::gpu {

bool available(std::string* why) { return cuda::cuda_available(why); }

#ifndef MLSB_HAVE_CUDA

RoundTrip round_trip(const CodecConfig& config, TensorView) {
  throw CodecError(config.name + " (gpu): built without CUDA");
}

std::vector<uint8_t> decode(const CodecConfig& config, const std::vector<uint8_t>&, int64_t, DType) {
  throw CodecError(config.name + " (gpu): built without CUDA");
}

#else

namespace {

void check(cudaError_t err, const std::string& codec, const char* what) {
  if (err != cudaSuccess) {
    cudaGetLastError();
    throw CodecError(codec + " (gpu): " + what + ": " + cudaGetErrorString(err));
  }
}

/// Checks that the kernels a launcher just enqueued launched (a rejected launch is reported here, not at a
/// later synchronisation, where it would be blamed on other work).
void launched(const std::string& codec, const char* what) { check(cudaGetLastError(), codec, what); }

/// A copy on the codec's stream (cuda::copy_on), its error for check().
cudaError_t copy(cudaStream_t st, void* dst, const void* src, size_t bytes, cuda::Landed landed) {
  return cuda::copy_on(st, dst, src, bytes, landed, "compress gpu");
}

/// A device buffer of `bytes`; a failed allocation is a CodecError naming the codec.
cuda::DeviceBuffer device_buffer(size_t bytes, const std::string& codec) {
  try {
    return cuda::DeviceBuffer(bytes);
  } catch (const std::runtime_error& e) {
    throw CodecError(codec + " (gpu): " + e.what());
  }
}

void require_device(const std::string& codec) {
  std::string why;
  if (!available(&why)) throw CodecError(codec + " (gpu): " + why);
  if (!codec_spec(codec).gpu) {
    std::string with;
    for (const auto& spec : codec_table())
      if (spec.gpu) with += (with.empty() ? "" : ", ") + spec.name;
    throw CodecError(codec + " (gpu): no CUDA path (codecs with one: " + with + ")");
  }
}

template <typename T>
void put(uint8_t* p, T v) { std::memcpy(p, &v, sizeof v); }
template <typename T>
T get(const uint8_t* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// ---------------------------------------------------------------------------------------- exponent

/// What the device coder needs of an exponent header.
struct ExpInfo {
  DType dtype = DType::F32;
  int64_t count = 0;
  int L = 0;
  uint8_t sole = 0;
  uint32_t chunk_elems = detail::kGpuChunkElems;
  uint32_t streams = detail::kGpuStreams;
  std::array<uint8_t, 256> code_len{};
  int64_t chunks() const { return count == 0 ? 0 : (count - 1) / chunk_elems + 1; }
  uint64_t table_bytes() const { return L == 0 ? 0 : 4 * static_cast<uint64_t>(chunks()) * streams; }
};

int64_t gpu_chunks(int64_t count) { return count == 0 ? 0 : (count - 1) / detail::kGpuChunkElems + 1; }

size_t exponent_max_bytes(int64_t count, DType dtype) {
  const uint64_t n = static_cast<uint64_t>(count), streams = static_cast<uint64_t>(gpu_chunks(count)) * detail::kGpuStreams;
  // each stream: ceil(len * 12 / 8) <= len * 12 / 8 + 1 bytes
  return kExponentHeaderBytes + 4 * streams + (n * kExponentMaxCodeLen + 7) / 8 + streams + n * exponent_raw_bytes(dtype);
}

/// Encodes d_in into d_out (exponent_max_bytes bytes); returns the stream's size and its header in `info`.
size_t exponent_encode(const uint8_t* d_in, int64_t count, DType dtype, uint8_t* d_out, cudaStream_t st, ExpInfo& info,
                       cuda::EventTimer& kernels) {
  const std::string codec = "exponent";
  const int dt = static_cast<int>(dtype);
  const auto d_hist = device_buffer(256 * sizeof(unsigned long long), codec);
  kernels.begin();
  check(cudaMemsetAsync(d_hist.as<uint8_t>(), 0, d_hist.size(), st), codec, "cudaMemset");
  detail::exponent_histogram(dt, d_in, count, d_hist.as<unsigned long long>(), st);
  launched(codec, "histogram launch");
  kernels.end();
  std::array<uint64_t, 256> hist{};
  check(copy(st, hist.data(), d_hist.as<uint8_t>(), d_hist.size(), cuda::Landed::OnReturn), codec, "histogram copy");

  ExpInfo& h = info;
  h.dtype = dtype;
  h.count = count;
  huffman_code_lengths(hist, ExponentParams{}.max_code_len, h.code_len);
  h.L = *std::max_element(h.code_len.begin(), h.code_len.end());
  if (h.L == 0)
    for (int s = 0; s < 256; ++s)
      if (hist[s]) {
        h.sole = static_cast<uint8_t>(s);
        break;
      }
  std::array<uint8_t, kExponentHeaderBytes> header{};
  put(header.data(), kExponentMagic);
  header[4] = static_cast<uint8_t>(dtype);
  header[5] = static_cast<uint8_t>(h.L);
  header[6] = h.sole;
  put(header.data() + 8, static_cast<uint64_t>(count));
  put(header.data() + 16, h.chunk_elems);
  put(header.data() + 20, h.streams);
  std::memcpy(header.data() + 24, h.code_len.data(), 256);
  check(copy(st, d_out, header.data(), header.size(), cuda::Landed::Later), codec, "header copy");

  const size_t raw = static_cast<size_t>(count) * exponent_raw_bytes(dtype);
  detail::CodeTable table{};
  if (h.L == 0) {
    kernels.begin();
    detail::exponent_encode(dt, d_in, count, table, false, nullptr, nullptr, d_out + kExponentHeaderBytes, st);
    launched(codec, "encode launch");
    kernels.end();
    check(cudaStreamSynchronize(st), codec, "encode");
    return kExponentHeaderBytes + raw;
  }
  math::canonical_codes(h.code_len.data(), table.code);
  std::memcpy(table.len, h.code_len.data(), 256);
  const int64_t chunks = h.chunks();
  auto* sb = reinterpret_cast<uint32_t*>(d_out + kExponentHeaderBytes);
  const auto d_off = device_buffer(8 * (static_cast<size_t>(chunks) + 1), codec);
  kernels.begin();
  detail::exponent_stream_bytes(dt, d_in, count, table, sb, st);
  launched(codec, "stream-bytes launch");
  detail::exponent_chunk_offsets(sb, h.streams, chunks, d_off.as<uint64_t>(), st);
  launched(codec, "chunk-offsets launch");
  detail::exponent_encode(dt, d_in, count, table, true, sb, d_off.as<uint64_t>(),
                          d_out + kExponentHeaderBytes + h.table_bytes(), st);
  launched(codec, "encode launch");
  kernels.end();
  uint64_t total = 0;
  check(copy(st, &total, d_off.as<uint64_t>() + chunks, 8, cuda::Landed::OnReturn), codec, "size copy");
  return kExponentHeaderBytes + h.table_bytes() + total + raw;
}

/// Decodes a validated stream on the device (d_stream holds it); throws CodecError for a corrupt bitstream.
void exponent_decode(const uint8_t* d_stream, const ExpInfo& h, uint8_t* d_out, cudaStream_t st, cuda::EventTimer& kernels) {
  const std::string codec = "exponent";
  const int dt = static_cast<int>(h.dtype);
  if (h.count == 0) return;
  if (h.L == 0) {
    kernels.begin();
    detail::exponent_decode_sole(dt, d_stream + kExponentHeaderBytes, h.count, h.sole, d_out, st);
    launched(codec, "decode launch");
    kernels.end();
    check(cudaStreamSynchronize(st), codec, "decode");
    return;
  }
  std::vector<uint16_t> table(size_t{1} << h.L);
  math::build_decode_table(h.code_len.data(), h.L, table.data());
  const auto d_table = device_buffer(table.size() * 2, codec);
  const auto d_off = device_buffer(8 * (static_cast<size_t>(h.chunks()) + 1), codec);
  const auto d_err = device_buffer(sizeof(int), codec);
  check(copy(st, d_table.as<uint8_t>(), table.data(), d_table.size(), cuda::Landed::Later), codec, "table copy");
  check(cudaMemsetAsync(d_err.as<uint8_t>(), 0, sizeof(int), st), codec, "cudaMemset");
  const auto* sb = reinterpret_cast<const uint32_t*>(d_stream + kExponentHeaderBytes);
  kernels.begin();
  detail::exponent_chunk_offsets(sb, h.streams, h.chunks(), d_off.as<uint64_t>(), st);
  launched(codec, "chunk-offsets launch");
  detail::exponent_decode(dt, d_stream + kExponentHeaderBytes + h.table_bytes(), sb, d_off.as<uint64_t>(), h.count,
                          h.chunk_elems, h.streams, h.L, d_table.as<uint16_t>(), d_out, d_err.as<int>(), st);
  launched(codec, "decode launch");
  kernels.end();
  int err = 0;
  check(copy(st, &err, d_err.as<uint8_t>(), sizeof err, cuda::Landed::OnReturn), codec, "error copy");
  static const char* const what[] = {"", "a bitstream ends inside a code", "a bitstream holds a prefix no code has",
                                     "a bitstream has bytes after its last code", "a bitstream's padding bits are not 0"};
  if (err) throw CodecError("exponent (gpu): corrupt stream: " + std::string(what[err > 0 && err < 5 ? err : 1]));
}

ExpInfo exponent_info(const std::vector<uint8_t>& stream, int64_t count, DType dtype) {
  const ExponentContainer c = parse_exponent_container(stream);
  if (c.dtype != dtype)
    throw CodecError("exponent (gpu): stream holds " + std::string(to_string(c.dtype)) + ", output is " +
                     std::string(to_string(dtype)));
  if (c.count != count)
    throw CodecError("exponent (gpu): stream holds " + std::to_string(c.count) + " elements, output has " +
                     std::to_string(count));
  ExpInfo h;
  h.dtype = c.dtype;
  h.count = c.count;
  h.L = c.max_code_len;
  h.sole = c.sole_symbol;
  h.chunk_elems = c.chunk_elems;
  h.streams = c.streams_per_chunk;
  h.code_len = c.code_len;
  return h;
}

// ---------------------------------------------------------------------------------------- quantisers

struct QuantInfo {
  QuantKind kind;
  uint32_t block = 0;  // blocked kinds
};

QuantKind quant_kind(const std::string& name) {
  if (name == "cast-bf16") return QuantKind::CastBf16;
  if (name == "cast-fp16") return QuantKind::CastFp16;
  if (name == "int8-block") return QuantKind::Int8Block;
  if (name == "fp8-e4m3") return QuantKind::Fp8E4M3;
  return QuantKind::Fp8E5M2;
}

bool blocked(QuantKind k) { return k >= QuantKind::Int8Block; }

QuantInfo quant_info(const CodecConfig& config) {
  QuantInfo q{quant_kind(config.name)};
  if (blocked(q.kind)) {
    if (config.block < 1 || config.block > std::numeric_limits<uint32_t>::max())
      throw std::invalid_argument("block: must be in [1, 2^32) elements (got " + std::to_string(config.block) + ")");
    q.block = static_cast<uint32_t>(config.block);
  }
  return q;
}

size_t quant_bytes(const QuantInfo& q, int64_t count) {
  const uint64_t n = static_cast<uint64_t>(count);
  switch (q.kind) {
    case QuantKind::CastBf16: return kQuantHeaderBytes + 2 * n;
    case QuantKind::CastFp16: return kQuantHeaderBytes + 4 + 2 * n;
    default: return kQuantHeaderBytes + 4 + 4 * (n / q.block + (n % q.block != 0)) + n;
  }
}

size_t quant_encode(const QuantInfo& q, const uint8_t* d_in, int64_t count, DType dtype, uint8_t* d_out, cudaStream_t st,
                    cuda::EventTimer& kernels) {
  const std::string codec = "quantise";
  std::array<uint8_t, kQuantHeaderBytes + 4> header{};
  put(header.data(), kQuantMagic);
  header[4] = static_cast<uint8_t>(q.kind);
  header[5] = static_cast<uint8_t>(dtype);
  put(header.data() + 8, static_cast<uint64_t>(count));
  put(header.data() + 16, q.block);
  const size_t header_bytes = blocked(q.kind) ? kQuantHeaderBytes + 4 : kQuantHeaderBytes;
  // Landed on return: the header lives on this frame, and the blocked path syncs nothing before it returns.
  check(copy(st, d_out, header.data(), header_bytes, cuda::Landed::OnReturn), codec, "header copy");
  const int kind = static_cast<int>(q.kind), dt = static_cast<int>(dtype);
  if (blocked(q.kind)) {
    kernels.begin();
    detail::quant_block_encode(kind, dt, d_in, count, q.block, d_out, st);
    launched(codec, "encode launch");
    kernels.end();
  } else {
    const auto d_absmax = device_buffer(sizeof(unsigned int), codec);
    kernels.begin();
    check(cudaMemsetAsync(d_absmax.as<uint8_t>(), 0, sizeof(unsigned int), st), codec, "cudaMemset");
    if (q.kind == QuantKind::CastFp16) {
      detail::quant_absmax(dt, d_in, count, d_absmax.as<unsigned int>(), st);
      launched(codec, "absmax launch");
    }
    detail::quant_cast_encode(kind, dt, d_in, count, d_absmax.as<unsigned int>(), d_out, st);
    launched(codec, "encode launch");
    kernels.end();
    check(cudaStreamSynchronize(st), codec, "encode");  // before d_absmax is freed
  }
  return quant_bytes(q, count);
}

void quant_decode(const QuantInfo& q, const uint8_t* d_stream, int64_t count, DType dtype, uint8_t* d_out, cudaStream_t st,
                  cuda::EventTimer& kernels) {
  kernels.begin();
  detail::quant_decode(static_cast<int>(q.kind), static_cast<int>(dtype), d_stream, count, q.block, d_out, st);
  launched("quantise", "decode launch");
  kernels.end();
}

/// Checks a host stream's header against the config and the output (as the CPU decoder does).
QuantInfo quant_stream_info(const CodecConfig& config, const std::vector<uint8_t>& s, int64_t count, DType dtype) {
  const std::string c = config.name + " (gpu): ";
  QuantInfo q{quant_kind(config.name)};
  if (s.size() < kQuantHeaderBytes) throw CodecError(c + "truncated stream: header needs 16 bytes");
  if (get<uint32_t>(s.data()) != kQuantMagic) throw CodecError(c + "not a quantised stream (bad magic)");
  if (s[4] != static_cast<uint8_t>(q.kind))
    throw CodecError(c + "stream is of kind " + std::to_string(s[4]) + ", this codec decodes kind " +
                     std::to_string(static_cast<int>(q.kind)));
  if (s[5] != static_cast<uint8_t>(dtype)) throw CodecError(c + "stream dtype code " + std::to_string(s[5]) + " differs from the output's");
  if (get<uint16_t>(s.data() + 6) != 0) throw CodecError(c + "reserved header field is not 0");
  if (get<uint64_t>(s.data() + 8) != static_cast<uint64_t>(count))
    throw CodecError(c + "stream holds " + std::to_string(get<uint64_t>(s.data() + 8)) + " elements, output has " +
                     std::to_string(count));
  if (blocked(q.kind)) {
    if (s.size() < kQuantHeaderBytes + 4) throw CodecError(c + "truncated stream: block needs 4 bytes");
    q.block = get<uint32_t>(s.data() + kQuantHeaderBytes);
    if (q.block == 0) throw CodecError(c + "block size is 0");
  } else if (q.kind == QuantKind::CastFp16 && s.size() >= kQuantHeaderBytes + 4) {
    const int32_t k = get<int32_t>(s.data() + kQuantHeaderBytes);
    if (k < -1000 || k > 1000) throw CodecError(c + "scale exponent " + std::to_string(k) + " is out of range");
  }
  if (s.size() != quant_bytes(q, count))
    throw CodecError(c + "stream has " + std::to_string(s.size()) + " bytes, its header says " +
                     std::to_string(quant_bytes(q, count)));
  return q;
}

}  // namespace

RoundTrip round_trip(const CodecConfig& config, TensorView in) {
  require_device(config.name);
  if (in.count < 0) throw CodecError(config.name + " (gpu): negative element count");
  const bool exponent = config.name == "exponent";
  const QuantInfo q = exponent ? QuantInfo{QuantKind::CastBf16} : quant_info(config);
  const size_t max_bytes = exponent ? exponent_max_bytes(in.count, in.dtype) : quant_bytes(q, in.count);
  const auto d_in = device_buffer(in.bytes(), config.name);
  const auto d_stream = device_buffer(max_bytes, config.name);
  const auto d_out = device_buffer(in.bytes(), config.name);
  cuda::Stream queue;  // non-blocking: the input goes on it, not on the legacy stream it does not wait for
  check(copy(queue.get(), d_in.as<uint8_t>(), in.data, in.bytes(), cuda::Landed::OnReturn), config.name, "input copy");
  const auto* x = d_in.as<const uint8_t>();
  RoundTrip rt;
  // compress_ms and decompress_ms are the kernels' event windows; the rest of each call (allocation, the
  // exponent code's host-built table and its synchronisations) is compress_host_ms / decompress_host_ms.
  cuda::EventTimer enc(queue.get(), "compress gpu"), dec(queue.get(), "compress gpu");
  using Clock = std::chrono::steady_clock;
  const auto ms_since = [](Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); };
  auto t0 = Clock::now();
  ExpInfo info;
  const size_t size = exponent ? exponent_encode(x, in.count, in.dtype, d_stream.as<uint8_t>(), queue.get(), info, enc)
                               : quant_encode(q, x, in.count, in.dtype, d_stream.as<uint8_t>(), queue.get(), enc);
  check(cudaStreamSynchronize(queue.get()), config.name, "compress");
  const double compress_wall = ms_since(t0);
  t0 = Clock::now();
  if (exponent) {
    exponent_decode(d_stream.as<uint8_t>(), info, d_out.as<uint8_t>(), queue.get(), dec);
  } else {
    quant_decode(q, d_stream.as<uint8_t>(), in.count, in.dtype, d_out.as<uint8_t>(), queue.get(), dec);
  }
  check(cudaStreamSynchronize(queue.get()), config.name, "round trip");
  const double decompress_wall = ms_since(t0);
  rt.compress_ms = enc.total_ms();
  rt.decompress_ms = dec.total_ms();
  rt.compress_host_ms = std::max(0.0, compress_wall - rt.compress_ms);
  rt.decompress_host_ms = std::max(0.0, decompress_wall - rt.decompress_ms);
  rt.stream.resize(size);
  rt.decoded.resize(in.bytes());
  check(copy(queue.get(), rt.stream.data(), d_stream.as<uint8_t>(), size, cuda::Landed::OnReturn), config.name,
        "stream copy");
  check(copy(queue.get(), rt.decoded.data(), d_out.as<uint8_t>(), in.bytes(), cuda::Landed::OnReturn), config.name,
        "output copy");
  return rt;
}

std::vector<uint8_t> decode(const CodecConfig& config, const std::vector<uint8_t>& stream, int64_t count, DType dtype) {
  require_device(config.name);
  if (count < 0) throw CodecError(config.name + " (gpu): negative element count");
  const size_t out_bytes = static_cast<size_t>(count) * dtype_size(dtype);
  const bool exponent = config.name == "exponent";
  ExpInfo h;
  QuantInfo q{QuantKind::CastBf16};
  if (exponent)
    h = exponent_info(stream, count, dtype);
  else
    q = quant_stream_info(config, stream, count, dtype);
  const auto d_stream = device_buffer(stream.size(), config.name);
  const auto d_out = device_buffer(out_bytes, config.name);
  cuda::Stream queue;
  check(copy(queue.get(), d_stream.as<uint8_t>(), stream.data(), stream.size(), cuda::Landed::Later), config.name,
        "stream copy");
  cuda::EventTimer kernels(queue.get(), "compress gpu");  // untimed here: a cross-check
  if (exponent)
    exponent_decode(d_stream.as<uint8_t>(), h, d_out.as<uint8_t>(), queue.get(), kernels);
  else
    quant_decode(q, d_stream.as<uint8_t>(), count, dtype, d_out.as<uint8_t>(), queue.get(), kernels);
  check(cudaStreamSynchronize(queue.get()), config.name, "decode");
  std::vector<uint8_t> out(out_bytes);
  check(copy(queue.get(), out.data(), d_out.as<uint8_t>(), out_bytes, cuda::Landed::OnReturn), config.name,
        "output copy");
  return out;
}

#endif  // MLSB_HAVE_CUDA

}  // namespace mlsb::compress::gpu
