#pragma once
// Round-trip helpers shared by the codec tests.
#include <vector>

#include "workloads/compress/codec.hpp"

namespace mlsb::compress::test_util {

/// The stream of one compress() call, sized to what was written.
inline std::vector<uint8_t> encode(Codec& codec, TensorView in) {
  std::vector<uint8_t> out(codec.max_compressed_bytes(in));
  out.resize(codec.compress(in, out));
  return out;
}

}  // namespace mlsb::compress::test_util
