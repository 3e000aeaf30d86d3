// The safetensors reader (backends/formats/safetensors.hpp): round trips of F32, BF16 and F16 from files
// this test writes, data-offset order, sharded folders, and every malformed header the reader must reject
// (with the file, the tensor and the field named).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "backends/formats/safetensors.hpp"
#include "backends/formats/small_floats.hpp"
#include "support/safetensors_writer.hpp"
#include "support/test_support.hpp"

namespace mlsb::formats {
namespace {

using testing::AllOf;
using testing::HasSubstr;
using Json = nlohmann::json;

using Tensor = test::SafetensorsTensor;
using test::bytes_of;
using test::write_safetensors;
constexpr auto write_raw = test::write_safetensors_raw;

std::string thrown_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "no error";
}

TEST(Safetensors, F32RoundTripsWithItsIndex) {
  test::TempDir dir;
  const std::vector<float> a = {1.5f, -2.25f, 0.0f, 3e38f, -std::numeric_limits<float>::infinity(), 1e-42f};
  const std::vector<float> b = {7.0f, 8.0f};
  write_safetensors(dir / "m.safetensors", {{"a", "F32", {2, 3}, bytes_of(a)}, {"b", "F32", {2}, bytes_of(b)}});
  const auto index = read_safetensors_index((dir / "m.safetensors").string());
  ASSERT_EQ(index.size(), 2u);  // __metadata__ skipped
  const SafetensorsTensor& ta = index.at("a");
  EXPECT_EQ(ta.file, (dir / "m.safetensors").string());
  EXPECT_EQ(ta.dtype, "F32");
  EXPECT_EQ(ta.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(ta.begin, 0u);
  EXPECT_EQ(ta.end, 24u);
  EXPECT_EQ(index.at("b").begin, 24u);
  const std::string file = test::read_file(dir / "m.safetensors");
  uint64_t n = 0;
  std::memcpy(&n, file.data(), 8);
  EXPECT_EQ(ta.data_start, 8 + n);
  std::vector<float> out(6);
  read_tensor_f32(ta, out.data());
  EXPECT_EQ(std::memcmp(out.data(), a.data(), 24), 0);
  read_tensor_f32(index.at("b"), out.data());
  EXPECT_EQ(out[0], 7.0f);
  EXPECT_EQ(out[1], 8.0f);
}

TEST(Safetensors, AFileListsItsTensorsInDataOrderWithTheirCounts) {
  test::TempDir dir;
  // "b" comes first in the data although JSON sorts "a" first; metadata is skipped.
  const std::vector<float> data = {1.5f, -2.0f, 3.0f, 4.0f};
  write_raw(dir / "h.safetensors",
            R"({"__metadata__":{"format":"pt"},"a":{"dtype":"F32","shape":[1,2],"data_offsets":[8,16]},)"
            R"("b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
            bytes_of(data));
  const auto tensors = read_safetensors_header(dir / "h.safetensors");
  ASSERT_EQ(tensors.size(), 2u);
  EXPECT_EQ(tensors[0].name, "b");
  EXPECT_EQ(tensors[1].name, "a");
  EXPECT_EQ(tensors[1].shape, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(tensors[1].count, 2);
  std::vector<uint8_t> bytes(8);
  read_tensor_bytes(tensors[1], bytes);
  EXPECT_EQ(std::memcmp(bytes.data(), data.data() + 2, 8), 0);
  EXPECT_THAT(thrown_message([&] { read_tensor_bytes(tensors[1], std::span(bytes).first(4)); }),
              HasSubstr("a buffer of 4 bytes for its 8"));
  EXPECT_EQ(safetensors_dtype_bytes("BF16"), 2u);
  EXPECT_EQ(safetensors_dtype_bytes("F8_E5M2"), 1u);
  EXPECT_EQ(safetensors_dtype_bytes("Q7"), 0u);
}

TEST(Safetensors, Bf16IsTheUpperHalfOfFp32) {
  test::TempDir dir;
  const std::vector<uint16_t> bits = {0x3F80, 0xC000, 0x3FC0, 0x0000, 0x8000, 0x7F80, 0x0001};
  write_safetensors(dir / "m.safetensors", {{"w", "BF16", {7}, bytes_of(bits)}});
  const auto index = read_safetensors_index((dir / "m.safetensors").string());
  std::vector<float> out(7);
  read_tensor_f32(index.at("w"), out.data());
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -2.0f);
  EXPECT_EQ(out[2], 1.5f);
  EXPECT_EQ(out[3], 0.0f);
  EXPECT_TRUE(std::signbit(out[4]));
  EXPECT_EQ(out[5], std::numeric_limits<float>::infinity());
  EXPECT_EQ(out[6], std::ldexp(1.0f, -133));  // bf16 subnormal = fp32 subnormal
}

TEST(Safetensors, F16DecodesNormalsSubnormalsInfAndNan) {
  test::TempDir dir;
  const std::vector<uint16_t> bits = {0x3C00, 0xC500, 0x7BFF, 0x0001, 0x03FF, 0x7C00, 0xFC00, 0x7E00, 0x8000, 0x3555};
  write_safetensors(dir / "m.safetensors", {{"w", "F16", {2, 5}, bytes_of(bits)}});
  const auto index = read_safetensors_index((dir / "m.safetensors").string());
  std::vector<float> out(10);
  read_tensor_f32(index.at("w"), out.data());
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], -5.0f);
  EXPECT_EQ(out[2], 65504.0f);
  EXPECT_EQ(out[3], std::ldexp(1.0f, -24));
  EXPECT_EQ(out[4], 1023 * std::ldexp(1.0f, -24));
  EXPECT_EQ(out[5], std::numeric_limits<float>::infinity());
  EXPECT_EQ(out[6], -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(out[7]));
  EXPECT_TRUE(std::signbit(out[8]) && out[8] == 0.0f);
  EXPECT_NEAR(out[9], 1.0 / 3, 1e-3);
}

