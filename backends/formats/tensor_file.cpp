#include "backends/formats/tensor_file.hpp"

#include <cerrno>
#include <cstring>

namespace mlsb::formats {

TensorFileError tensor_file_error(const std::filesystem::path& path, std::string_view message) {
  return TensorFileError("tensor file '" + path.string() + "': " + std::string(message));
}

InputFile::InputFile(const std::filesystem::path& path) : path_(path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("is a directory, not a tensor file");
  errno = 0;
  in_.open(path, std::ios::binary);
  if (!in_)
    fail(std::string("cannot open for reading") + (errno ? " (" + std::string(std::strerror(errno)) + ")" : ""));
  in_.seekg(0, std::ios::end);
  const auto end = in_.tellg();
  if (end < 0) fail("cannot determine the file size");
  size_ = static_cast<uint64_t>(end);
}

void InputFile::fail(const std::string& message) const { throw tensor_file_error(path_, message); }

void InputFile::require(uint64_t offset, uint64_t bytes, std::string_view what) const {
  if (offset > size_ || bytes > size_ - offset)
    fail("truncated: " + std::string(what) + " needs " + std::to_string(bytes) + " bytes at offset " +
         std::to_string(offset) + ", the file has " + std::to_string(size_) + " bytes");
}

void InputFile::read(uint64_t offset, std::span<uint8_t> dst, std::string_view what) {
  require(offset, dst.size(), what);
  if (dst.empty()) return;
  in_.clear();
  in_.seekg(static_cast<std::streamoff>(offset));
  in_.read(reinterpret_cast<char*>(dst.data()), static_cast<std::streamsize>(dst.size()));
  if (static_cast<size_t>(in_.gcount()) != dst.size())
    fail("read error: " + std::string(what) + " expected " + std::to_string(dst.size()) + " bytes, got " +
         std::to_string(in_.gcount()));
}

bool checked_count(std::span<const int64_t> dims, size_t elem_bytes, int64_t& count) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return false;
  }
  int64_t bytes = 0;
  if (__builtin_mul_overflow(n, static_cast<int64_t>(elem_bytes), &bytes)) return false;
  count = n;
  return true;
}

std::string shape_text(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace mlsb::formats
