// Schedules (schedule.hpp): decode groups of batch * window sequences with one token per sequence
// per window, prefill chunks and windows within a sequence, ragged sequence lengths, sequence
// ranges, the input checks, and make_lookups' steps.
#include "workloads/moe_offload/schedule.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "workloads/moe_offload/synthetic_trace.hpp"

namespace mlsb::moe_offload {
namespace {

using testing::HasSubstr;
using testing::StartsWith;

/// A trace with sequences of the given lengths; token tok's experts at layer l are
/// {(tok + l) % E, (tok + l + 1) % E, ...} (k of them).
RoutingTrace ragged_trace(const std::vector<int64_t>& lengths, int64_t layers = 2, int64_t experts = 6, int64_t topk = 2) {
  RoutingTrace t;
  t.layers = layers;
  t.experts = experts;
  t.topk = topk;
  t.seq_start = {0};
  for (const int64_t n : lengths) t.seq_start.push_back(t.seq_start.back() + n);
  for (int64_t tok = 0; tok < t.tokens(); ++tok)
    for (int64_t l = 0; l < layers; ++l)
      for (int64_t j = 0; j < topk; ++j) t.route.push_back(static_cast<int32_t>((tok + l + j) % experts));
  t.weights.assign(t.route.size(), 1.0f / static_cast<float>(topk));
  return t;
}

int64_t seq_of(const RoutingTrace& t, int64_t token) {
  return std::upper_bound(t.seq_start.begin(), t.seq_start.end(), token) - t.seq_start.begin() - 1;
}

/// Checks the offsets' form: batch_start from 0 to tokens.size(), non-empty batches, window_start
/// from 0 to batches(), non-empty windows.
void expect_well_formed(const Schedule& s) {
  ASSERT_FALSE(s.batch_start.empty());
  ASSERT_FALSE(s.window_start.empty());
  EXPECT_EQ(s.batch_start.front(), 0);
  EXPECT_EQ(s.batch_start.back(), static_cast<int64_t>(s.tokens.size()));
  for (int64_t b = 0; b < s.batches(); ++b) EXPECT_LT(s.batch_start[b], s.batch_start[b + 1]) << "batch " << b;
  EXPECT_EQ(s.window_start.front(), 0);
  EXPECT_EQ(s.window_start.back(), s.batches());
  for (size_t w = 0; w + 1 < s.window_start.size(); ++w)
    EXPECT_LT(s.window_start[w], s.window_start[w + 1]) << "window " << w;
}

std::vector<int64_t> window_tokens(const Schedule& s, size_t w) {
  std::vector<int64_t> out(s.tokens.begin() + s.batch_start[s.window_start[w]],
                           s.tokens.begin() + s.batch_start[s.window_start[w + 1]]);
  std::sort(out.begin(), out.end());
  return out;
}

// --- parse_phase and the checks ------------------------------------------------------------------

TEST(Schedule, ParsePhase) {
  EXPECT_EQ(parse_phase("decode"), Phase::Decode);
  EXPECT_EQ(parse_phase("prefill"), Phase::Prefill);
  for (const char* bad : {"", "Decode", "PREFILL", "train", "decode ", "pre"}) {
    try {
      parse_phase(bad);
      ADD_FAILURE() << "parse_phase('" << bad << "') did not throw";
    } catch (const std::invalid_argument& e) {
      EXPECT_THAT(e.what(), StartsWith("phase: ")) << "'" << bad << "'";
    }
  }
}

TEST(Schedule, BatchAndWindowBelowOneNameTheAxis) {
  const RoutingTrace t = ragged_trace({4, 4});
  for (const Phase p : {Phase::Decode, Phase::Prefill}) {
    for (const int64_t bad : {0, -1}) {
      try {
        make_schedule(t, p, bad, 2, 0, 2);
        ADD_FAILURE() << "batch " << bad << " accepted";
      } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), HasSubstr("batch"));
      }
      try {
        make_schedule(t, p, 2, bad, 0, 2);
        ADD_FAILURE() << "window " << bad << " accepted";
      } catch (const std::invalid_argument& e) {
        EXPECT_THAT(e.what(), HasSubstr("window"));
      }
    }
  }
}

// --- decode --------------------------------------------------------------------------------------

