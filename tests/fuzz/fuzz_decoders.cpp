// libFuzzer entry point for the lossless decoders (see CMakeLists.txt here for how to build and run it).
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "workloads/compress/baselines.hpp"
#include "workloads/compress/exponent.hpp"

namespace {

using namespace mlsb::compress;

// Element count for the output: the header's count (at offset 8 in both container formats) when it is
// small, so well-formed streams reach the bitstreams; otherwise a small count, which the decoder rejects.
int64_t output_count(const uint8_t* data, size_t size) {
  constexpr uint64_t kMax = uint64_t{1} << 16;
  uint64_t count = 0;
  if (size >= 16) std::memcpy(&count, data + 8, 8);
  return static_cast<int64_t>(count <= kMax ? count : 17);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t selector = data[0];
  ++data;
  --size;
  static const std::unique_ptr<Codec> codecs[4] = {make_exponent_codec({.threads = 2}), make_none_codec(),
                                                   make_zstd_codec(1, 2), make_lz4_codec(2)};
  const DType dtype = static_cast<DType>(((selector >> 2) & 3) % 3);
  const int64_t count = output_count(data, size);
  std::vector<uint8_t> out(static_cast<size_t>(count) * dtype_size(dtype));
  try {
    codecs[selector & 3]->decompress(std::span<const uint8_t>(data, size), MutableTensorView{out.data(), count, dtype});
  } catch (const CodecError&) {
  }
  return 0;
}