TEST(Safetensors, LargeHalfTensorsConvertAcrossReadChunks) {
  test::TempDir dir;
  std::vector<uint16_t> bits(200'003);
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = formats::f32_to_bf16(static_cast<float>(i % 256));
  write_safetensors(dir / "m.safetensors", {{"w", "BF16", {static_cast<int64_t>(bits.size())}, bytes_of(bits)}});
  const auto index = read_safetensors_index((dir / "m.safetensors").string());
  std::vector<float> out(bits.size());
  read_tensor_f32(index.at("w"), out.data());
  for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], static_cast<float>(i % 256)) << i;
}

TEST(Safetensors, EveryDtypeSizeIsAccepted) {
  test::TempDir dir;
  const std::vector<std::pair<std::string, int>> sizes = {{"F64", 8},  {"I64", 8},     {"I32", 4},
                                                          {"F16", 2},  {"I8", 1},      {"U8", 1},
                                                          {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}};
  std::vector<Tensor> tensors;
  for (const auto& [dtype, bytes] : sizes) tensors.push_back({"t_" + dtype, dtype, {3}, std::string(3 * bytes, '\1')});
  tensors.push_back({"empty", "F32", {0, 4}, ""});
  write_safetensors(dir / "m.safetensors", tensors);
  EXPECT_EQ(read_safetensors_index((dir / "m.safetensors").string()).size(), sizes.size() + 1);
}

TEST(Safetensors, AFolderIndexesEveryShardInNameOrder) {
  test::TempDir dir;
  const std::vector<float> a = {1, 2}, b = {3, 4, 5};
  write_safetensors(dir / "model-00002-of-00002.safetensors", {{"b", "F32", {3}, bytes_of(b)}});
  write_safetensors(dir / "model-00001-of-00002.safetensors", {{"a", "F32", {2}, bytes_of(a)}});
  test::write_file(dir / "model.safetensors.index.json", "{}");  // not a shard
  test::write_file(dir / "README.md", "not a shard");
  const auto index = read_safetensors_index(dir.path().string());
  ASSERT_EQ(index.size(), 2u);
  EXPECT_EQ(index.at("a").file, (dir / "model-00001-of-00002.safetensors").string());
  EXPECT_EQ(index.at("b").file, (dir / "model-00002-of-00002.safetensors").string());
  std::vector<float> out(3);
  read_tensor_f32(index.at("b"), out.data());
  EXPECT_EQ(out, b);
}

