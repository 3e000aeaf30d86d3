#include "workloads/compress/baselines.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "unit/compress/codec_test_util.hpp"
#include "workloads/compress/inputs.hpp"

namespace mlsb::compress {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> compress_baseline(Codec& codec, TensorView in) { return test_util::encode(codec, in); }

std::vector<uint8_t> decompress_baseline(Codec& codec, const std::vector<uint8_t>& stream, int64_t count, DType dtype) {
  std::vector<uint8_t> out(static_cast<size_t>(count) * dtype_size(dtype));
  codec.decompress(stream, MutableTensorView{out.data(), count, dtype});
  return out;
}

std::string baseline_decode_error(Codec& codec, const std::vector<uint8_t>& stream, int64_t count, DType dtype) {
  try {
    decompress_baseline(codec, stream, count, dtype);
  } catch (const CodecError& e) {
    return e.what();
  }
  return "";
}

std::vector<std::unique_ptr<Codec>> all_codecs() {
  std::vector<std::unique_ptr<Codec>> v;
  v.push_back(make_none_codec());
  for (int threads : {1, 3}) {
    v.push_back(make_zstd_codec(1, threads));
    v.push_back(make_zstd_codec(-5, threads));
    v.push_back(make_lz4_codec(threads));
  }
  v.push_back(make_zstd_codec(9, 2));
  return v;
}

TEST(CompressBaselines, RoundTripEverySizeAndDtype) {
  // 0 elements, a few, and more than 1 MiB (several chunks, the last one partial).
  for (auto& codec : all_codecs()) {
    for (DType d : {DType::BF16, DType::F16, DType::F32}) {
      for (int64_t n : {0, 1, 5, 1000, 700001}) {
        const Tensor t = generate(n % 2 ? "pathological" : "gaussian", d, n, 0.02, 3);
        const auto stream = compress_baseline(*codec, t.view());
        EXPECT_LE(stream.size(), codec->max_compressed_bytes(t.view()));
        EXPECT_EQ(decompress_baseline(*codec, stream, n, d), t.data) << codec->name() << " " << n;
      }
    }
  }
}

TEST(CompressBaselines, NamesAndHeaders) {
  const Tensor t = generate("gaussian", DType::BF16, 100, 0.02, 3);
  for (auto& codec : all_codecs()) {
    EXPECT_TRUE(codec->lossless());
    const auto stream = compress_baseline(*codec, t.view());
    ASSERT_GE(stream.size(), 16u);
    EXPECT_EQ(std::string(stream.begin(), stream.begin() + 4), "MBL1");
    EXPECT_EQ(stream[5], static_cast<uint8_t>(DType::BF16));
    uint64_t count;
    std::memcpy(&count, stream.data() + 8, 8);
    EXPECT_EQ(count, 100u);
  }
  EXPECT_EQ(make_none_codec()->name(), "none");
  EXPECT_EQ(make_zstd_codec(1, 1)->name(), "zstd");
  EXPECT_EQ(make_lz4_codec(1)->name(), "lz4");
}

TEST(CompressBaselines, NoneStoresTheBytes) {
  const Tensor t = generate("gaussian", DType::F32, 10, 0.02, 3);
  auto codec = make_none_codec();
  const auto stream = compress_baseline(*codec, t.view());
  ASSERT_EQ(stream.size(), 16 + t.data.size());
  EXPECT_TRUE(std::equal(t.data.begin(), t.data.end(), stream.begin() + 16));
}

TEST(CompressBaselines, ZstdCompressesGaussianBf16AboutAsTheIssueSays) {
  const Tensor t = generate("gaussian", DType::BF16, 1 << 20, 0.02, 1);
  auto codec = make_zstd_codec(1, 1);
  const double ratio = static_cast<double>(t.data.size()) / static_cast<double>(compress_baseline(*codec, t.view()).size());
  EXPECT_GT(ratio, 1.2);
  EXPECT_LT(ratio, 1.4);
}

TEST(CompressBaselines, StreamsDecodeWithAnyThreadCount) {
  const Tensor t = generate("gaussian", DType::F32, 1 << 20, 0.02, 4);  // 4 MiB: four chunks
  auto z1 = make_zstd_codec(1, 1), z4 = make_zstd_codec(1, 4);
  EXPECT_EQ(decompress_baseline(*z1, compress_baseline(*z4, t.view()), t.count(), t.dtype), t.data);
  EXPECT_EQ(decompress_baseline(*z4, compress_baseline(*z1, t.view()), t.count(), t.dtype), t.data);
  auto l1 = make_lz4_codec(1), l4 = make_lz4_codec(4);
  EXPECT_EQ(compress_baseline(*l1, t.view()), compress_baseline(*l4, t.view())) << "lz4 blocks do not depend on threads";
  EXPECT_EQ(compress_baseline(*z4, t.view()), compress_baseline(*make_zstd_codec(1, 2), t.view())) << "zstd chunks neither, above 1";
}

TEST(CompressBaselines, DecoderNamesWhatIsWrong) {
  const Tensor t = generate("gaussian", DType::BF16, 3000, 0.02, 9);
  for (auto& codec : all_codecs()) {
    const auto good = compress_baseline(*codec, t.view());
    EXPECT_THAT(baseline_decode_error(*codec, good, 3000, DType::F16), HasSubstr("dtype"));
    EXPECT_THAT(baseline_decode_error(*codec, good, 2999, DType::BF16), HasSubstr("count"));
    auto bad = good;
    bad[1] ^= 1;
    EXPECT_THAT(baseline_decode_error(*codec, bad, 3000, DType::BF16), HasSubstr("magic"));
    bad = good;
    bad[4] = 7;
    EXPECT_THAT(baseline_decode_error(*codec, bad, 3000, DType::BF16), HasSubstr("codec"));
    bad = good;
    bad[6] = 1;
    EXPECT_THAT(baseline_decode_error(*codec, bad, 3000, DType::BF16), HasSubstr("reserved"));
    bad.assign(good.begin(), good.begin() + 10);
    EXPECT_THAT(baseline_decode_error(*codec, bad, 3000, DType::BF16), HasSubstr("header"));
    bad.assign(good.begin(), good.end() - 1);
    EXPECT_THAT(baseline_decode_error(*codec, bad, 3000, DType::BF16), HasSubstr(codec->name() + ":"));
    bad = good;
    bad.push_back(0);
    EXPECT_THAT(baseline_decode_error(*codec, bad, 3000, DType::BF16), HasSubstr(codec->name() + ":"));
  }
}

TEST(CompressBaselines, CompressRejectsASmallBuffer) {
  const Tensor t = generate("gaussian", DType::BF16, 3000, 0.02, 9);
  for (auto& codec : all_codecs()) {
    std::vector<uint8_t> out(codec->max_compressed_bytes(t.view()) - 1);
    EXPECT_THROW(codec->compress(t.view(), out), CodecError) << codec->name();
  }
}

}  // namespace
}  // namespace mlsb::compress
