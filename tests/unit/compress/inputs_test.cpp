#include "workloads/compress/inputs.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <set>

#include "support/test_support.hpp"

namespace mlsb::compress {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

double mean_of(const Tensor& t) {
  double s = 0;
  for (int64_t i = 0; i < t.count(); ++i) s += load_float(t.data.data(), t.dtype, i);
  return s / static_cast<double>(t.count());
}
double std_of(const Tensor& t) {
  const double m = mean_of(t);
  double s = 0;
  for (int64_t i = 0; i < t.count(); ++i) {
    const double d = load_float(t.data.data(), t.dtype, i) - m;
    s += d * d;
  }
  return std::sqrt(s / static_cast<double>(t.count()));
}

Tensor f32_tensor(std::string name, std::vector<float> v, std::vector<int64_t> shape = {}) {
  Tensor t;
  t.name = std::move(name);
  t.dtype = DType::F32;
  t.shape = shape.empty() ? std::vector<int64_t>{static_cast<int64_t>(v.size())} : shape;
  t.data.resize(4 * v.size());
  std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}

/// A file's bytes from a string (may contain NULs) plus raw floats.
void write_bytes(const std::filesystem::path& p, const std::string& head, const std::vector<float>& data = {}) {
  std::string s = head;
  s.append(reinterpret_cast<const char*>(data.data()), 4 * data.size());
  test::write_file(p, s);
}

std::string le64(uint64_t n) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(n >> (8 * i));
  return s;
}

std::string load_error(const std::filesystem::path& p, std::string_view name) {
  try {
    load_tensor(p, name);
  } catch (const TensorFileError& e) {
    return e.what();
  }
  return "no error";
}

TEST(CompressGenerators, Deterministic) {
  for (const auto& d : distribution_names()) {
    const Tensor a = generate(d, DType::BF16, 1000, 0.02, 7);
    EXPECT_EQ(a.data, generate(d, DType::BF16, 1000, 0.02, 7).data) << d;
    EXPECT_NE(a.data, generate(d, DType::BF16, 1000, 0.02, 8).data) << d;
    EXPECT_EQ(a.count(), 1000);
    EXPECT_EQ(a.shape, std::vector<int64_t>{1000});
  }
}

TEST(CompressGenerators, IndependentOfCountAndThreads) {
  // The large tensor is filled by two threads; its prefix equals the small (one-thread) tensor.
  const Tensor small = generate("gaussian", DType::F32, 70000, 1.0, 3);
  const Tensor big = generate("gaussian", DType::F32, (int64_t{1} << 22) + 5, 1.0, 3);
  ASSERT_TRUE(std::equal(small.data.begin(), small.data.end(), big.data.begin()));
}

TEST(CompressGenerators, Moments) {
  const double sigma = 0.02;
  for (const char* d : {"gaussian", "laplace", "uniform"}) {
    const Tensor t = generate(d, DType::F32, 200000, sigma, 11);
    EXPECT_NEAR(mean_of(t), 0, 0.01 * sigma) << d;
    EXPECT_NEAR(std_of(t), sigma, 0.02 * sigma) << d;
  }
  const Tensor u = generate("uniform", DType::F32, 100000, sigma, 1);
  for (int64_t i = 0; i < u.count(); ++i) ASSERT_LE(std::fabs(load_float(u.data.data(), DType::F32, i)), sigma * std::sqrt(3.0));
  // Laplace has heavier tails: P(|x| > 3 sigma) is about 1.4% (gaussian 0.27%).
  const Tensor l = generate("laplace", DType::F32, 200000, 1.0, 2);
  int64_t tail = 0;
  for (int64_t i = 0; i < l.count(); ++i) tail += std::fabs(load_float(l.data.data(), DType::F32, i)) > 3;
  EXPECT_NEAR(static_cast<double>(tail) / 200000, std::exp(-3 * std::sqrt(2.0)), 0.002);
}

TEST(CompressGenerators, OutliersAreAboutOnePerMille) {
  const Tensor t = generate("outliers", DType::F32, 400000, 1.0, 5);
  int64_t big = 0;
  for (int64_t i = 0; i < t.count(); ++i) big += std::fabs(load_float(t.data.data(), DType::F32, i)) > 8;
  EXPECT_GT(big, 250);
  EXPECT_LT(big, 550);
}

