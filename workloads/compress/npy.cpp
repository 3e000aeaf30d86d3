// NumPy .npy (numpy.lib.format, versions 1.0, 2.0, 3.0): magic "\x93NUMPY", major, minor, header length
// (u16 in 1.0, u32 in 2.0/3.0), a Python dict literal {'descr': ..., 'fortran_order': ..., 'shape': (...)}
// padded with spaces and '\n', then the data. Supported descr: '<f4', '<f2', and big-endian '>f4', '>f2'
// (byte-swapped on load). A fortran_order True array is read as stored: its bytes in file order are the
// C-order array of the reversed shape (its transpose), which is what a codec sees; a lossless round trip,
// and the error metrics of element-wise codecs, do not depend on the order.
#include <algorithm>
#include <cctype>

#include "workloads/compress/tensor_file.hpp"

namespace mlsb::compress {
namespace detail {
namespace {

using formats::InputFile;

constexpr uint64_t kMaxNpyHeaderBytes = 1u << 20;

struct NpyHeader {
  TensorInfo info;
  bool big_endian = false;
  uint64_t data_start = 0;
};

/// A strict reader of the header dict: string keys; values are strings, True/False, or int tuples.
class DictParser {
 public:
  DictParser(InputFile& file, std::string_view text) : file_(file), s_(text) {}

