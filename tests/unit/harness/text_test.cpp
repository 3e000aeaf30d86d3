#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "harness/stats.hpp"
#include "harness/text.hpp"

namespace mlsb {
namespace {

TEST(HarnessText, Join) {
  EXPECT_EQ(join({}, ", "), "");
  EXPECT_EQ(join({"a"}, ", "), "a");
  EXPECT_EQ(join({"a", "b", "c"}, "|"), "a|b|c");
}

TEST(HarnessText, AsciiLowerLeavesOtherBytesAlone) {
  EXPECT_EQ(ascii_lower("Content-Type: BF16"), "content-type: bf16");
  EXPECT_EQ(ascii_lower("\xC3\x89T\xC3\xA9"), "\xC3\x89t\xC3\xA9");  // ÉTé: only the T changes
  EXPECT_EQ(ascii_lower(""), "");
}

TEST(HarnessText, Utf8TruncateNeverSplitsACharacter) {
  EXPECT_EQ(utf8_truncate("short", 10), "short");
  EXPECT_EQ(utf8_truncate("abcdefghij", 8), "abcde...");
  // "é" is 2 bytes (C3 A9): a cut at byte 3 would split it, so it goes back to byte 2.
  EXPECT_EQ(utf8_truncate("abéxyz", 6), "ab...");
  EXPECT_EQ(utf8_truncate("日本語テキスト", 10, ""), "日本語");  // 3 bytes each: 9 fit
}

TEST(HarnessStats, RelativeStddev) {
  EXPECT_TRUE(std::isinf(relative_stddev(std::vector<double>{1.0})));
  EXPECT_DOUBLE_EQ(relative_stddev(std::vector<double>{0, 0}), 0);
  EXPECT_TRUE(std::isinf(relative_stddev(std::vector<double>{-1, 1})));
  EXPECT_NEAR(relative_stddev(std::vector<double>{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5}), 2.3664319132398464 / 4, 1e-12);
}

}  // namespace
}  // namespace mlsb
