// The codec table is the one place a codec is described: every row makes a codec that says the same of
// itself (name, lossless), the flags the collectives read agree with what the codec does, and an unknown
// name is an error listing the known ones.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "workloads/compress/codec.hpp"

namespace mlsb::compress {
namespace {

TEST(CodecTable, EveryRowMakesTheCodecItDescribes) {
  std::set<std::string> names;
  for (const CodecSpec& spec : codec_table()) {
    EXPECT_TRUE(names.insert(spec.name).second) << "two rows for " << spec.name;
    CodecConfig config;
    config.name = spec.name;
    const auto codec = make_codec(config);
    EXPECT_EQ(codec->name(), spec.name);
    EXPECT_EQ(codec->lossless(), spec.lossless) << spec.name;
    EXPECT_EQ(is_lossless(spec.name), spec.lossless) << spec.name;
    if (spec.lossless) {
      EXPECT_EQ(spec.error_bound, 0.0) << spec.name;
    } else {
      EXPECT_GT(spec.error_bound, 0.0) << spec.name;
    }
    // Only a codec with state can be summed across ranks, and only one whose error is data-dependent.
    if (spec.summable) {
      EXPECT_TRUE(spec.stateful) << spec.name;
    }
    if (spec.stateful) {
      EXPECT_TRUE(std::isinf(spec.error_bound)) << spec.name;
    }
  }
  ASSERT_EQ(codec_names().size(), codec_table().size());
  for (size_t i = 0; i < codec_table().size(); ++i) EXPECT_EQ(codec_names()[i], codec_table()[i].name);
  EXPECT_EQ(codec_names().front(), "none");
}

TEST(CodecTable, UnknownNamesAndBadParametersNameWhatIsWrong) {
  EXPECT_THAT([] { codec_spec("zstdd"); },
              ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("unknown codec 'zstdd' (known: none, ")));
  EXPECT_FALSE(is_lossless("zstdd"));
  CodecConfig bad;
  bad.name = "int8-block";
  bad.block = 0;
  EXPECT_THAT([&] { make_codec(bad); }, ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("block:")));
  bad = CodecConfig{"topk"};
  bad.density = 0;
  EXPECT_THAT([&] { make_codec(bad); }, ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("density:")));
  bad = CodecConfig{"zstd"};
  bad.level = 99;
  EXPECT_THAT([&] { make_codec(bad); }, ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("level:")));
  bad = CodecConfig{"exponent"};
  bad.threads = 0;
  EXPECT_THAT([&] { make_codec(bad); }, ::testing::ThrowsMessage<std::invalid_argument>(::testing::HasSubstr("threads:")));
}

}  // namespace
}  // namespace mlsb::compress
