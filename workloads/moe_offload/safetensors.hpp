#pragma once
// Reading tensors from safetensors files (Hugging Face's format: an 8-byte little-endian header size,
// a JSON header {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}, then
// the raw little-endian data).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace mlsb::moe_offload {

struct TensorInfo {
  std::string file;            ///< the file holding it
  std::string dtype;           ///< "F32", "BF16", "F16", ...
  std::vector<int64_t> shape;
  uint64_t begin = 0, end = 0; ///< byte range within the file's data section
  uint64_t data_start = 0;     ///< offset of the data section in the file (8 + header size)
};

/// The tensors of a checkpoint: one .safetensors file, or every *.safetensors file of a folder.
/// Throws std::runtime_error "checkpoint FILE: ..." for an unreadable file, a header that is not JSON
/// or overruns the file, a tensor whose byte range disagrees with its dtype and shape or lies outside
/// the file, and a tensor name present in two shards.
std::map<std::string, TensorInfo> read_safetensors_index(const std::string& path);

/// Reads the tensor into fp32, converting BF16 and F16. Throws std::runtime_error naming the tensor for
/// another dtype or a read failure.
void read_tensor_f32(const std::string& name, const TensorInfo& t, float* out);

/// A tensor shape as text for messages: "[2, 3]".
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace mlsb::moe_offload