  NpyHeader parse() {
    NpyHeader h;
    bool has_descr = false, has_order = false, has_shape = false, fortran = false;
    std::string descr;
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = string_literal();
      expect(':');
      skip_space();
      if (key == "descr") {
        descr = string_literal();
        has_descr = true;
      } else if (key == "fortran_order") {
        fortran = boolean();
        has_order = true;
      } else if (key == "shape") {
        h.info.shape = tuple();
        has_shape = true;
      } else {
        fail("unexpected key '" + key + "'");
      }
      skip_space();
      if (peek() == ',') ++pos_;
      else if (peek() != '}') fail("expected ',' or '}'");
    }
    if (!has_descr || !has_order || !has_shape) fail("needs the keys 'descr', 'fortran_order' and 'shape'");
    if (descr == "<f4" || descr == ">f4") h.info.dtype = DType::F32;
    else if (descr == "<f2" || descr == ">f2") h.info.dtype = DType::F16;
    else file_.fail("has dtype '" + descr + "'; supported: '<f4', '<f2' (and big-endian '>f4', '>f2')");
    h.big_endian = descr[0] == '>';
    if (fortran) std::reverse(h.info.shape.begin(), h.info.shape.end());  // the same bytes in C order
    if (!formats::checked_count(h.info.shape, dtype_size(h.info.dtype), h.info.count))
      fail("shape overflows a 64-bit size");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& what) {
    file_.fail("bad .npy header at character " + std::to_string(pos_) + ": " + what);
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  void expect(char c) {
    skip_space();
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  std::string string_literal() {
    skip_space();
    const char q = peek();
    if (q != '\'' && q != '"') fail("expected a quoted string");
    const size_t end = s_.find(q, pos_ + 1);
    if (end == std::string_view::npos) fail("unterminated string");
    std::string out(s_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return out;
  }
  bool boolean() {
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("expected True or False");
  }
  std::vector<int64_t> tuple() {
    std::vector<int64_t> dims;
    expect('(');
    while (true) {
      skip_space();
      if (peek() == ')') break;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) fail("expected a dimension");
      int64_t d = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        if (__builtin_mul_overflow(d, 10, &d) || __builtin_add_overflow(d, peek() - '0', &d))
          fail("dimension overflows 64 bits");
        ++pos_;
      }
      if (peek() == 'L') ++pos_;  // Python 2 longs
      dims.push_back(d);
      if (dims.size() > 64) fail("more than 64 dimensions");
      skip_space();
      if (peek() == ',') ++pos_;
      else if (peek() != ')') fail("expected ',' or ')'");
    }
    ++pos_;
    return dims;
  }

  InputFile& file_;
  std::string_view s_;
  size_t pos_ = 0;
};

NpyHeader read_npy_header(InputFile& file) {
  uint8_t pre[8];
  file.read(0, pre, "the .npy preamble");
  const uint8_t major = pre[6], minor = pre[7];
  if (major < 1 || major > 3 || minor != 0)
    file.fail("unsupported .npy version " + std::to_string(major) + "." + std::to_string(minor) +
              " (supported: 1.0, 2.0, 3.0)");
  uint64_t len = 0, start = 0;
  if (major == 1) {
    uint8_t b[2];
    file.read(8, b, "the .npy header length");
    len = b[0] | (b[1] << 8);
    start = 10;
  } else {
    uint8_t b[4];
    file.read(8, b, "the .npy header length");
    len = b[0] | (b[1] << 8) | (b[2] << 16) | (static_cast<uint64_t>(b[3]) << 24);
    start = 12;
  }
  if (len > kMaxNpyHeaderBytes) file.fail("header length " + std::to_string(len) + " exceeds the 1 MB limit");
  std::string text(len, '\0');
  file.read(start, {reinterpret_cast<uint8_t*>(text.data()), text.size()}, "the .npy header");
  NpyHeader h = DictParser(file, text).parse();
  h.info.name = file.path().stem().string();
  h.data_start = start + len;
  return h;
}

}  // namespace

std::vector<TensorInfo> npy_list(formats::InputFile& file) { return {read_npy_header(file).info}; }

Tensor npy_load(formats::InputFile& file, std::string_view name) {
  NpyHeader h = read_npy_header(file);
  if (name != "all" && name != h.info.name)
    file.fail("no tensor named '" + std::string(name) + "' (a .npy file holds one, named '" + h.info.name +
              "' after the file, or use 'all')");
  Tensor t;
  t.name = h.info.name;
  t.dtype = h.info.dtype;
  t.shape = h.info.shape;
  const uint64_t bytes = static_cast<uint64_t>(h.info.count) * dtype_size(t.dtype);
  file.require(h.data_start, bytes, "the array data");  // before allocating what the header claims
  t.data.resize(bytes);
  file.read(h.data_start, t.data, "the array data");
  if (h.big_endian) {
    const size_t w = dtype_size(t.dtype);
    for (size_t i = 0; i < t.data.size(); i += w) std::reverse(t.data.begin() + i, t.data.begin() + i + w);
  }
  if (name == "all") t.shape = {t.count()};
  return t;
}

}  // namespace detail

void write_npy(const std::filesystem::path& file, const Tensor& tensor) {
  if (tensor.dtype == DType::BF16)
    throw std::invalid_argument("write_npy: bf16 has no standard .npy dtype; write safetensors instead");
  int64_t count = 0;
  if (!tensor.shape.empty() &&
      (!formats::checked_count(tensor.shape, dtype_size(tensor.dtype), count) || count != tensor.count()))
    throw std::invalid_argument("write_npy: tensor '" + tensor.name + "' has a shape that does not match its " +
                                std::to_string(tensor.count()) + " elements");
  const std::vector<int64_t> shape = tensor.shape.empty() ? std::vector<int64_t>{tensor.count()} : tensor.shape;
  std::string dims;
  for (size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";  // Python's one-element tuple
  std::string dict = std::string("{'descr': '") + (tensor.dtype == DType::F32 ? "<f4" : "<f2") +
                     "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Pad with spaces and a final '\n' so the data starts 64-byte aligned; version 1.0 while the header
  // length fits its u16, else 2.0.
  auto padded = [&](size_t pre) { return (pre + dict.size() + 1 + 63) / 64 * 64 - pre; };
  const bool v1 = padded(10) <= 0xFFFF;
  const size_t len = padded(v1 ? 10 : 12);
  dict.append(len - dict.size() - 1, ' ');
  dict += '\n';
  std::vector<uint8_t> head = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(v1 ? 1 : 2), 0};
  for (size_t i = 0; i < (v1 ? 2u : 4u); ++i) head.push_back(static_cast<uint8_t>(dict.size() >> (8 * i)));
  head.insert(head.end(), dict.begin(), dict.end());
  const std::span<const uint8_t> pieces[] = {head, tensor.data};
  detail::write_file(file, pieces);
}

}  // namespace mlsb::compress
