// Tensor files: dispatch between safetensors (backends/formats/safetensors.hpp's reader) and .npy by magic
// bytes, the compress dtypes of a safetensors file, tensor=all, and the writers' file output.
#include "workloads/compress/tensor_file.hpp"

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backends/formats/safetensors.hpp"

namespace mlsb::compress {
namespace detail {

void write_file(const std::filesystem::path& file, std::span<const std::span<const uint8_t>> pieces) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) throw formats::tensor_file_error(file, "cannot open for writing");
  for (auto piece : pieces)
    out.write(reinterpret_cast<const char*>(piece.data()), static_cast<std::streamsize>(piece.size()));
  out.close();
  if (!out) throw formats::tensor_file_error(file, "write failed");
}

namespace {

bool is_npy(formats::InputFile& file) {
  constexpr char kMagic[] = "\x93NUMPY";
  if (file.size() < 6) return false;
  uint8_t head[6];
  file.read(0, head, "magic");
  return std::memcmp(head, kMagic, 6) == 0;
}

std::string_view dtype_tag(DType t) {
  switch (t) {
    case DType::F32:
      return "F32";
    case DType::F16:
      return "F16";
    case DType::BF16:
      return "BF16";
  }
  return "?";
}

/// The tensors of a safetensors file (in data-offset order) with their compress dtypes; TensorFileError for
/// a tensor of another dtype.
std::vector<formats::SafetensorsTensor> safetensors_entries(const std::filesystem::path& file,
                                                            std::vector<TensorInfo>& infos) {
  auto entries = formats::read_safetensors_header(file);
  for (const auto& e : entries) {
    TensorInfo info{e.name, DType::F32, e.shape, e.count};
    if (e.dtype == "F16")
      info.dtype = DType::F16;
    else if (e.dtype == "BF16")
      info.dtype = DType::BF16;
    else if (e.dtype != "F32")
      throw formats::tensor_file_error(file,
                                       "tensor '" + e.name + "' has dtype " + e.dtype + "; supported: F32, F16, BF16");
    infos.push_back(std::move(info));
  }
  return entries;
}

Tensor load_entry(const formats::SafetensorsTensor& e, const TensorInfo& info) {
  Tensor t;
  t.name = info.name;
  t.dtype = info.dtype;
  t.shape = info.shape;
  t.data.resize(e.end - e.begin);
  formats::read_tensor_bytes(e, t.data);
  return t;
}

/// Every tensor concatenated into a 1-D tensor named "all", in file order; all must share a dtype.
Tensor load_all(const std::filesystem::path& file, const std::vector<formats::SafetensorsTensor>& entries,
                const std::vector<TensorInfo>& infos) {
  if (infos.empty()) throw formats::tensor_file_error(file, "holds no tensors");
  for (const auto& i : infos)
    if (i.dtype != infos.front().dtype)
      throw formats::tensor_file_error(file, "tensor=all needs one dtype, but '" + infos.front().name + "' is " +
                                                 std::string(dtype_tag(infos.front().dtype)) + " and '" + i.name +
                                                 "' is " + std::string(dtype_tag(i.dtype)));
  Tensor all;
  all.name = "all";
  all.dtype = infos.front().dtype;
  size_t bytes = 0;
  for (const auto& e : entries) bytes += e.end - e.begin;
  all.data.resize(bytes);
  size_t at = 0;
  for (const auto& e : entries) {
    formats::read_tensor_bytes(e, {all.data.data() + at, e.end - e.begin});
    at += e.end - e.begin;
  }
  all.shape = {all.count()};
  return all;
}

Tensor safetensors_load(const std::filesystem::path& file, std::string_view name) {
  std::vector<TensorInfo> infos;
  const auto entries = safetensors_entries(file, infos);
  if (name == "all") return load_all(file, entries, infos);
  for (size_t i = 0; i < entries.size(); ++i)
    if (infos[i].name == name) return load_entry(entries[i], infos[i]);
  std::string known;
  for (const auto& i : infos) {
    if (known.size() > 200) {
      known += ", ...";
      break;
    }
    known += (known.empty() ? "" : ", ") + i.name;
  }
  throw formats::tensor_file_error(file, "no tensor named '" + std::string(name) + "' (has: " + known + ")");
}

}  // namespace
}  // namespace detail

std::vector<TensorInfo> list_tensors(const std::filesystem::path& file) {
  formats::InputFile f(file);
  if (detail::is_npy(f)) return detail::npy_list(f);
  std::vector<TensorInfo> infos;
  detail::safetensors_entries(file, infos);
  return infos;
}

Tensor load_tensor(const std::filesystem::path& file, std::string_view name) {
  formats::InputFile f(file);
  return detail::is_npy(f) ? detail::npy_load(f, name) : detail::safetensors_load(file, name);
}

void write_safetensors(const std::filesystem::path& file, const std::vector<Tensor>& tensors) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    if (t.name.empty() || t.name == "__metadata__" || header.contains(t.name))
      throw std::invalid_argument("write_safetensors: tensor name '" + t.name + "' is empty, reserved or repeated");
    int64_t count = 0;
    if (!t.shape.empty() && (!formats::checked_count(t.shape, dtype_size(t.dtype), count) || count != t.count()))
      throw std::invalid_argument("write_safetensors: tensor '" + t.name + "' has a shape that does not match its " +
                                  std::to_string(t.count()) + " elements");
    const std::vector<int64_t> shape = t.shape.empty() ? std::vector<int64_t>{t.count()} : t.shape;
    header[t.name] = {
        {"dtype", detail::dtype_tag(t.dtype)}, {"shape", shape}, {"data_offsets", {offset, offset + t.data.size()}}};
    offset += t.data.size();
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data section starts 8-byte aligned
  uint8_t len[8];
  for (int i = 0; i < 8; ++i) len[i] = static_cast<uint8_t>(static_cast<uint64_t>(text.size()) >> (8 * i));
  std::vector<std::span<const uint8_t>> pieces = {len, {reinterpret_cast<const uint8_t*>(text.data()), text.size()}};
  for (const auto& t : tensors) pieces.emplace_back(t.data);
  detail::write_file(file, pieces);
}

}  // namespace mlsb::compress
