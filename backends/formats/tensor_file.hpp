#pragma once
// Reading tensor files (safetensors.hpp, compress's .npy reader): positioned reads with errors that name
// the file, and the checked arithmetic of tensor sizes.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace mlsb::formats {

/// A tensor file is missing, unreadable, truncated, malformed, or holds what the reader cannot use; the
/// message is "tensor file 'PATH': WHAT", WHAT naming the tensor and the field where there is one.
struct TensorFileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// TensorFileError("tensor file 'PATH': MESSAGE").
TensorFileError tensor_file_error(const std::filesystem::path& path, std::string_view message);

/// A tensor file opened for positioned reads; every error is a TensorFileError naming the file.
class InputFile {
 public:
  /// Throws "cannot open for reading (no such file)", "... (permission denied)" and the like, or "is a
  /// directory, not a tensor file".
  explicit InputFile(const std::filesystem::path& path);
  uint64_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }
  /// Throws tensor_file_error(path(), message).
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

/// Product of dims (each >= 0) as an element count; false when a dim is negative or the count, or its
/// byte size count * elem_bytes, overflows int64.
bool checked_count(std::span<const int64_t> dims, size_t elem_bytes, int64_t& count);

/// A shape for messages: "[2, 3]".
std::string shape_text(std::span<const int64_t> shape);

}  // namespace mlsb::formats
