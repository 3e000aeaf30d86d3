#include <cmath>
#include <limits>

#include "harness/axes.hpp"
#include "util/clock.hpp"
#include "workloads/compress/inputs.hpp"
#include "workloads/compress/case_setup.hpp"

namespace mlsb::compress {

CodecConfig codec_config(const State& state) {
  CodecConfig c;
  c.name = state.get_string("codec");
  c.level = static_cast<int>(state.get_int("level"));
  c.block = state.get_int("block");
  c.density = state.get_float("density");
  c.rank = static_cast<int>(state.get_int("rank"));
  c.error_feedback = state.get_int("error_feedback") != 0;
  c.threads = static_cast<int>(state.get_int("threads"));
  c.seed = state.seed();
  return c;
}

DType generated_dtype(const State& state) {
  const std::string dtype = state.get_string("dtype");
  return dtype == "auto" ? DType::BF16 : parse_dtype(dtype);
}

Tensor case_input(State& state, int rank) {
  if (state.get_string("tensor_file") == "none") {
    const uint64_t seed = splitmix64(state.seed() + 0x51ed270b27b5a3c1ULL * static_cast<uint64_t>(rank));
    Tensor t = generate(state.get_string("distribution"), generated_dtype(state), state.get_int("elements"),
                        state.get_float("sigma"), seed);
    t.name = state.get_string("distribution");
    return t;
  }
  const auto file = input_path(state, "tensor_file");
  Tensor t = load_tensor(file, state.get_string("tensor"));
  if (state.get_string("dtype") == "auto") return t;  // the file's own bits, as stored
  if (const DType dtype = parse_dtype(state.get_string("dtype")); t.dtype != dtype) {
    state.warn("tensor '" + t.name + "' of " + file.string() + " is " + std::string(to_string(t.dtype)) +
               "; cast to " + std::string(to_string(dtype)) + " as -p dtype asks (dtype=auto keeps the file's)");
    std::vector<float> wide(static_cast<size_t>(t.count()));
    to_float(t.view(), wide);
    Tensor c{t.name, dtype, t.shape, std::vector<uint8_t>(wide.size() * dtype_size(dtype))};
    from_float(wide, c.mutable_view());
    t = std::move(c);
  }
  return t;
}

TimedRoundTrip timed_round_trip(Codec& codec, TensorView in, std::span<uint8_t> stream, std::span<uint8_t> decoded) {
  TimedRoundTrip r;
  auto t0 = Clock::now();
  r.stream_bytes = codec.compress(in, stream);
  r.compress_s = seconds_since(t0);
  t0 = Clock::now();
  codec.decompress(stream.first(r.stream_bytes), {decoded.data(), in.count, in.dtype});
  r.decompress_s = seconds_since(t0);
  return r;
}

}  // namespace mlsb::compress
