#include "backends/formats/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <limits>

#include "backends/formats/small_floats.hpp"
#include "util/json_parse.hpp"

namespace mlsb::formats {
namespace {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

/// Parses one tensor entry; `data_bytes` is the size of the file's data section.
SafetensorsTensor parse_entry(const InputFile& file, const std::string& name, const nlohmann::json& v,
                              uint64_t data_start, uint64_t data_bytes) {
  const auto fail = [&](const std::string& why) { file.fail("tensor '" + name + "': " + why); };
  if (!v.is_object()) fail("entry is not an object");
  SafetensorsTensor t;
  t.name = name;
  t.file = file.path().string();
  t.data_start = data_start;
  const auto dtype = v.find("dtype"), shape = v.find("shape"), offsets = v.find("data_offsets");
  if (dtype == v.end()) fail("missing dtype");
  if (shape == v.end()) fail("missing shape");
  if (offsets == v.end()) fail("missing data_offsets");
  if (!dtype->is_string()) fail("dtype is not a string");
  t.dtype = dtype->get<std::string>();
  const size_t elem = safetensors_dtype_bytes(t.dtype);
  if (elem == 0) fail("unknown dtype '" + t.dtype + "'");
  if (!shape->is_array()) fail("shape is not an array");
  for (const auto& d : *shape) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      fail("shape has an entry that is not a non-negative integer: " + d.dump());
    t.shape.push_back(static_cast<int64_t>(d.get<uint64_t>()));
  }
  if (!checked_count(t.shape, elem, t.count))
    fail("shape " + shape_text(t.shape) + " of " + t.dtype + " overflows a 64-bit size");
  if (!offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned())
    fail("data_offsets is not [begin, end] of non-negative integers: " + offsets->dump());
  t.begin = (*offsets)[0].get<uint64_t>();
  t.end = (*offsets)[1].get<uint64_t>();
  const std::string range = "data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]";
  if (t.end < t.begin) fail(range + " end before begin");
  if (t.end > data_bytes) fail(range + " lie outside the data section of " + std::to_string(data_bytes) + " bytes");
  const uint64_t want = static_cast<uint64_t>(t.count) * elem;
  if (t.end - t.begin != want)
    fail(range + " hold " + std::to_string(t.end - t.begin) + " bytes, shape " + shape_text(t.shape) + " of " +
         t.dtype + " needs " + std::to_string(want));
  return t;
}

/// Appends the tensors of `file` to `out` in data-offset order.
void read_header(const std::filesystem::path& path, std::vector<SafetensorsTensor>& out) {
  InputFile file(path);
  uint8_t len_bytes[8];
  file.read(0, len_bytes, "the 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len_bytes[i];
  if (n > kSafetensorsMaxHeaderBytes)
    file.fail("header length " + std::to_string(n) + " exceeds the 100 MB limit (" +
              std::to_string(kSafetensorsMaxHeaderBytes) + " bytes)");
  if (n > file.size() - 8)
    file.fail("header length " + std::to_string(n) + " exceeds the file (" + std::to_string(file.size()) + " bytes)");
  std::string text(n, '\0');
  file.read(8, {reinterpret_cast<uint8_t*>(text.data()), text.size()}, "the JSON header");
  nlohmann::json header;
  try {
    header = parse_json_limited(text, kSafetensorsMaxJsonDepth);
  } catch (const nlohmann::json::parse_error& e) {
    file.fail("bad JSON header: " + json_syntax_error(e));
  } catch (const std::exception& e) {
    file.fail(std::string("bad JSON header: ") + e.what());
  }
  if (!header.is_object()) file.fail("the JSON header is not an object");
  const size_t first = out.size();
  const uint64_t data_start = 8 + n;
  for (const auto& [name, value] : header.items())
    if (name != "__metadata__") out.push_back(parse_entry(file, name, value, data_start, file.size() - data_start));
  std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end(),
                   [](const SafetensorsTensor& a, const SafetensorsTensor& b) { return a.begin < b.begin; });
}

/// The file of `t`, opened; a file that cannot be opened is an error naming the tensor too.
InputFile open_file_of(const SafetensorsTensor& t) {
  try {
    return InputFile(t.file);
  } catch (const TensorFileError& e) {
    throw TensorFileError(std::string(e.what()) + " (reading tensor '" + t.name + "')");
  }
}

}  // namespace

size_t safetensors_dtype_bytes(std::string_view dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "BF16" || dtype == "F16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL" || dtype == "F8_E4M3" || dtype == "F8_E5M2") return 1;
  return 0;
}

std::vector<SafetensorsTensor> read_safetensors_header(const std::filesystem::path& file) {
  std::vector<SafetensorsTensor> out;
  read_header(file, out);
  return out;
}

std::map<std::string, SafetensorsTensor> read_safetensors_index(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::exists(path, ec)) throw tensor_file_error(path, "no such file or folder");
  std::vector<fs::path> files;
  if (!fs::is_directory(path, ec)) {
    files.push_back(path);
  } else {
    for (const auto& entry : fs::directory_iterator(path, ec))
      if (entry.path().extension() == ".safetensors") files.push_back(entry.path());
    if (ec) throw tensor_file_error(path, "cannot list the folder: " + ec.message());
    if (files.empty()) throw tensor_file_error(path, "the folder holds no *.safetensors file");
    std::sort(files.begin(), files.end());
  }
  std::map<std::string, SafetensorsTensor> index;
  for (const auto& f : files) {
    std::vector<SafetensorsTensor> tensors;
    read_header(f, tensors);
    for (auto& t : tensors) {
      if (const auto it = index.find(t.name); it != index.end())
        throw tensor_file_error(f, "tensor '" + t.name + "' is also in " + it->second.file);
      std::string name = t.name;
      index.emplace(std::move(name), std::move(t));
    }
  }
  return index;
}

void read_tensor_bytes(const SafetensorsTensor& t, std::span<uint8_t> dst) {
  InputFile file = open_file_of(t);
  if (dst.size() != t.end - t.begin)
    file.fail("tensor '" + t.name + "': a buffer of " + std::to_string(dst.size()) + " bytes for its " +
              std::to_string(t.end - t.begin));
  file.read(t.data_start + t.begin, dst, "tensor '" + t.name + "'");
}

void read_tensor_f32(const SafetensorsTensor& t, float* out) {
  const bool f32 = t.dtype == "F32", bf16 = t.dtype == "BF16", f16 = t.dtype == "F16";
  if (!f32 && !bf16 && !f16)
    throw tensor_file_error(
        t.file, "tensor '" + t.name + "': cannot read dtype " + t.dtype + " as fp32 (F32, BF16 or F16 only)");
  const uint64_t bytes = t.end - t.begin;
  if (f32) {
    read_tensor_bytes(t, {reinterpret_cast<uint8_t*>(out), bytes});
    return;
  }
  InputFile file = open_file_of(t);
  const std::string what = "tensor '" + t.name + "'";
  file.require(t.data_start + t.begin, bytes, what);
  constexpr uint64_t kChunk = 1 << 16;  // elements converted per read
  const uint64_t count = bytes / 2;
  std::vector<uint16_t> buf(std::min(kChunk, count));
  for (uint64_t done = 0; done < count;) {
    const uint64_t n = std::min(kChunk, count - done);
    file.read(t.data_start + t.begin + 2 * done, {reinterpret_cast<uint8_t*>(buf.data()), 2 * n}, what);
    for (uint64_t i = 0; i < n; ++i) out[done + i] = bf16 ? bf16_to_f32(buf[i]) : fp16_to_f32(buf[i]);
    done += n;
  }
}

}  // namespace mlsb::formats