TEST(CompressGenerators, PathologicalHasEverySpecialClass) {
  for (DType dt : {DType::F32, DType::F16, DType::BF16}) {
    const Tensor t = generate("pathological", dt, 1000, 1.0, 9);
    std::set<uint32_t> nan_patterns;
    bool pos_nan = false, neg_nan = false, pos_inf = false, neg_inf = false, pos_zero = false, neg_zero = false;
    bool subnormal = false, neg_subnormal = false, max_normal = false, min_normal = false, regular = false;
    const float max_val = dt == DType::F32 ? std::numeric_limits<float>::max() : dt == DType::F16 ? 65504.0f : bf16_to_float(0x7F7F);
    const float min_val = dt == DType::F32 ? 0x1p-126f : dt == DType::F16 ? 0x1p-14f : 0x1p-126f;
    for (int64_t i = 0; i < t.count(); ++i) {
      const float f = load_float(t.data.data(), dt, i);
      uint32_t raw = 0;
      std::memcpy(&raw, t.data.data() + i * dtype_size(dt), dtype_size(dt));
      if (std::isnan(f)) {
        nan_patterns.insert(raw);
        (std::signbit(f) ? neg_nan : pos_nan) = true;
      } else if (std::isinf(f)) {
        (f > 0 ? pos_inf : neg_inf) = true;
      } else if (f == 0) {
        (std::signbit(f) ? neg_zero : pos_zero) = true;
      } else if (std::fabs(f) < min_val) {
        (f > 0 ? subnormal : neg_subnormal) = true;
      } else if (std::fabs(f) == max_val) {
        max_normal = true;
      } else if (std::fabs(f) == min_val) {
        min_normal = true;
      } else {
        regular = true;
      }
    }
    EXPECT_GE(nan_patterns.size(), 4u) << to_string(dt);
    EXPECT_TRUE(pos_nan && neg_nan && pos_inf && neg_inf && pos_zero && neg_zero) << to_string(dt);
    EXPECT_TRUE(subnormal && neg_subnormal && max_normal && min_normal && regular) << to_string(dt);
  }
}

TEST(CompressGenerators, SmallCountsAndBadArguments) {
  EXPECT_TRUE(generate("gaussian", DType::F32, 0, 1.0, 1).data.empty());
  EXPECT_EQ(generate("pathological", DType::F16, 1, 1.0, 1).data.size(), 2u);
  EXPECT_THAT([] { generate("cauchy", DType::F32, 4, 1.0, 1); },
              ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("distribution")));
  EXPECT_THAT([] { generate("gaussian", DType::F32, -1, 1.0, 1); },
              ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("count")));
  EXPECT_THAT([] { generate("gaussian", DType::F32, 4, 0.0, 1); },
              ::testing::ThrowsMessage<std::invalid_argument>(HasSubstr("sigma")));
}

