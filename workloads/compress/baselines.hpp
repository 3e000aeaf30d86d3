#pragma once
// Baseline lossless codecs through the libraries: `none` (a memcpy, the speed-of-light peer),
// `zstd` (libzstd, a level) and `lz4` (liblz4). Each stream starts with a 16-byte header
// (u32 magic "MBL1", u8 codec, u8 dtype, u16 0, u64 count) so a mismatched decode is an error.
#include "workloads/compress/codec.hpp"

namespace mlsb::compress {

std::unique_ptr<Codec> make_none_codec();
/// zstd at `level` (ZSTD_minCLevel()..ZSTD_maxCLevel()); `threads` > 1 compresses 1 MiB-aligned
/// chunks in parallel (each an independent frame).
std::unique_ptr<Codec> make_zstd_codec(int level, int threads);
std::unique_ptr<Codec> make_lz4_codec(int threads);

}  // namespace mlsb::compress
