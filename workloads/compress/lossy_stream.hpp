#pragma once
// Bounds-checked little-endian writing and reading of the lossy codecs' streams (quantize, sparsify,
// powersgd). Every overrun is a CodecError naming the codec; nothing is read or written outside the span.
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

#include "workloads/compress/codec.hpp"

namespace mlsb::compress::detail {

static_assert(std::endian::native == std::endian::little, "the stream formats are little-endian");

class StreamWriter {
 public:
  StreamWriter(std::span<uint8_t> out, std::string codec) : out_(out), codec_(std::move(codec)) {}
  template <class T>
  void put(T v) {
    static_assert(std::is_trivially_copyable_v<T>);
    put_bytes(&v, sizeof v);
  }
  void put_bytes(const void* src, size_t n) {
    if (n > out_.size() - pos_)
      throw CodecError(codec_ + ": output buffer of " + std::to_string(out_.size()) + " bytes is too small");
    if (n) std::memcpy(out_.data() + pos_, src, n);
    pos_ += n;
  }
  /// Reserves n bytes and returns where they start (for encoders that write in place).
  uint8_t* reserve(size_t n) {
    if (n > out_.size() - pos_)
      throw CodecError(codec_ + ": output buffer of " + std::to_string(out_.size()) + " bytes is too small");
    uint8_t* p = out_.data() + pos_;
    pos_ += n;
    return p;
  }
  size_t size() const { return pos_; }

 private:
  std::span<uint8_t> out_;
  std::string codec_;
  size_t pos_ = 0;
};

class StreamReader {
 public:
  StreamReader(std::span<const uint8_t> in, std::string codec) : in_(in), codec_(std::move(codec)) {}
  template <class T>
  T get(const char* field) {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    std::memcpy(&v, take(sizeof v, field), sizeof v);
    return v;
  }
  /// The next n bytes; CodecError ("truncated stream: <field> ...") when fewer remain.
  const uint8_t* take(size_t n, const char* field) {
    if (n > in_.size() - pos_)
      fail(std::string("truncated stream: ") + field + " needs " + std::to_string(n) + " bytes at offset " +
           std::to_string(pos_) + ", the stream has " + std::to_string(in_.size()));
    const uint8_t* p = in_.data() + pos_;
    pos_ += n;
    return p;
  }
  size_t remaining() const { return in_.size() - pos_; }
  /// The stream must end here (trailing bytes mean it does not match its header).
  void expect_end() const {
    if (pos_ != in_.size())
      fail(std::to_string(in_.size() - pos_) + " unexpected bytes after the end of the stream");
  }
  [[noreturn]] void fail(const std::string& what) const { throw CodecError(codec_ + ": " + what); }

 private:
  std::span<const uint8_t> in_;
  std::string codec_;
  size_t pos_ = 0;
};

/// Checks a decoded header's dtype byte and count against the output tensor.
inline void check_target(const StreamReader& r, uint8_t dtype, uint64_t count, MutableTensorView out) {
  if (dtype > 2) r.fail("stream has an unknown dtype code " + std::to_string(dtype));
  if (static_cast<DType>(dtype) != out.dtype)
    r.fail("stream holds " + std::string(to_string(static_cast<DType>(dtype))) + ", output is " +
           std::string(to_string(out.dtype)));
  if (count != static_cast<uint64_t>(out.count))
    r.fail("stream holds " + std::to_string(count) + " elements, output has " + std::to_string(out.count));
}

}  // namespace mlsb::compress::detail
