#pragma once
// A tiny safetensors writer for tests that need checkpoints: the 8-byte little-endian header size, the
// JSON header, then the tensors' bytes back to back.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/test_support.hpp"

namespace mlsb::test {

struct SafetensorsTensor {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::string bytes;  ///< the raw little-endian data
};

/// The raw bytes of a vector (F32 from floats, BF16/F16 from uint16_t, ...).
template <typename T>
std::string bytes_of(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

/// A file: 8-byte little-endian size of `header`, the header text, then `data` (malformed on purpose
/// when the test wants it).
inline void write_safetensors_raw(const std::filesystem::path& p, const std::string& header, const std::string& data) {
  std::string size(8, '\0');
  for (int i = 0; i < 8; ++i) size[i] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  write_file(p, size + header + data);
}

/// A well-formed file holding `tensors` back to back, with a __metadata__ entry.
inline void write_safetensors(const std::filesystem::path& p, const std::vector<SafetensorsTensor>& tensors) {
  nlohmann::json header = {{"__metadata__", {{"format", "pt"}}}};
  std::string data;
  for (const auto& t : tensors) {
    const size_t end = data.size() + t.bytes.size();
    header[t.name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {data.size(), end}}};
    data += t.bytes;
  }
  write_safetensors_raw(p, header.dump(), data);
}

}  // namespace mlsb::test
