#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "util/stats.hpp"
#include "util/text.hpp"

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

TEST(HarnessText, Utf8BoundariesStepOverContinuationBytes) {
  const std::string s = "a\xc3\xa9\xe2\x82\xac";  // "a", "é" (2 bytes), "€" (3 bytes)
  EXPECT_EQ(utf8_boundary_before(s, 2), 1u);  // inside "é": back to its start
  EXPECT_EQ(utf8_boundary_after(s, 2), 3u);   // forward to the next character
  EXPECT_EQ(utf8_boundary_before(s, 5), 3u);
  EXPECT_EQ(utf8_boundary_after(s, 4), 6u);   // past the end of the last character: the end
  for (size_t i : {0, 1, 3, 6}) {
    EXPECT_EQ(utf8_boundary_before(s, i), i) << i;  // already at a boundary
    EXPECT_EQ(utf8_boundary_after(s, i), i) << i;
  }
}

TEST(HarnessText, DidYouMeanNamesTheNearestCandidate) {
  const std::vector<std::string> axes = {"agent", "trials", "dataset", "limit"};
  EXPECT_EQ(did_you_mean("agnet", axes), " (did you mean 'agent'?)");  // a swap is one edit
  EXPECT_EQ(did_you_mean("Trails", axes), " (did you mean 'trials'?)");
  EXPECT_EQ(did_you_mean("datset", axes), " (did you mean 'dataset'?)");
  EXPECT_EQ(did_you_mean("zzz", axes), "");          // nothing near
  EXPECT_EQ(did_you_mean("agent", axes), "");        // itself is no suggestion
  // Case alone: the candidate equal when folded, not one an edit away (INT8 is one edit from int4 too).
  EXPECT_EQ(did_you_mean("INT8", {"int4", "int8"}), " (did you mean 'int8'?)");
  EXPECT_EQ(did_you_mean("Int4", {"int8", "int4"}), " (did you mean 'int4'?)");
  EXPECT_EQ(did_you_mean("lim", axes), "");          // 2 edits from a 3-letter word is too far
}

TEST(HarnessText, Utf8ExcerptSaysItCutAndHowLongTheOriginalWas) {
  EXPECT_EQ(utf8_excerpt("abc", 3), "abc");
  EXPECT_EQ(utf8_excerpt("abcdef", 4), "abcd... [cut: 4 of 6 bytes shown]");
  EXPECT_EQ(utf8_excerpt("ab\xc3\xa9xyz", 3), "ab... [cut: 2 of 7 bytes shown]");  // not inside the é
}

// A stack trace's cause sits above its end: the excerpt keeps the first error line and the tail, and
// says how much it cut of how much.
TEST(HarnessText, LogExcerptKeepsTheFirstErrorLineAndTheTail) {
  EXPECT_EQ(log_excerpt("short log", 100), "short log");
  std::string log = "starting server\nError: SQLITE_CANTOPEN: unable to open database file\n";
  for (int i = 0; i < 50; ++i) log += "    at frame" + std::to_string(i) + " (node:internal/x.js:1:1)\n";
  log += "Node.js v20";
  const std::string e = log_excerpt(log, 60);
  EXPECT_EQ(e.rfind("[... 16 bytes cut of " + std::to_string(log.size()) + " ...] Error: SQLITE_CANTOPEN", 0), 0u) << e;
  EXPECT_NE(e.find("bytes cut of"), e.rfind("bytes cut of")) << e;  // a second gap before the tail
  EXPECT_EQ(e.substr(e.size() - 11), "Node.js v20");
  EXPECT_LT(e.size(), 60 + 60 + 80u);
  // Without an error line: the tail after one marker.
  const std::string plain(500, 'x');
  EXPECT_EQ(log_excerpt(plain, 10), "[... 490 bytes cut of 500 ...] xxxxxxxxxx");
  // Never inside a UTF-8 character.
  const std::string utf8 = "\xc3\xa9\xc3\xa9\xc3\xa9";  // three 2-byte characters
  EXPECT_EQ(log_excerpt(utf8, 3), "[... 4 bytes cut of 6 ...] \xc3\xa9");
}

TEST(HarnessStats, RelativeStddev) {
  EXPECT_TRUE(std::isinf(relative_stddev(std::vector<double>{1.0})));
  EXPECT_DOUBLE_EQ(relative_stddev(std::vector<double>{0, 0}), 0);
  EXPECT_TRUE(std::isinf(relative_stddev(std::vector<double>{-1, 1})));
  EXPECT_NEAR(relative_stddev(std::vector<double>{3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5}), 2.3664319132398464 / 4, 1e-12);
}

}  // namespace
}  // namespace mlsb
