#include "workloads/moe_offload/safetensors.hpp"

#include <algorithm>
#include <bit>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "backends/formats/small_floats.hpp"

namespace fs = std::filesystem;

namespace mlsb::moe_offload {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

namespace {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");

constexpr uint64_t kMaxHeaderBytes = 100'000'000;

/// Bytes per element of a safetensors dtype; 0 for an unknown one.
uint64_t dtype_bytes(const std::string& dtype) {
  if (dtype == "F64" || dtype == "I64" || dtype == "U64") return 8;
  if (dtype == "F32" || dtype == "I32" || dtype == "U32") return 4;
  if (dtype == "BF16" || dtype == "F16" || dtype == "I16" || dtype == "U16") return 2;
  if (dtype == "I8" || dtype == "U8" || dtype == "BOOL" || dtype == "F8_E4M3" || dtype == "F8_E5M2") return 1;
  return 0;
}

[[noreturn]] void fail(const std::string& file, const std::string& why) {
  throw std::runtime_error("checkpoint " + file + ": " + why);
}

/// Parses one tensor entry of a header; `data_bytes` is the size of the file's data section.
TensorInfo parse_entry(const std::string& file, const std::string& name, const nlohmann::json& v,
                       uint64_t data_start, uint64_t data_bytes) {
  const std::string where = "tensor '" + name + "': ";
  if (!v.is_object()) fail(file, where + "entry is not an object");
  TensorInfo t;
  t.file = file;
  t.data_start = data_start;
  const auto dtype = v.find("dtype"), shape = v.find("shape"), offsets = v.find("data_offsets");
  if (dtype == v.end()) fail(file, where + "missing dtype");
  if (shape == v.end()) fail(file, where + "missing shape");
  if (offsets == v.end()) fail(file, where + "missing data_offsets");
  if (!dtype->is_string()) fail(file, where + "dtype is not a string");
  t.dtype = dtype->get<std::string>();
  const uint64_t elem = dtype_bytes(t.dtype);
  if (elem == 0) fail(file, where + "unknown dtype '" + t.dtype + "'");
  if (!shape->is_array()) fail(file, where + "shape is not an array");
  uint64_t count = 1;
  bool overflow = false;
  for (const auto& d : *shape) {
    if (!d.is_number_unsigned() || d.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
      fail(file, where + "shape has an entry that is not a non-negative integer: " + d.dump());
    const uint64_t n = d.get<uint64_t>();
    t.shape.push_back(static_cast<int64_t>(n));
    if (n != 0 && count > std::numeric_limits<uint64_t>::max() / n) overflow = true;
    count *= n;
  }
  if (!offsets->is_array() || offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
      !(*offsets)[1].is_number_unsigned())
    fail(file, where + "data_offsets is not [begin, end] of non-negative integers: " + offsets->dump());
  t.begin = (*offsets)[0].get<uint64_t>();
  t.end = (*offsets)[1].get<uint64_t>();
  const std::string range = "data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "]";
  if (t.end < t.begin) fail(file, where + range + " end before begin");
  if (t.end > data_bytes)
    fail(file, where + range + " lie outside the file (data section of " + std::to_string(data_bytes) + " bytes)");
  overflow = overflow || count > std::numeric_limits<uint64_t>::max() / elem;
  if (overflow || t.end - t.begin != count * elem)
    fail(file, where + range + " hold " + std::to_string(t.end - t.begin) + " bytes, shape " + shape_text(t.shape) +
                   " of " + t.dtype + " needs " + (overflow ? "more than 2^64" : std::to_string(count * elem)));
  return t;
}

/// Reads the header of one .safetensors file into `out`; throws for a name already in `out`.
void index_file(const std::string& file, std::map<std::string, TensorInfo>& out) {
  std::error_code ec;
  if (!fs::exists(file, ec)) fail(file, "no such file or folder");
  if (!fs::is_regular_file(file, ec)) fail(file, "not a regular file");
  const uint64_t size = fs::file_size(file, ec);
  std::ifstream in(file, std::ios::binary);
  if (ec || !in) fail(file, "cannot open the file for reading");
  if (size < 8) fail(file, std::to_string(size) + " bytes, shorter than the 8-byte header size");
  unsigned char raw[8];
  in.read(reinterpret_cast<char*>(raw), 8);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | raw[i];
  if (n > kMaxHeaderBytes)
    fail(file, "header size " + std::to_string(n) + " is absurd (over " + std::to_string(kMaxHeaderBytes) + " bytes)");
  if (n > size - 8)
    fail(file, "header size " + std::to_string(n) + " overruns the file (" + std::to_string(size) + " bytes)");
  std::string text(n, '\0');
  if (!in.read(text.data(), static_cast<std::streamsize>(n))) fail(file, "cannot read the header");
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail(file, std::string("header is not JSON: ") + e.what());
  }
  if (!header.is_object()) fail(file, "header is not a JSON object");
  const uint64_t data_start = 8 + n;
  for (const auto& [name, v] : header.items()) {
    if (name == "__metadata__") continue;
    TensorInfo t = parse_entry(file, name, v, data_start, size - data_start);
    if (const auto it = out.find(name); it != out.end())
      fail(file, "tensor '" + name + "' is also in " + it->second.file);
    out.emplace(name, std::move(t));
  }
}

}  // namespace

std::map<std::string, TensorInfo> read_safetensors_index(const std::string& path) {
  std::map<std::string, TensorInfo> out;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    index_file(path, out);
    return out;
  }
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(path, ec))
    if (entry.path().extension() == ".safetensors") files.push_back(entry.path().string());
  if (ec) fail(path, "cannot list the folder: " + ec.message());
  if (files.empty()) fail(path, "the folder holds no *.safetensors file");
  std::sort(files.begin(), files.end());
  for (const auto& f : files) index_file(f, out);
  return out;
}

void read_tensor_f32(const std::string& name, const TensorInfo& t, float* out) {
  const std::string where = "tensor '" + name + "' (" + t.dtype + "): ";
  const bool f32 = t.dtype == "F32", bf16 = t.dtype == "BF16", f16 = t.dtype == "F16";
  if (!f32 && !bf16 && !f16) fail(t.file, where + "cannot read dtype " + t.dtype + " as fp32 (F32, BF16 or F16 only)");
  const uint64_t elem = f32 ? 4 : 2, bytes = t.end - t.begin;
  if (t.end < t.begin || bytes % elem != 0) fail(t.file, where + "byte range is not whole elements");
  std::ifstream in(t.file, std::ios::binary);
  if (!in) fail(t.file, where + "cannot open the file for reading");
  in.seekg(static_cast<std::streamoff>(t.data_start + t.begin));
  const auto read = [&](char* dst, uint64_t n) {
    if (!in.read(dst, static_cast<std::streamsize>(n)))
      fail(t.file, where + "read of " + std::to_string(n) + " bytes at offset " +
                       std::to_string(t.data_start + t.begin) + " failed (file truncated?)");
  };
  if (f32) {
    read(reinterpret_cast<char*>(out), bytes);
    return;
  }
  constexpr uint64_t chunk = 1 << 16;  // elements converted per read
  std::vector<uint16_t> buf(std::min(chunk, bytes / 2));
  for (uint64_t done = 0, count = bytes / 2; done < count;) {
    const uint64_t n = std::min(chunk, count - done);
    read(reinterpret_cast<char*>(buf.data()), n * 2);
    for (uint64_t i = 0; i < n; ++i) out[done + i] = bf16 ? formats::bf16_to_f32(buf[i]) : formats::fp16_to_f32(buf[i]);
    done += n;
  }
}

}  // namespace mlsb::moe_offload
