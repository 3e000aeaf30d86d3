// safetensors (https://github.com/huggingface/safetensors, "Format"): u64 little-endian header length N,
// N bytes of JSON {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}}, then
// the data section; offsets are relative to its start.
#include <algorithm>
#include <limits>

#include "util/json_parse.hpp"
#include "workloads/compress/tensor_file.hpp"

namespace mlsb::compress {
namespace detail {
namespace {

constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

struct Entry {
  TensorInfo info;
  uint64_t begin = 0, end = 0;  // within the data section
};

struct Header {
  uint64_t data_start = 0;  // 8 + N
  std::vector<Entry> entries;  // in data-offset order (the order of the bytes in the file)
};

std::string_view dtype_tag(DType t) {
  switch (t) {
    case DType::F32: return "F32";
    case DType::F16: return "F16";
    case DType::BF16: return "BF16";
  }
  return "?";
}

uint64_t json_u64(InputFile& file, const nlohmann::json& v, const std::string& what) {
  if (v.is_number_unsigned()) {
    const uint64_t x = v.get<uint64_t>();
    if (x <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return x;
  } else if (v.is_number_integer() && v.get<int64_t>() >= 0) {
    return static_cast<uint64_t>(v.get<int64_t>());
  }
  file.fail(what + " must be a non-negative integer (got " + v.dump() + ")");
}

Entry parse_entry(InputFile& file, const std::string& name, const nlohmann::json& j, uint64_t data_bytes) {
  const std::string where = "tensor '" + name + "'";
  if (!j.is_object()) file.fail(where + ": entry must be an object");
  Entry e;
  e.info.name = name;
  const auto dt = j.find("dtype");
  if (dt == j.end() || !dt->is_string()) file.fail(where + ": missing string field 'dtype'");
  const std::string tag = dt->get<std::string>();
  if (tag == "F32") e.info.dtype = DType::F32;
  else if (tag == "F16") e.info.dtype = DType::F16;
  else if (tag == "BF16") e.info.dtype = DType::BF16;
  else file.fail(where + " has dtype " + tag + "; supported: F32, F16, BF16");
  const auto sh = j.find("shape");
  if (sh == j.end() || !sh->is_array()) file.fail(where + ": missing array field 'shape'");
  for (const auto& d : *sh) e.info.shape.push_back(static_cast<int64_t>(json_u64(file, d, where + ": shape")));
  if (!checked_count(e.info.shape, dtype_size(e.info.dtype), e.info.count))
    file.fail(where + ": shape " + sh->dump() + " overflows a 64-bit size");
  const auto off = j.find("data_offsets");
  if (off == j.end() || !off->is_array() || off->size() != 2)
    file.fail(where + ": 'data_offsets' must be an array [begin, end]");
  e.begin = json_u64(file, (*off)[0], where + ": data_offsets");
  e.end = json_u64(file, (*off)[1], where + ": data_offsets");
  if (e.begin > e.end || e.end > data_bytes)
    file.fail(where + ": data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
              "] are outside the data section of " + std::to_string(data_bytes) + " bytes");
  const uint64_t want = static_cast<uint64_t>(e.info.count) * dtype_size(e.info.dtype);
  if (e.end - e.begin != want)
    file.fail(where + ": data_offsets span " + std::to_string(e.end - e.begin) + " bytes, but shape " +
              sh->dump() + " of " + tag + " needs " + std::to_string(want));
  return e;
}

Header read_header(InputFile& file) {
  uint8_t len_bytes[8];
  file.read(0, len_bytes, "the 8-byte header length");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | len_bytes[i];
  if (n > kMaxHeaderBytes) file.fail("header length " + std::to_string(n) + " exceeds the 100 MB limit");
  if (n > file.size() - 8)
    file.fail("header length " + std::to_string(n) + " exceeds the file (" + std::to_string(file.size()) +
              " bytes)");
  std::string text(n, '\0');
  file.read(8, {reinterpret_cast<uint8_t*>(text.data()), text.size()}, "the JSON header");
  nlohmann::json j;
  try {
    j = parse_json_limited(text, 8);
  } catch (const std::exception& e) {
    file.fail(std::string("bad JSON header: ") + e.what());
  }
  if (!j.is_object()) file.fail("the JSON header must be an object");
  Header h;
  h.data_start = 8 + n;
  const uint64_t data_bytes = file.size() - h.data_start;
  for (const auto& [name, value] : j.items()) {
    if (name == "__metadata__") continue;
    h.entries.push_back(parse_entry(file, name, value, data_bytes));
  }
  std::stable_sort(h.entries.begin(), h.entries.end(),
                   [](const Entry& a, const Entry& b) { return a.begin < b.begin; });
  return h;
}

Tensor load_entry(InputFile& file, const Header& h, const Entry& e) {
  Tensor t;
  t.name = e.info.name;
  t.dtype = e.info.dtype;
  t.shape = e.info.shape;
  t.data.resize(e.end - e.begin);
  file.read(h.data_start + e.begin, t.data, "tensor '" + e.info.name + "'");
  return t;
}

}  // namespace

std::vector<TensorInfo> safetensors_list(InputFile& file) {
  std::vector<TensorInfo> out;
  for (auto& e : read_header(file).entries) out.push_back(std::move(e.info));
  return out;
}

Tensor safetensors_load(InputFile& file, std::string_view name) {
  const Header h = read_header(file);
  if (name == "all") {
    if (h.entries.empty()) file.fail("holds no tensors");
    std::vector<Tensor> parts;
    for (const auto& e : h.entries) {
      if (e.info.dtype != h.entries.front().info.dtype)
        file.fail("tensor=all needs one dtype, but '" + h.entries.front().info.name + "' is " +
                  std::string(dtype_tag(h.entries.front().info.dtype)) + " and '" + e.info.name + "' is " +
                  std::string(dtype_tag(e.info.dtype)));
    }
    for (const auto& e : h.entries) parts.push_back(load_entry(file, h, e));
    return concatenate(std::move(parts));
  }
  for (const auto& e : h.entries)
    if (e.info.name == name) return load_entry(file, h, e);
  std::string known;
  for (const auto& e : h.entries) {
    if (known.size() > 200) {
      known += ", ...";
      break;
    }
    known += (known.empty() ? "" : ", ") + e.info.name;
  }
  file.fail("no tensor named '" + std::string(name) + "' (has: " + known + ")");
}

}  // namespace detail

void write_safetensors(const std::filesystem::path& file, const std::vector<Tensor>& tensors) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  uint64_t offset = 0;
  for (const auto& t : tensors) {
    if (t.name.empty() || t.name == "__metadata__" || header.contains(t.name))
      throw std::invalid_argument("write_safetensors: tensor name '" + t.name + "' is empty, reserved or repeated");
    int64_t count = 0;
    if (!t.shape.empty() && (!detail::checked_count(t.shape, dtype_size(t.dtype), count) || count != t.count()))
      throw std::invalid_argument("write_safetensors: tensor '" + t.name + "' has a shape that does not match its " +
                                  std::to_string(t.count()) + " elements");
    const std::vector<int64_t> shape = t.shape.empty() ? std::vector<int64_t>{t.count()} : t.shape;
    header[t.name] = {{"dtype", detail::dtype_tag(t.dtype)},
                      {"shape", shape},
                      {"data_offsets", {offset, offset + t.data.size()}}};
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