TEST(Safetensors, ANameInTwoShardsIsAnError) {
  test::TempDir dir;
  const std::vector<float> a = {1, 2};
  write_safetensors(dir / "a.safetensors", {{"w", "F32", {2}, bytes_of(a)}});
  write_safetensors(dir / "b.safetensors", {{"w", "F32", {2}, bytes_of(a)}});
  EXPECT_THAT(thrown_message([&] { read_safetensors_index(dir.path().string()); }),
              AllOf(HasSubstr("tensor file '" + (dir / "b.safetensors").string() + "': "), HasSubstr("'w'"),
                    HasSubstr("also in " + (dir / "a.safetensors").string())));
}

TEST(Safetensors, AnEmptyFolderOrAMissingPathIsAnError) {
  test::TempDir dir;
  test::write_file(dir / "notes.txt", "x");
  EXPECT_THAT(thrown_message([&] { read_safetensors_index(dir.path().string()); }),
              AllOf(HasSubstr("tensor file '" + dir.path().string() + "': "), HasSubstr("no *.safetensors")));
  const std::string missing = (dir / "missing.safetensors").string();
  EXPECT_THAT(thrown_message([&] { read_safetensors_index(missing); }),
              AllOf(HasSubstr("tensor file '" + missing + "': "), HasSubstr("no such file")));
}

TEST(Safetensors, FileLevelDefectsNameTheFile) {
  test::TempDir dir;
  const std::string p = (dir / "m.safetensors").string();
  const auto expect = [&](const std::string& why) {
    EXPECT_THAT(thrown_message([&] { read_safetensors_index(p); }),
                AllOf(HasSubstr("tensor file '" + p + "': "), HasSubstr(why)));
  };
  test::write_file(p, "abcde");
  expect("truncated: the 8-byte header length needs 8 bytes at offset 0, the file has 5 bytes");
  write_raw(p, "{}", "");
  test::write_file(p, test::read_file(p).substr(0, 9));  // declares 2 header bytes, holds 1
  expect("header length 2 exceeds the file (9 bytes)");
  std::string huge(8, '\0');
  huge[4] = 1;  // 2^32
  test::write_file(p, huge + "{}");
  expect("header length 4294967296 exceeds the 100 MB limit (100000000 bytes)");
  write_raw(p, "{\"a\": ", "");
  expect("bad JSON header: ");
  write_raw(p, R"({"__metadata__": {"a": [[[[[[[[1]]]]]]]]}})", "");
  expect("bad JSON header: JSON nesting deeper than 8 levels");
  write_raw(p, "[1, 2]", "");
  expect("the JSON header is not an object");
  EXPECT_THAT(thrown_message([&] { read_safetensors_header(dir / "absent.safetensors"); }),
              AllOf(HasSubstr("absent.safetensors"), HasSubstr("cannot open for reading")));
  EXPECT_THAT(thrown_message([&] { read_safetensors_header(dir.path()); }), HasSubstr("is a directory"));
  write_raw(p, "{}   ", "");  // spaces pad headers to 8 bytes
  EXPECT_TRUE(read_safetensors_index(p).empty());
}

