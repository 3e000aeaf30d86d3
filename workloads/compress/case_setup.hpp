#pragma once
// What the compress benchmarks share in setting up a case: the codec, the input and a timed round trip.
#include <memory>
#include <span>

#include "harness/workload.hpp"
#include "workloads/compress/codec.hpp"
#include "workloads/compress/tensor.hpp"

namespace mlsb::compress {

/// The codec axes of a case (codec, level, block, density, rank, error_feedback, threads; seed from the case).
CodecConfig codec_config(const State& state);

/// The element type of generated tensors: the dtype axis, bf16 for `auto`.
DType generated_dtype(const State& state);

/// The case's input on this rank: the tensor file's tensor in its own dtype (dtype `auto`; a dtype the
/// axis names is a cast, made with a warning when it differs), or a generated one (distribution, sigma,
/// elements, generated_dtype; the seed mixes the case seed with `rank`, so ranks hold different data).
/// Throws what the loader or generator throws.
Tensor case_input(State& state, int rank);

/// One timed CPU round trip: compresses `in` into `stream` (sized to max_compressed_bytes by the caller)
/// and decodes it into `decoded` (in.bytes()). Times are the codec calls alone, in seconds.
struct TimedRoundTrip {
  size_t stream_bytes = 0;
  double compress_s = 0, decompress_s = 0;
};
TimedRoundTrip timed_round_trip(Codec& codec, TensorView in, std::span<uint8_t> stream, std::span<uint8_t> decoded);


}  // namespace mlsb::compress
