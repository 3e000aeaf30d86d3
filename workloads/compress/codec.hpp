#pragma once
// The codec interface of the compress workload: lossless (exponent, zstd, lz4, none) and lossy
// (cast-bf16, cast-fp16, int8-block, fp8-e4m3, fp8-e5m2, topk, randomk, powersgd) tensor codecs.
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/compress/tensor.hpp"

namespace mlsb::compress {

/// A stream is corrupt, truncated, or does not match the tensor it is decoded into; or a codec does
/// not support a dtype/shape. The message names the codec and what is wrong.
struct CodecError : std::runtime_error { using std::runtime_error::runtime_error; };

/// Codec parameters (axes of the workload). Unused fields are ignored by codecs that do not need them.
struct CodecConfig {
  std::string name;           ///< one of codec_names()
  int level = 1;              ///< zstd level (1..19; negative = fast levels)
  int64_t block = 128;        ///< elements per scale block: int8-block, fp8-*
  double density = 0.01;      ///< topk/randomk: fraction of elements kept (0 < density <= 1)
  int rank = 4;               ///< powersgd: rank r of the low-rank approximation
  bool error_feedback = true; ///< topk/randomk/powersgd: add the last residual before compressing
  uint64_t seed = 1;          ///< randomk's shared index seed; powersgd's initial Q
  int threads = 1;            ///< worker threads for chunked codecs (exponent, zstd)
};

class Codec;

/// One row per codec: everything the benchmarks, the collectives and the GPU path ask of a codec by
/// name. Adding a codec is one row in codec.cpp plus its own file.
struct CodecSpec {
  std::string name;
  bool lossless = false;
  /// Keeps state between steps (an error-feedback residual, PowerSGD's Q): a ring allreduce, which
  /// compresses a different chunk each step, cannot use it.
  bool stateful = false;
  /// Encodings of different ranks can be summed without decoding (randomk's shared indices, PowerSGD's
  /// factors): a linear allreduce can use it.
  bool summable = false;
  bool gpu = false;  ///< has a CUDA path (gpu_codecs.hpp)
  /// Relative L2 error a reconstruction of finite data must stay within to pass verify: 0 for lossless
  /// codecs, +inf where the error depends on the data (topk, randomk, powersgd).
  double error_bound = 0;
  /// Creates the codec; throws std::invalid_argument naming the parameter out of range.
  std::unique_ptr<Codec> (*make)(const CodecConfig&) = nullptr;
};

/// Every codec, lossless first: none, exponent, zstd, lz4, cast-bf16, cast-fp16, int8-block, fp8-e4m3,
/// fp8-e5m2, topk, randomk, powersgd.
const std::vector<CodecSpec>& codec_table();
/// The row of `codec`; throws std::invalid_argument listing the known names.
const CodecSpec& codec_spec(std::string_view codec);
/// The names of codec_table(), in its order.
const std::vector<std::string>& codec_names();
/// codec_spec(codec).lossless; false for an unknown name.
bool is_lossless(std::string_view codec);

class Codec {
 public:
  virtual ~Codec() = default;
  virtual std::string name() const = 0;
  virtual bool lossless() const = 0;
  /// Bytes compress() may write at most for this input (callers size the output with it).
  virtual size_t max_compressed_bytes(TensorView in) const = 0;
  /// Compresses `in` into `out` (out.size() >= max_compressed_bytes(in)); returns the bytes written.
  /// Stateful codecs (error feedback, PowerSGD's Q) update their state here. Throws CodecError for an
  /// unsupported dtype or shape.
  virtual size_t compress(TensorView in, std::span<uint8_t> out) = 0;
  /// Decodes a stream made by compress() into `out` (same count and dtype as the input was). Throws
  /// CodecError on a corrupt or mismatched stream; never reads or writes outside the two spans.
  virtual void decompress(std::span<const uint8_t> in, MutableTensorView out) = 0;
  /// Clears state (error-feedback residual, PowerSGD's Q) so the next compress starts fresh.
  virtual void reset() {}
};

/// Creates a codec (codec_spec(config.name).make); throws std::invalid_argument naming the parameter for an
/// unknown name or a value out of range (threads < 1, block < 1, density outside (0, 1], rank < 1, level
/// outside zstd's range).
std::unique_ptr<Codec> make_codec(const CodecConfig& config);

}  // namespace mlsb::compress