TEST(Safetensors, TensorEntryDefectsNameTheTensorAndField) {
  test::TempDir dir;
  const std::string p = (dir / "m.safetensors").string();
  const std::string data(16, '\0');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"("x")", "entry is not an object"},
      {R"({"shape": [4], "data_offsets": [0, 16]})", "missing dtype"},
      {R"({"dtype": "F32", "data_offsets": [0, 16]})", "missing shape"},
      {R"({"dtype": "F32", "shape": [4]})", "missing data_offsets"},
      {R"({"dtype": 4, "shape": [4], "data_offsets": [0, 16]})", "dtype is not a string"},
      {R"({"dtype": "Q7", "shape": [4], "data_offsets": [0, 16]})", "unknown dtype 'Q7'"},
      {R"({"dtype": "F32", "shape": "4", "data_offsets": [0, 16]})", "shape is not an array"},
      {R"({"dtype": "F32", "shape": [-4], "data_offsets": [0, 16]})", "shape has an entry"},
      {R"({"dtype": "F32", "shape": [4.0], "data_offsets": [0, 16]})", "shape has an entry"},
      {R"({"dtype": "F32", "shape": [4], "data_offsets": [0, 8, 16]})", "data_offsets is not [begin, end]"},
      {R"({"dtype": "F32", "shape": [4], "data_offsets": {"begin": 0}})", "data_offsets is not [begin, end]"},
      {R"({"dtype": "F32", "shape": [4], "data_offsets": [-1, 16]})", "data_offsets is not [begin, end]"},
      {R"({"dtype": "F32", "shape": [0], "data_offsets": [8, 4]})", "data_offsets [8, 4] end before begin"},
      {R"({"dtype": "F32", "shape": [4], "data_offsets": [8, 24]})",
       "data_offsets [8, 24] lie outside the data section of 16 bytes"},
      {R"({"dtype": "F32", "shape": [3], "data_offsets": [0, 16]})",
       "data_offsets [0, 16] hold 16 bytes, shape [3] of F32 needs 12"},
      {R"({"dtype": "BF16", "shape": [2, 2], "data_offsets": [0, 16]})", "shape [2, 2] of BF16 needs 8"},
      {R"({"dtype": "F64", "shape": [4], "data_offsets": [0, 16]})", "of F64 needs 32"},
      {R"({"dtype": "F32", "shape": [4294967296, 4294967296], "data_offsets": [0, 16]})",
       "shape [4294967296, 4294967296] of F32 overflows a 64-bit size"},
  };
  for (const auto& [entry, why] : cases) {
    SCOPED_TRACE(entry);
    write_raw(p, R"({"ok": {"dtype": "U8", "shape": [16], "data_offsets": [0, 16]}, "layer.w": )" + entry + "}", data);
    EXPECT_THAT(thrown_message([&] { read_safetensors_index(p); }),
                AllOf(HasSubstr("tensor file '" + p + "': tensor 'layer.w': "), HasSubstr(why)));
  }
}

TEST(Safetensors, ReadingAnotherDtypeOrATruncatedFileNamesTheTensor) {
  test::TempDir dir;
  const std::string p = (dir / "m.safetensors").string();
  write_safetensors(p, {{"ids", "I32", {2}, bytes_of(std::vector<int32_t>{1, 2})},
                        {"w", "F32", {2}, bytes_of(std::vector<float>{1, 2})}});
  auto index = read_safetensors_index(p);
  float out[4];
  EXPECT_THAT(thrown_message([&] { read_tensor_f32(index.at("ids"), out); }),
              AllOf(HasSubstr("tensor file '" + p + "': "), HasSubstr("'ids'"), HasSubstr("dtype I32")));
  SafetensorsTensor t = index.at("w");
  t.begin += 8, t.end += 8;  // past the end of the file
  EXPECT_THAT(thrown_message([&] { read_tensor_f32(t, out); }),
              AllOf(HasSubstr("tensor file '" + p + "': "), HasSubstr("truncated: tensor 'w' needs 8 bytes")));
  t.file = (dir / "gone.safetensors").string();
  EXPECT_THAT(thrown_message([&] { read_tensor_f32(t, out); }), AllOf(HasSubstr("'w'"), HasSubstr("cannot open")));
}

}  // namespace
}  // namespace mlsb::formats