TEST(CompressSafetensors, WriteThenReadBack) {
  test::TempDir dir;
  Tensor a = f32_tensor("layer.weight", {1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor b = generate("gaussian", DType::BF16, 33, 1.0, 4);
  b.name = "layer.bias";
  write_safetensors(dir / "m.safetensors", {a, b});
  const auto infos = list_tensors(dir / "m.safetensors");
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_EQ(infos[0].name, "layer.weight");
  EXPECT_EQ(infos[0].shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(infos[1].dtype, DType::BF16);
  EXPECT_EQ(infos[1].count, 33);
  const Tensor a2 = load_tensor(dir / "m.safetensors", "layer.weight");
  EXPECT_EQ(a2.data, a.data);
  EXPECT_EQ(a2.shape, a.shape);
  EXPECT_EQ(load_tensor(dir / "m.safetensors", "layer.bias").data, b.data);
  EXPECT_THAT(load_error(dir / "m.safetensors", "all"), HasSubstr("one dtype"));
  EXPECT_THAT(load_error(dir / "m.safetensors", "nope"), AllOf(HasSubstr("m.safetensors"), HasSubstr("'nope'")));
}

TEST(CompressSafetensors, HandWrittenFileAndAllInFileOrder) {
  test::TempDir dir;
  // "b" comes first in the data although JSON sorts "a" first; metadata is ignored.
  const std::string json =
      R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[1,2],"data_offsets":[8,16]},)"
      R"("b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  write_bytes(dir / "h.safetensors", le64(json.size()) + json, {1.5f, -2.0f, 3.0f, 4.0f});
  const auto infos = list_tensors(dir / "h.safetensors");
  ASSERT_EQ(infos.size(), 2u);
  EXPECT_EQ(infos[0].name, "b");
  const Tensor a = load_tensor(dir / "h.safetensors", "a");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(load_float(a.data.data(), DType::F32, 0), 3.0f);
  const Tensor all = load_tensor(dir / "h.safetensors", "all");
  ASSERT_EQ(all.count(), 4);
  EXPECT_EQ(all.shape, std::vector<int64_t>{4});
  const float want[] = {1.5f, -2.0f, 3.0f, 4.0f};
  for (int i = 0; i < 4; ++i) EXPECT_EQ(load_float(all.data.data(), DType::F32, i), want[i]);
}

// The reader's own checks are tests/unit/formats/safetensors_test.cpp's; here: what compress adds (its
// dtypes) and that the reader's errors reach its callers as TensorFileError naming the file.
TEST(CompressSafetensors, MalformedFiles) {
  test::TempDir dir;
  auto file = [&](const std::string& name, const std::string& json, size_t data_bytes) {
    const auto p = dir / name;
    write_bytes(p, le64(json.size()) + json, std::vector<float>(data_bytes / 4, 1.0f));
    return p;
  };
  const auto i64 = file("i64.safetensors", R"({"x":{"dtype":"I64","shape":[1],"data_offsets":[0,8]}})", 8);
  EXPECT_THAT(load_error(i64, "x"), AllOf(HasSubstr("i64.safetensors"), HasSubstr("tensor 'x' has dtype I64"),
                                          HasSubstr("supported: F32, F16, BF16")));
  EXPECT_THROW(list_tensors(i64), TensorFileError);
  const auto bad_json = file("json.safetensors", R"({"x":{"dtype":"F32",)", 4);
  EXPECT_THAT(load_error(bad_json, "x"), AllOf(HasSubstr("json.safetensors"), HasSubstr("bad JSON header")));
  const auto empty = file("empty.safetensors", "{}", 0);
  EXPECT_THAT(load_error(empty, "all"), AllOf(HasSubstr("empty.safetensors"), HasSubstr("holds no tensors")));
  test::write_file(dir / "short.safetensors", "abc");
  EXPECT_THAT(load_error(dir / "short.safetensors", "x"), HasSubstr("truncated"));
  EXPECT_THAT(load_error(dir / "missing.safetensors", "x"), AllOf(HasSubstr("missing.safetensors"), HasSubstr("cannot open")));
}

TEST(CompressNpy, WriteThenReadBack) {
  test::TempDir dir;
  const Tensor t = f32_tensor("ignored", {1, 2, 3, 4, 5, 6}, {3, 2});
  write_npy(dir / "grad.npy", t);
  const auto infos = list_tensors(dir / "grad.npy");
  ASSERT_EQ(infos.size(), 1u);
  EXPECT_EQ(infos[0].name, "grad");
  EXPECT_EQ(infos[0].shape, (std::vector<int64_t>{3, 2}));
  const Tensor back = load_tensor(dir / "grad.npy", "grad");
  EXPECT_EQ(back.data, t.data);
  EXPECT_EQ(back.shape, t.shape);
  EXPECT_EQ(load_tensor(dir / "grad.npy", "all").shape, std::vector<int64_t>{6});
  EXPECT_THAT(load_error(dir / "grad.npy", "other"), HasSubstr("'other'"));
  const std::string bytes = test::read_file(dir / "grad.npy");
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_EQ((bytes.size() - 24) % 64, 0u);  // data 64-byte aligned
  Tensor h = generate("gaussian", DType::F16, 5, 1.0, 1);
  write_npy(dir / "h.npy", h);
  EXPECT_EQ(load_tensor(dir / "h.npy", "h").data, h.data);
  EXPECT_THROW(write_npy(dir / "b.npy", generate("gaussian", DType::BF16, 5, 1.0, 1)), std::invalid_argument);
}

std::string npy_v1(const std::string& dict) {
  std::string s("\x93NUMPY\x01\x00", 8);
  s += static_cast<char>(dict.size() & 0xFF);
  s += static_cast<char>(dict.size() >> 8);
  return s + dict;
}

TEST(CompressNpy, HandWrittenFiles) {
  test::TempDir dir;
  write_bytes(dir / "a.npy", npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }   \n"),
              {1, 2, 3, 4});
  const Tensor a = load_tensor(dir / "a.npy", "a");
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(load_float(a.data.data(), DType::F32, 3), 4.0f);
  // Version 2.0 (u32 length), a 0-d array.
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (), }\n";
  std::string v2("\x93NUMPY\x02\x00", 8);
  v2 += std::string{static_cast<char>(dict.size()), 0, 0, 0} + dict;
  write_bytes(dir / "s.npy", v2, {7});
  EXPECT_EQ(load_tensor(dir / "s.npy", "s").count(), 1);
  // Big-endian floats are byte-swapped.
  const float one_be = std::bit_cast<float>(__builtin_bswap32(std::bit_cast<uint32_t>(1.0f)));
  write_bytes(dir / "be.npy", npy_v1("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }\n"), {one_be});
  EXPECT_EQ(load_float(load_tensor(dir / "be.npy", "be").data.data(), DType::F32, 0), 1.0f);
  // Fortran order (numpy.asfortranarray): read as stored, the bytes of the C-order transpose.
  write_bytes(dir / "f.npy", npy_v1("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n"),
              {1, 2, 3, 4, 5, 6});
  const Tensor f = load_tensor(dir / "f.npy", "f");
  EXPECT_EQ(f.shape, (std::vector<int64_t>{3, 2}));
  for (int i = 0; i < 6; ++i) EXPECT_EQ(load_float(f.data.data(), DType::F32, i), static_cast<float>(i + 1));
}

