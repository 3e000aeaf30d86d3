// The CPU `exponent` codec object and the parameter validation its encoder and decoder share.
#include <algorithm>
#include <string>

#include "workloads/compress/exponent_detail.hpp"

namespace mlsb::compress {
namespace exponent_detail {

void validate(const ExponentParams& p) {
  if (p.chunk_elems == 0) throw std::invalid_argument("chunk_elems: must be at least 1");
  if (p.streams_per_chunk < 1 || p.streams_per_chunk > static_cast<uint32_t>(kExponentMaxStreams))
    throw std::invalid_argument("streams_per_chunk: must be 1.." + std::to_string(kExponentMaxStreams) + " (got " +
                                std::to_string(p.streams_per_chunk) + ")");
  if (p.max_code_len < 8 || p.max_code_len > kExponentMaxCodeLen)
    throw std::invalid_argument("max_code_len: must be 8.." + std::to_string(kExponentMaxCodeLen) + " (got " +
                                std::to_string(p.max_code_len) + ")");
  if (p.threads < 1) throw std::invalid_argument("threads: must be at least 1 (got " + std::to_string(p.threads) + ")");
  const uint64_t stream_elems = (uint64_t{p.chunk_elems} + p.streams_per_chunk - 1) / p.streams_per_chunk;
  if (stream_elems * static_cast<uint64_t>(p.max_code_len) > uint64_t{UINT32_MAX} * 8)
    throw std::invalid_argument("chunk_elems: streams of " + std::to_string(stream_elems) +
                                " elements could exceed the 32-bit stream_bytes field");
}

}  // namespace exponent_detail

namespace {

class ExponentCodec final : public Codec {
 public:
  explicit ExponentCodec(const ExponentParams& p) : params_(p) { exponent_detail::validate(p); }
  std::string name() const override { return "exponent"; }
  bool lossless() const override { return true; }
  size_t max_compressed_bytes(TensorView in) const override { return exponent_max_compressed_bytes(in, params_); }
  size_t compress(TensorView in, std::span<uint8_t> out) override { return exponent_compress(in, params_, out); }
  void decompress(std::span<const uint8_t> in, MutableTensorView out) override {
    exponent_decompress(in, out, params_.threads);
  }

 private:
  ExponentParams params_;
};

}  // namespace

std::unique_ptr<Codec> make_exponent_codec(const ExponentParams& params) {
  return std::make_unique<ExponentCodec>(params);
}

}  // namespace mlsb::compress
