#pragma once
// Shared pieces of the tensor-file readers (safetensors.cpp, npy.cpp); not part of the public API.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/compress/inputs.hpp"

namespace mlsb::compress::detail {

/// A tensor file opened for positioned reads; every error is a TensorFileError naming the file.
class InputFile {
 public:
  explicit InputFile(const std::filesystem::path& path);
  uint64_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }
  /// Throws TensorFileError("<file>: <message>").
  [[noreturn]] void fail(const std::string& message) const;
  /// Reads exactly dst.size() bytes at `offset`; `what` names them in the error for a short file
  /// ("truncated: <what> needs N bytes at offset O, the file has S bytes").
  void read(uint64_t offset, std::span<uint8_t> dst, std::string_view what);
  /// Throws the same "truncated" error when `bytes` at `offset` run past the end of the file (call it
  /// before allocating a buffer a header asks for).
  void require(uint64_t offset, uint64_t bytes, std::string_view what) const;

 private:
  std::filesystem::path path_;
  std::ifstream in_;
  uint64_t size_ = 0;
};

/// Product of dims (each >= 0) as an element count; false when it overflows int64 or the byte size
/// (count * elem_bytes) would.
bool checked_count(std::span<const int64_t> dims, size_t elem_bytes, int64_t& count);

/// Concatenates tensors of one dtype into a 1-D tensor named "all" (the caller checked the dtype).
Tensor concatenate(std::vector<Tensor>&& parts);

std::vector<TensorInfo> safetensors_list(InputFile& file);
Tensor safetensors_load(InputFile& file, std::string_view name);
std::vector<TensorInfo> npy_list(InputFile& file);
Tensor npy_load(InputFile& file, std::string_view name);

/// Writes `bytes` to `file` (truncating it); throws TensorFileError naming the file on failure.
void write_file(const std::filesystem::path& file, std::span<const std::span<const uint8_t>> pieces);

}  // namespace mlsb::compress::detail
