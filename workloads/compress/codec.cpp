#include "workloads/compress/codec.hpp"

#include <zstd.h>

#include <algorithm>
#include <limits>

#include "workloads/compress/baselines.hpp"
#include "workloads/compress/exponent.hpp"
#include "workloads/compress/powersgd.hpp"
#include "workloads/compress/quantize.hpp"
#include "workloads/compress/sparsify.hpp"

namespace mlsb::compress {

namespace {

std::unique_ptr<Codec> make_blocked(QuantKind kind, const CodecConfig& c) {
  if (c.block < 1) throw std::invalid_argument("block: must be at least 1 element (got " + std::to_string(c.block) + ")");
  return make_quant_codec(kind, c.block);
}

void check_density(const CodecConfig& c) {
  if (!(c.density > 0 && c.density <= 1))
    throw std::invalid_argument("density: must be in (0, 1] (got " + std::to_string(c.density) + ")");
}

constexpr double kDataDependent = std::numeric_limits<double>::infinity();

}  // namespace

const std::vector<CodecSpec>& codec_table() {
  // error_bound: cast-bf16 keeps 8 significant bits (relative error <= 2^-9 per element), cast-fp16 11
  // (scaled into range); the block quantisers' bounds hold for the Gaussian and real tensors we test.
  static const std::vector<CodecSpec> table = {
      {"none", true, false, false, false, 0, [](const CodecConfig&) { return make_none_codec(); }},
      {"exponent", true, false, false, true, 0,
       [](const CodecConfig& c) {
         ExponentParams p;
         p.threads = c.threads;
         return make_exponent_codec(p);
       }},
      {"zstd", true, false, false, false, 0,
       [](const CodecConfig& c) {
         if (c.level < ZSTD_minCLevel() || c.level > ZSTD_maxCLevel())
           throw std::invalid_argument("level: zstd levels are " + std::to_string(ZSTD_minCLevel()) + ".." +
                                       std::to_string(ZSTD_maxCLevel()) + " (got " + std::to_string(c.level) + ")");
         return make_zstd_codec(c.level, c.threads);
       }},
      {"lz4", true, false, false, false, 0, [](const CodecConfig& c) { return make_lz4_codec(c.threads); }},
      {"cast-bf16", false, false, false, true, 1.0 / 256,
       [](const CodecConfig& c) { return make_quant_codec(QuantKind::CastBf16, c.block); }},
      {"cast-fp16", false, false, false, true, 1.0 / 1024,
       [](const CodecConfig& c) { return make_quant_codec(QuantKind::CastFp16, c.block); }},
      {"int8-block", false, false, false, true, 0.05,
       [](const CodecConfig& c) { return make_blocked(QuantKind::Int8Block, c); }},
      {"fp8-e4m3", false, false, false, true, 0.1,
       [](const CodecConfig& c) { return make_blocked(QuantKind::Fp8E4M3, c); }},
      {"fp8-e5m2", false, false, false, true, 0.2,
       [](const CodecConfig& c) { return make_blocked(QuantKind::Fp8E5M2, c); }},
      {"topk", false, true, false, false, kDataDependent,
       [](const CodecConfig& c) {
         check_density(c);
         return make_topk_codec(c.density, c.error_feedback);
       }},
      {"randomk", false, true, true, false, kDataDependent,
       [](const CodecConfig& c) {
         check_density(c);
         return make_randomk_codec(c.density, c.seed, c.error_feedback);
       }},
      {"powersgd", false, true, true, false, kDataDependent,
       [](const CodecConfig& c) {
         if (c.rank < 1) throw std::invalid_argument("rank: must be at least 1 (got " + std::to_string(c.rank) + ")");
         return make_powersgd_codec(c.rank, c.seed, c.error_feedback);
       }},
  };
  return table;
}

const std::vector<std::string>& codec_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& spec : codec_table()) n.push_back(spec.name);
    return n;
  }();
  return names;
}

const CodecSpec& codec_spec(std::string_view codec) {
  for (const auto& spec : codec_table())
    if (spec.name == codec) return spec;
  std::string known;
  for (const auto& n : codec_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("codec: unknown codec '" + std::string(codec) + "' (known: " + known + ")");
}

bool is_lossless(std::string_view codec) {
  const auto& t = codec_table();
  return std::any_of(t.begin(), t.end(), [&](const CodecSpec& s) { return s.name == codec && s.lossless; });
}

std::unique_ptr<Codec> make_codec(const CodecConfig& c) {
  if (c.threads < 1) throw std::invalid_argument("threads: must be at least 1 (got " + std::to_string(c.threads) + ")");
  return codec_spec(c.name).make(c);
}

}  // namespace mlsb::compress
