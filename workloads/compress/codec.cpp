#include "workloads/compress/codec.hpp"

#include <zstd.h>

#include <algorithm>

#include "workloads/compress/baselines.hpp"
#include "workloads/compress/exponent.hpp"
#include "workloads/compress/powersgd.hpp"
#include "workloads/compress/quantize.hpp"
#include "workloads/compress/sparsify.hpp"

namespace mlsb::compress {

const std::vector<std::string>& codec_names() {
  static const std::vector<std::string> names = {"none",      "exponent",  "zstd",     "lz4",
                                                 "cast-bf16", "cast-fp16", "int8-block", "fp8-e4m3",
                                                 "fp8-e5m2",  "topk",      "randomk",  "powersgd"};
  return names;
}

bool is_lossless(std::string_view codec) {
  return codec == "none" || codec == "exponent" || codec == "zstd" || codec == "lz4";
}

std::unique_ptr<Codec> make_codec(const CodecConfig& c) {
  if (c.threads < 1) throw std::invalid_argument("threads: must be at least 1 (got " + std::to_string(c.threads) + ")");
  if (c.name == "none") return make_none_codec();
  if (c.name == "exponent") {
    ExponentParams p;
    p.threads = c.threads;
    return make_exponent_codec(p);
  }
  if (c.name == "zstd") {
    if (c.level < ZSTD_minCLevel() || c.level > ZSTD_maxCLevel())
      throw std::invalid_argument("level: zstd levels are " + std::to_string(ZSTD_minCLevel()) + ".." +
                                  std::to_string(ZSTD_maxCLevel()) + " (got " + std::to_string(c.level) + ")");
    return make_zstd_codec(c.level, c.threads);
  }
  if (c.name == "lz4") return make_lz4_codec(c.threads);
  const bool blocked = c.name == "int8-block" || c.name == "fp8-e4m3" || c.name == "fp8-e5m2";
  if (blocked && c.block < 1)
    throw std::invalid_argument("block: must be at least 1 element (got " + std::to_string(c.block) + ")");
  if (c.name == "cast-bf16") return make_quant_codec(QuantKind::CastBf16, c.block);
  if (c.name == "cast-fp16") return make_quant_codec(QuantKind::CastFp16, c.block);
  if (c.name == "int8-block") return make_quant_codec(QuantKind::Int8Block, c.block);
  if (c.name == "fp8-e4m3") return make_quant_codec(QuantKind::Fp8E4M3, c.block);
  if (c.name == "fp8-e5m2") return make_quant_codec(QuantKind::Fp8E5M2, c.block);
  if (c.name == "topk" || c.name == "randomk") {
    if (!(c.density > 0 && c.density <= 1))
      throw std::invalid_argument("density: must be in (0, 1] (got " + std::to_string(c.density) + ")");
    return c.name == "topk" ? make_topk_codec(c.density, c.error_feedback)
                            : make_randomk_codec(c.density, c.seed, c.error_feedback);
  }
  if (c.name == "powersgd") {
    if (c.rank < 1) throw std::invalid_argument("rank: must be at least 1 (got " + std::to_string(c.rank) + ")");
    return make_powersgd_codec(c.rank, c.seed, c.error_feedback);
  }
  std::string known;
  for (const auto& n : codec_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("codec: unknown codec '" + c.name + "' (known: " + known + ")");
}

}  // namespace mlsb::compress
