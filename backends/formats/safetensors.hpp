#pragma once
// The safetensors reader (Hugging Face, https://github.com/huggingface/safetensors, "Format"): a u64
// little-endian header length N, N bytes of JSON {NAME: {"dtype", "shape", "data_offsets": [begin, end]},
// "__metadata__": {...}}, then the data section, which the offsets index from its start. Used by compress
// (tensor files) and moe_offload (checkpoints). Every error is a TensorFileError naming the file, and the
// tensor and field where there is one.
#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/formats/tensor_file.hpp"

namespace mlsb::formats {

/// Header limits. The length: the reference implementation's MAX_HEADER_SIZE (100,000,000 bytes), which
/// a header of a million tensors stays under. The JSON nesting: a tensor entry nests 3 deep (header,
/// entry, shape), "__metadata__" (a string-to-string map) 2; deeper input is refused before it is walked.
inline constexpr uint64_t kSafetensorsMaxHeaderBytes = 100'000'000;
inline constexpr int kSafetensorsMaxJsonDepth = 8;

/// Bytes per element of a safetensors dtype tag (F64 I64 U64: 8; F32 I32 U32: 4; F16 BF16 I16 U16: 2;
/// I8 U8 BOOL F8_E4M3 F8_E5M2: 1); 0 for a tag it does not know.
size_t safetensors_dtype_bytes(std::string_view dtype);

/// One tensor of a safetensors file, as its header describes it (checked against the file).
struct SafetensorsTensor {
  std::string name;
  std::string file;   ///< the file holding it
  std::string dtype;  ///< the safetensors tag: "F32", "BF16", "F16", "I64", ...
  std::vector<int64_t> shape;
  int64_t count = 0;            ///< elements: the product of shape
  uint64_t begin = 0, end = 0;  ///< byte range within the data section; end - begin = count * dtype bytes
  uint64_t data_start = 0;      ///< offset of the data section in the file (8 + N)
};

/// The tensors of one file in data-offset order (the order of their bytes; "__metadata__" skipped).
/// Throws TensorFileError for: a file that cannot be opened or is a folder; a file shorter than 8 bytes;
/// N over kSafetensorsMaxHeaderBytes or past the end of the file; a header that is not JSON, nests deeper
/// than kSafetensorsMaxJsonDepth, or is not an object; and, naming the tensor, an entry that is not an
/// object, lacks or mistypes dtype / shape / data_offsets, has a dtype it does not know, a negative or
/// non-integer dimension, offsets outside the data section or not [begin <= end], a byte range other than
/// count * dtype bytes, or a size that overflows int64.
std::vector<SafetensorsTensor> read_safetensors_header(const std::filesystem::path& file);

/// The tensors of a checkpoint by name: one .safetensors file, or every *.safetensors file of a folder
/// (read in name order). Throws what read_safetensors_header throws, and TensorFileError for a missing
/// path, a folder without *.safetensors files, and a tensor name present in two files.
std::map<std::string, SafetensorsTensor> read_safetensors_index(const std::filesystem::path& path);

/// The tensor's bytes as stored (little-endian) into `dst` (dst.size() == t.end - t.begin). Throws
/// TensorFileError naming the tensor when the file cannot be opened or is shorter than the range.
void read_tensor_bytes(const SafetensorsTensor& t, std::span<uint8_t> dst);

/// The tensor as fp32 into out[0, t.count): F32 as stored, BF16 and F16 widened exactly. Throws
/// TensorFileError naming the tensor for another dtype, and what read_tensor_bytes throws.
void read_tensor_f32(const SafetensorsTensor& t, float* out);

}  // namespace mlsb::formats