// 8 sequences of 3, batch 2, window 2: groups {0..3} and {4..7}, served one after the other; at each
// position a window of 2 batches of 2 tokens, one token of each of the group's sequences.
TEST(Schedule, DecodeServesGroupsOfBatchTimesWindowSequences) {
  const RoutingTrace t = ragged_trace(std::vector<int64_t>(8, 3));
  const Schedule s = make_schedule(t, Phase::Decode, 2, 2, 0, 8);
  expect_well_formed(s);
  EXPECT_EQ(s.tokens.size(), 24u);
  EXPECT_EQ(s.batches(), 12);
  EXPECT_EQ(s.batch_start, (std::vector<int64_t>{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24}));
  EXPECT_EQ(s.window_start, (std::vector<int64_t>{0, 2, 4, 6, 8, 10, 12}));
  for (size_t w = 0; w < 6; ++w) {
    const int64_t group = static_cast<int64_t>(w) / 3, pos = static_cast<int64_t>(w) % 3;
    std::vector<int64_t> expect;
    for (int64_t q = 4 * group; q < 4 * group + 4; ++q) expect.push_back(t.seq_start[q] + pos);
    EXPECT_EQ(window_tokens(s, w), expect) << "window " << w;
  }
}

// One window per position of the group: batch * window = 6 sequences per group, so 13 sequences
// make groups of 6, 6 and 1.
TEST(Schedule, DecodeLastGroupMayBeSmaller) {
  const RoutingTrace t = ragged_trace(std::vector<int64_t>(13, 4));
  const Schedule s = make_schedule(t, Phase::Decode, 3, 2, 0, 13);
  expect_well_formed(s);
  ASSERT_EQ(s.window_start.size(), 13u);  // 3 groups x 4 positions
  for (size_t w = 0; w < 12; ++w) {
    const int64_t group = static_cast<int64_t>(w) / 4, pos = static_cast<int64_t>(w) % 4;
    std::vector<int64_t> expect;
    for (int64_t q = 6 * group; q < std::min<int64_t>(13, 6 * group + 6); ++q) expect.push_back(t.seq_start[q] + pos);
    EXPECT_EQ(window_tokens(s, w), expect) << "window " << w;
    const int64_t nb = s.window_start[w + 1] - s.window_start[w];
    if (group < 2) {
      EXPECT_EQ(nb, 2) << "window " << w;
      for (int64_t b = s.window_start[w]; b < s.window_start[w + 1]; ++b)
        EXPECT_EQ(s.batch_start[b + 1] - s.batch_start[b], 3) << "batch " << b;
    } else {
      EXPECT_EQ(nb, 1) << "window " << w;
      EXPECT_EQ(s.batch_start[s.window_start[w] + 1] - s.batch_start[s.window_start[w]], 1);
    }
  }
}

// Sequences of different lengths: a window holds the tokens at its position of the group's
// sequences that are that long, in at most `window` batches of at most `batch` tokens.
TEST(Schedule, DecodeRaggedSequences) {
  const std::vector<int64_t> lengths = {3, 1, 2, 3, 2};
  const RoutingTrace t = ragged_trace(lengths);
  const Schedule s = make_schedule(t, Phase::Decode, 2, 2, 0, 5);
  expect_well_formed(s);
  // Group {0,1,2,3}: positions 0, 1, 2; group {4}: positions 0, 1.
  const std::vector<std::vector<int64_t>> expect = {{0, 3, 4, 6}, {1, 5, 7}, {2, 8}, {9}, {10}};
  ASSERT_EQ(s.window_start.size(), expect.size() + 1);
  for (size_t w = 0; w < expect.size(); ++w) {
    EXPECT_EQ(window_tokens(s, w), expect[w]) << "window " << w;
    const int64_t nb = s.window_start[w + 1] - s.window_start[w];
    EXPECT_LE(nb, 2) << "window " << w;
    for (int64_t b = s.window_start[w]; b < s.window_start[w + 1]; ++b)
      EXPECT_LE(s.batch_start[b + 1] - s.batch_start[b], 2) << "batch " << b;
  }
  // Every token once; a sequence's tokens in order.
  std::vector<int64_t> all = s.tokens;
  std::sort(all.begin(), all.end());
  std::vector<int64_t> every(t.tokens());
  for (int64_t i = 0; i < t.tokens(); ++i) every[i] = i;
  EXPECT_EQ(all, every);
  std::vector<int64_t> last(lengths.size(), -1);
  for (const int64_t tok : s.tokens) {
    EXPECT_GT(tok, last[seq_of(t, tok)]);
    last[seq_of(t, tok)] = tok;
  }
}

// --- prefill -------------------------------------------------------------------------------------

// Lengths 7, 2, 5, batch 2, window 2: sequence 0 -> [0 1][2 3] | [4 5][6]; sequence 1 -> [7 8];
// sequence 2 -> [9 10][11 12] | [13]. A window never crosses a sequence.
TEST(Schedule, PrefillChunksWithinASequence) {
  const RoutingTrace t = ragged_trace({7, 2, 5});
  const Schedule s = make_schedule(t, Phase::Prefill, 2, 2, 0, 3);
  expect_well_formed(s);
  std::vector<int64_t> every(14);
  for (int64_t i = 0; i < 14; ++i) every[i] = i;
  EXPECT_EQ(s.tokens, every);
  EXPECT_EQ(s.batch_start, (std::vector<int64_t>{0, 2, 4, 6, 7, 9, 11, 13, 14}));
  EXPECT_EQ(s.window_start, (std::vector<int64_t>{0, 2, 4, 5, 7, 8}));
}