TEST(CompressNpy, MalformedFiles) {
  test::TempDir dir;
  write_bytes(dir / "i.npy", npy_v1("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }\n"), {0, 0, 0, 0});
  EXPECT_THAT(load_error(dir / "i.npy", "i"), AllOf(HasSubstr("i.npy"), HasSubstr("'<i8'"), HasSubstr("'<f4'")));
  write_bytes(dir / "t.npy", npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (10,), }\n"), {1, 2, 3});
  EXPECT_THAT(load_error(dir / "t.npy", "t"), AllOf(HasSubstr("t.npy"), HasSubstr("truncated"), HasSubstr("needs 40 bytes")));
  // A tiny file claiming 2^45 bytes: refused before anything that size is allocated.
  write_bytes(dir / "big.npy", npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (8796093022208,), }\n"), {1});
  EXPECT_THAT(load_error(dir / "big.npy", "big"), AllOf(HasSubstr("truncated"), HasSubstr("needs 35184372088832 bytes")));
  write_bytes(dir / "k.npy", npy_v1("{'descr': '<f4', 'shape': (1,), }\n"), {1});
  EXPECT_THAT(load_error(dir / "k.npy", "k"), HasSubstr("fortran_order"));
  write_bytes(dir / "g.npy", npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (1,, }\n"), {1});
  EXPECT_THAT(load_error(dir / "g.npy", "g"), HasSubstr("bad .npy header"));
  write_bytes(dir / "h.npy", npy_v1("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999), }\n"));
  EXPECT_THAT(load_error(dir / "h.npy", "h"), HasSubstr("overflows"));
  std::string v9 = npy_v1("{}\n");
  v9[6] = 9;
  write_bytes(dir / "v.npy", v9);
  EXPECT_THAT(load_error(dir / "v.npy", "v"), HasSubstr("version 9.0"));
  write_bytes(dir / "l.npy", std::string("\x93NUMPY\x01\x00\xff\x7f{", 11));
  EXPECT_THAT(load_error(dir / "l.npy", "l"), HasSubstr("truncated"));
}

}  // namespace
}  // namespace mlsb::compress
