#pragma once
// The CUDA path of the codecs: `exponent`, `cast-bf16`, `cast-fp16`, `int8-block`, `fp8-e4m3`,
// `fp8-e5m2` run as CUDA kernels on device buffers and write the same stream formats as the CPU
// codecs (exponent.hpp, quantize.hpp), so the CPU path is the oracle for GPU results.
// Built when CMake finds the CUDA toolkit (MLSB_HAVE_CUDA); otherwise every function reports that.
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/compress/codec.hpp"

namespace mlsb::compress::gpu {

/// True when a CUDA device can run kernels; otherwise `why` (if given) says why not: "built without
/// CUDA", "no CUDA device (CUDA driver version is insufficient)", ...
bool available(std::string* why = nullptr);


/// One timed round trip on the device: `in` is copied to device memory once (untimed), compressed and
/// decompressed there. compress_ms and decompress_ms are the device time of the codec's kernels alone (CUDA
/// event windows around them: cuda::EventTimer); what else each call spends on the host clock (buffer
/// allocation, the exponent code's histogram round trip and host-built code table, synchronisation) is
/// compress_host_ms and decompress_host_ms (ms).
struct RoundTrip {
  double compress_ms = 0;
  double decompress_ms = 0;
  double compress_host_ms = 0;
  double decompress_host_ms = 0;
  std::vector<uint8_t> stream;   ///< the compressed stream, copied back to the host
  std::vector<uint8_t> decoded;  ///< the decoded tensor's bytes, copied back to the host
};
/// Throws CodecError when the codec has no CUDA path or the device fails (the CUDA error string).
RoundTrip round_trip(const CodecConfig& config, TensorView in);

/// Decodes a stream (made by the CPU or the GPU) on the device; for cross-checking.
std::vector<uint8_t> decode(const CodecConfig& config, const std::vector<uint8_t>& stream, int64_t count, DType dtype);

}  // namespace mlsb::compress::gpu