TEST(Schedule, PrefillBatchLargerThanTheSequences) {
  const RoutingTrace t = ragged_trace({3, 5});
  const Schedule s = make_schedule(t, Phase::Prefill, 8, 4, 0, 2);
  EXPECT_EQ(s.tokens, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(s.batch_start, (std::vector<int64_t>{0, 3, 8}));
  EXPECT_EQ(s.window_start, (std::vector<int64_t>{0, 1, 2}));
}

TEST(Schedule, PrefillWindowOfOneChunk) {
  const RoutingTrace t = ragged_trace({5});
  const Schedule s = make_schedule(t, Phase::Prefill, 2, 1, 0, 1);
  EXPECT_EQ(s.batch_start, (std::vector<int64_t>{0, 2, 4, 5}));
  EXPECT_EQ(s.window_start, (std::vector<int64_t>{0, 1, 2, 3}));
}

// --- sequence ranges -----------------------------------------------------------------------------

TEST(Schedule, OnlyTheRangesSequences) {
  const RoutingTrace t = ragged_trace({7, 2, 5, 4});  // starts 0, 7, 9, 14, 18
  const Schedule p = make_schedule(t, Phase::Prefill, 2, 2, 1, 3);
  EXPECT_EQ(p.tokens, (std::vector<int64_t>{7, 8, 9, 10, 11, 12, 13}));
  EXPECT_EQ(p.batch_start, (std::vector<int64_t>{0, 2, 4, 6, 7}));
  EXPECT_EQ(p.window_start, (std::vector<int64_t>{0, 1, 3, 4}));

  const Schedule d = make_schedule(t, Phase::Decode, 1, 2, 1, 4);
  expect_well_formed(d);
  // Groups of 2: {1, 2} then {3}.
  std::vector<int64_t> all = d.tokens;
  std::sort(all.begin(), all.end());
  std::vector<int64_t> expect;
  for (int64_t i = 7; i < 18; ++i) expect.push_back(i);
  EXPECT_EQ(all, expect);
  ASSERT_EQ(d.window_start.size(), 5u + 4u + 1u);
  EXPECT_EQ(window_tokens(d, 0), (std::vector<int64_t>{7, 9}));
  EXPECT_EQ(window_tokens(d, 1), (std::vector<int64_t>{8, 10}));
  EXPECT_EQ(window_tokens(d, 2), (std::vector<int64_t>{11}));
  EXPECT_EQ(window_tokens(d, 4), (std::vector<int64_t>{13}));
  EXPECT_EQ(window_tokens(d, 5), (std::vector<int64_t>{14}));
  EXPECT_EQ(window_tokens(d, 8), (std::vector<int64_t>{17}));
  EXPECT_EQ(d.batches(), 2 + 2 + 1 + 1 + 1 + 4);
}

TEST(Schedule, EmptyRangeIsAnEmptySchedule) {
  const RoutingTrace t = ragged_trace({3, 3});
  for (const Phase p : {Phase::Decode, Phase::Prefill}) {
    const Schedule s = make_schedule(t, p, 2, 2, 1, 1);
    EXPECT_TRUE(s.tokens.empty());
    EXPECT_EQ(s.batches(), 0);
    EXPECT_EQ(s.batch_start, (std::vector<int64_t>{0}));
    EXPECT_EQ(s.window_start, (std::vector<int64_t>{0}));
    EXPECT_EQ(make_lookups(t, s).steps(), 0);
  }
}

// On a synthetic trace, for many shapes: the offsets' form, batch and window sizes, every token of
// the range exactly once, windows of one position (decode) or one sequence (prefill).
TEST(Schedule, SyntheticShapes) {
  SyntheticTraceSpec spec;
  spec.layers = 2;
  spec.experts = 8;
  spec.sequences = 11;
  spec.seq_len = 9;
  const RoutingTrace t = synthetic_trace(spec);
  for (const Phase phase : {Phase::Decode, Phase::Prefill})
    for (const int64_t batch : {1, 2, 3, 4, 16})
      for (const int64_t window : {1, 2, 5}) {
        SCOPED_TRACE(testing::Message() << (phase == Phase::Decode ? "decode" : "prefill") << " batch " << batch
                                        << " window " << window);
        const Schedule s = make_schedule(t, phase, batch, window, 2, 10);
        expect_well_formed(s);
        std::vector<int64_t> all = s.tokens;
        std::sort(all.begin(), all.end());
        ASSERT_EQ(all.size(), 8u * 9);
        for (size_t i = 0; i < all.size(); ++i) ASSERT_EQ(all[i], t.seq_start[2] + static_cast<int64_t>(i));
        for (size_t w = 0; w + 1 < s.window_start.size(); ++w) {
          EXPECT_LE(s.window_start[w + 1] - s.window_start[w], window);
          const std::vector<int64_t> toks = window_tokens(s, w);
          std::set<int64_t> seqs, positions;
          for (const int64_t tok : toks) seqs.insert(seq_of(t, tok)), positions.insert(tok - t.seq_start[seq_of(t, tok)]);
          if (phase == Phase::Decode) {
            EXPECT_EQ(seqs.size(), toks.size()) << "one token per sequence";
            EXPECT_EQ(positions.size(), 1u);
            EXPECT_LE(static_cast<int64_t>(toks.size()), batch * window);
          } else {
            EXPECT_EQ(seqs.size(), 1u);
            EXPECT_EQ(toks.back() - toks.front() + 1, static_cast<int64_t>(toks.size())) << "consecutive chunks";
          }
        }
        for (int64_t b = 0; b < s.batches(); ++b) {
          const int64_t n = s.batch_start[b + 1] - s.batch_start[b];
          EXPECT_LE(n, batch);
          // Every sequence here has 9 tokens, so decode batches are full except the last group's.
          if (phase == Phase::Prefill && (b + 1 < s.batches()) && n < batch) {
            const int64_t tok = s.tokens[s.batch_start[b + 1] - 1];
            EXPECT_EQ(tok + 1, t.seq_start[seq_of(t, tok) + 1]) << "a short prefill chunk ends its sequence";
          }
        }
      }
}

// --- make_lookups --------------------------------------------------------------------------------

TEST(Schedule, LookupsByHand) {
  // 1 sequence of 3 tokens, 2 layers, 4 experts, top-2.
  RoutingTrace t;
  t.layers = 2;
  t.experts = 4;
  t.topk = 2;
  t.seq_start = {0, 3};
  t.route = {3, 1, 0, 2,  //
             1, 3, 2, 1,  //
             0, 2, 3, 0};
  t.weights.assign(t.route.size(), 0.5f);
  const Schedule s = make_schedule(t, Phase::Prefill, 2, 1, 0, 1);  // batches {0, 1}, {2}
  const LookupStream ls = make_lookups(t, s);
  EXPECT_EQ(ls.layers, 2);
  EXPECT_EQ(ls.experts, 4);
  ASSERT_EQ(ls.steps(), 4);
  EXPECT_EQ(ls.step_start, (std::vector<int64_t>{0, 2, 5, 7, 9}));
  EXPECT_EQ(ls.expert, (std::vector<int32_t>{1, 3, 0, 1, 2, 0, 2, 0, 3}));
  EXPECT_EQ(ls.lookups(), 9);
}

TEST(Schedule, LookupsAreTheDistinctAscendingExpertsOfEachBatchAndLayer) {
  SyntheticTraceSpec spec;
  spec.layers = 3;
  spec.experts = 10;
  spec.topk = 3;
  spec.sequences = 9;
  spec.seq_len = 12;
  spec.locality = 0.3;
  const RoutingTrace t = synthetic_trace(spec);
  for (const Phase phase : {Phase::Decode, Phase::Prefill}) {
    const Schedule s = make_schedule(t, phase, 4, 2, 1, 9);
    const LookupStream ls = make_lookups(t, s);
    EXPECT_EQ(ls.layers, 3);
    EXPECT_EQ(ls.experts, 10);
    ASSERT_EQ(ls.steps(), s.batches() * 3);
    ASSERT_EQ(ls.step_start.front(), 0);
    ASSERT_EQ(ls.step_start.back(), ls.lookups());
    for (int64_t b = 0; b < s.batches(); ++b)
      for (int64_t l = 0; l < 3; ++l) {
        std::set<int32_t> need;
        for (int64_t i = s.batch_start[b]; i < s.batch_start[b + 1]; ++i)
          need.insert(t.experts_of(s.tokens[i], l), t.experts_of(s.tokens[i], l) + 3);
        const int64_t step = b * 3 + l;
        const std::vector<int32_t> got(ls.expert.begin() + ls.step_start[step], ls.expert.begin() + ls.step_start[step + 1]);
        EXPECT_EQ(got, std::vector<int32_t>(need.begin(), need.end())) << "batch " << b << " layer " << l;
      }
  }
}

}  // namespace
}  // namespace mlsb::moe_offload
