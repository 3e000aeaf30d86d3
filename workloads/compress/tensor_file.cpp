// Tensor files: opening, positioned reads, and dispatch between safetensors and .npy by magic bytes.
#include "workloads/compress/tensor_file.hpp"

#include <cstring>

namespace mlsb::compress {
namespace detail {

InputFile::InputFile(const std::filesystem::path& path) : path_(path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) fail("is a directory, not a tensor file");
  in_.open(path, std::ios::binary);
  if (!in_) fail("cannot open for reading");
  in_.seekg(0, std::ios::end);
  const auto end = in_.tellg();
  if (end < 0) fail("cannot determine the file size");
  size_ = static_cast<uint64_t>(end);
}

void InputFile::fail(const std::string& message) const {
  throw TensorFileError("tensor file '" + path_.string() + "': " + message);
}

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

Tensor concatenate(std::vector<Tensor>&& parts) {
  Tensor all;
  all.name = "all";
  if (!parts.empty()) all.dtype = parts.front().dtype;
  size_t bytes = 0;
  for (const auto& p : parts) bytes += p.data.size();
  all.data.reserve(bytes);
  for (auto& p : parts) {
    all.data.insert(all.data.end(), p.data.begin(), p.data.end());
    p.data = {};
  }
  all.shape = {all.count()};
  return all;
}

void write_file(const std::filesystem::path& file, std::span<const std::span<const uint8_t>> pieces) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) throw TensorFileError("tensor file '" + file.string() + "': cannot open for writing");
  for (auto piece : pieces)
    out.write(reinterpret_cast<const char*>(piece.data()), static_cast<std::streamsize>(piece.size()));
  out.close();
  if (!out) throw TensorFileError("tensor file '" + file.string() + "': write failed");
}

namespace {
bool is_npy(InputFile& file) {
  constexpr char kMagic[] = "\x93NUMPY";
  if (file.size() < 6) return false;
  uint8_t head[6];
  file.read(0, head, "magic");
  return std::memcmp(head, kMagic, 6) == 0;
}
}  // namespace

}  // namespace detail

std::vector<TensorInfo> list_tensors(const std::filesystem::path& file) {
  detail::InputFile f(file);
  return detail::is_npy(f) ? detail::npy_list(f) : detail::safetensors_list(f);
}

Tensor load_tensor(const std::filesystem::path& file, std::string_view name) {
  detail::InputFile f(file);
  return detail::is_npy(f) ? detail::npy_load(f, name) : detail::safetensors_load(f, name);
}

}  // namespace mlsb::compress
