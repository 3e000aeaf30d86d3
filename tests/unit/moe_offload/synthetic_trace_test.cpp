// Synthetic routing traces (synthetic_trace.hpp): determinism, shape, distinct in-range experts,
// softmax weights, `source`, each knob measured on generated traces (locality: slots repeating the
// previous token's; zipf: popularity concentration; correlation: predictability of layer l+1 from
// layer l), and the input checks naming the axis.
#include "workloads/moe_offload/synthetic_trace.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace mlsb::moe_offload {
namespace {

using testing::StartsWith;

SyntheticTraceSpec spec_of(double zipf, double locality, double correlation, uint64_t seed = 1) {
  SyntheticTraceSpec s;
  s.layers = 4;
  s.experts = 16;
  s.topk = 2;
  s.sequences = 16;
  s.seq_len = 128;
  s.zipf = zipf;
  s.locality = locality;
  s.correlation = correlation;
  s.seed = seed;
  return s;
}

/// Fraction of the slots (token, layer, slot) of non-first tokens that hold the previous token's
/// expert of the same slot and layer.
double repeat_fraction(const RoutingTrace& t) {
  int64_t same = 0, all = 0;
  for (int64_t s = 0; s < t.sequences(); ++s)
    for (int64_t tok = t.seq_start[s] + 1; tok < t.seq_start[s + 1]; ++tok)
      for (int64_t l = 0; l < t.layers; ++l)
        for (int64_t j = 0; j < t.topk; ++j) {
          same += t.experts_of(tok, l)[j] == t.experts_of(tok - 1, l)[j];
          ++all;
        }
  return static_cast<double>(same) / static_cast<double>(all);
}

/// Per layer, the share of the layer's slots routed to each expert.
std::vector<std::vector<double>> shares(const RoutingTrace& t) {
  std::vector<std::vector<double>> out(t.layers, std::vector<double>(t.experts, 0.0));
  for (int64_t tok = 0; tok < t.tokens(); ++tok)
    for (int64_t l = 0; l < t.layers; ++l)
      for (int64_t j = 0; j < t.topk; ++j) out[l][t.experts_of(tok, l)[j]] += 1;
  for (auto& layer : out)
    for (auto& x : layer) x /= static_cast<double>(t.tokens() * t.topk);
  return out;
}

/// Slot-wise transitions (expert of slot j at l) -> (expert of slot j at l + 1), over every layer pair.
struct Transitions {
  double top1 = 0;     // fraction of transitions going to their source's most frequent destination
  double entropy = 0;  // H(destination | source, layer) in bits
};
Transitions transitions(const RoutingTrace& t) {
  std::map<std::pair<int64_t, int32_t>, std::map<int32_t, int64_t>> count;  // (layer, from) -> to -> n
  int64_t total = 0;
  for (int64_t tok = 0; tok < t.tokens(); ++tok)
    for (int64_t l = 0; l + 1 < t.layers; ++l)
      for (int64_t j = 0; j < t.topk; ++j) {
        ++count[{l, t.experts_of(tok, l)[j]}][t.experts_of(tok, l + 1)[j]];
        ++total;
      }
  Transitions out;
  for (const auto& [from, to] : count) {
    int64_t n = 0, best = 0;
    for (const auto& [e, c] : to) n += c, best = std::max(best, c);
    out.top1 += static_cast<double>(best);
    for (const auto& [e, c] : to) {
      const double p = static_cast<double>(c) / static_cast<double>(n);
      out.entropy -= static_cast<double>(n) / static_cast<double>(total) * p * std::log2(p);
    }
  }
  out.top1 /= static_cast<double>(total);
  return out;
}

TEST(SyntheticTrace, ShapeIdsAndWeights) {
  SyntheticTraceSpec s = spec_of(1.0, 0.5, 0.5);
  s.layers = 3;
  s.experts = 6;
  s.topk = 3;
  s.sequences = 5;
  s.seq_len = 7;
  const RoutingTrace t = synthetic_trace(s);
  EXPECT_EQ(t.layers, 3);
  EXPECT_EQ(t.experts, 6);
  EXPECT_EQ(t.topk, 3);
  EXPECT_EQ(t.seq_start, (std::vector<int64_t>{0, 7, 14, 21, 28, 35}));
  EXPECT_EQ(t.sequences(), 5);
  EXPECT_EQ(t.tokens(), 35);
  ASSERT_EQ(t.route.size(), 35u * 3 * 3);
  ASSERT_EQ(t.weights.size(), t.route.size());
  for (int64_t tok = 0; tok < t.tokens(); ++tok)
    for (int64_t l = 0; l < t.layers; ++l) {
      const int32_t* e = t.experts_of(tok, l);
      const float* w = t.weights_of(tok, l);
      float sum = 0;
      for (int64_t j = 0; j < 3; ++j) {
        EXPECT_GE(e[j], 0);
        EXPECT_LT(e[j], 6);
        for (int64_t i = 0; i < j; ++i) EXPECT_NE(e[i], e[j]) << "token " << tok << " layer " << l;
        EXPECT_GT(w[j], 0.f);
        if (j > 0) {
          EXPECT_LE(w[j], w[j - 1]) << "weights are a softmax of decreasing logits";
        }
        sum += w[j];
      }
      EXPECT_NEAR(sum, 1.0f, 1e-5);
    }
}

TEST(SyntheticTrace, DistinctInRangeExpertsOnEveryAxisSetting) {
  for (const double zipf : {0.0, 1.0, 3.0})
    for (const double loc : {0.0, 0.7, 1.0})
      for (const double corr : {0.0, 0.7, 1.0}) {
        SyntheticTraceSpec s = spec_of(zipf, loc, corr, 11);
        s.experts = 5;
        s.topk = 3;
        s.sequences = 4;
        s.seq_len = 24;
        const RoutingTrace t = synthetic_trace(s);
        for (int64_t tok = 0; tok < t.tokens(); ++tok)
          for (int64_t l = 0; l < t.layers; ++l) {
            std::vector<int32_t> e(t.experts_of(tok, l), t.experts_of(tok, l) + 3);
            for (const int32_t x : e) ASSERT_TRUE(x >= 0 && x < 5) << x;
            std::sort(e.begin(), e.end());
            ASSERT_EQ(std::adjacent_find(e.begin(), e.end()), e.end())
                << "zipf " << zipf << " locality " << loc << " correlation " << corr << " token " << tok;
          }
      }
}

TEST(SyntheticTrace, TopkEqualToExpertsUsesEveryExpert) {
  SyntheticTraceSpec s = spec_of(2.0, 0.5, 0.5);
  s.experts = 4;
  s.topk = 4;
  s.sequences = 3;
  s.seq_len = 10;
  const RoutingTrace t = synthetic_trace(s);
  for (int64_t tok = 0; tok < t.tokens(); ++tok)
    for (int64_t l = 0; l < t.layers; ++l) {
      std::vector<int32_t> e(t.experts_of(tok, l), t.experts_of(tok, l) + 4);
      std::sort(e.begin(), e.end());
      EXPECT_EQ(e, (std::vector<int32_t>{0, 1, 2, 3}));
    }
}

// A steep Zipf makes all but the top expert nearly impossible to draw: the generator still gives k
// distinct experts per token (and finishes).
TEST(SyntheticTrace, SteepZipfStillGivesDistinctExperts) {
  for (const double zipf : {60.0, 1e6}) {
    SyntheticTraceSpec s = spec_of(zipf, 0.0, 0.0, 2);
    s.experts = 16;
    s.topk = 8;
    s.sequences = 2;
    s.seq_len = 16;
    const RoutingTrace t = synthetic_trace(s);
    for (int64_t tok = 0; tok < t.tokens(); ++tok)
      for (int64_t l = 0; l < t.layers; ++l) {
        std::vector<int32_t> e(t.experts_of(tok, l), t.experts_of(tok, l) + 8);
        std::sort(e.begin(), e.end());
        ASSERT_EQ(std::adjacent_find(e.begin(), e.end()), e.end()) << "zipf " << zipf;
        ASSERT_GE(e.front(), 0);
        ASSERT_LT(e.back(), 16);
      }
    // The top expert of each layer is in every token.
    for (const auto& layer : shares(t)) EXPECT_DOUBLE_EQ(*std::max_element(layer.begin(), layer.end()), 1.0 / 8);
  }
}

TEST(SyntheticTrace, DeterministicForASpecAndSeedDependent) {
  const SyntheticTraceSpec s = spec_of(1.0, 0.5, 0.5, 42);
  const RoutingTrace a = synthetic_trace(s), b = synthetic_trace(s);
  EXPECT_EQ(a.route, b.route);
  EXPECT_EQ(a.weights, b.weights);
  EXPECT_EQ(a.seq_start, b.seq_start);
  EXPECT_EQ(a.source, b.source);
  const RoutingTrace c = synthetic_trace(spec_of(1.0, 0.5, 0.5, 43));
  EXPECT_NE(a.route, c.route);
  EXPECT_NE(a.weights, c.weights);
  EXPECT_NE(a.source, c.source);
}

TEST(SyntheticTrace, SourceRecordsTheSpec) {
  SyntheticTraceSpec s = spec_of(1.5, 0.25, 0.75, 1234);
  s.layers = 3;
  s.experts = 12;
  s.topk = 3;
  s.sequences = 2;
  s.seq_len = 5;
  const RoutingTrace t = synthetic_trace(s);
  ASSERT_TRUE(t.source.is_object());
  EXPECT_EQ(t.source.value("layers", -1), 3);
  EXPECT_EQ(t.source.value("experts", -1), 12);
  EXPECT_EQ(t.source.value("topk", -1), 3);
  EXPECT_EQ(t.source.value("sequences", -1), 2);
  EXPECT_EQ(t.source.value("seq_len", -1), 5);
  EXPECT_EQ(t.source.value("zipf", -1.0), 1.5);
  EXPECT_EQ(t.source.value("locality", -1.0), 0.25);
  EXPECT_EQ(t.source.value("correlation", -1.0), 0.75);
  EXPECT_EQ(t.source.value("seed", uint64_t{0}), 1234u);
}

// locality = 1: every slot of every token but a sequence's first repeats the previous token's.
TEST(SyntheticTrace, FullLocalityRepeatsThePreviousToken) {
  const RoutingTrace t = synthetic_trace(spec_of(1.0, 1.0, 0.5, 5));
  EXPECT_DOUBLE_EQ(repeat_fraction(t), 1.0);
  // ... but sequences start afresh: not every sequence's first token equals the last one's.
  int64_t differing = 0;
  for (int64_t s = 1; s < t.sequences(); ++s)
    differing += !std::equal(t.experts_of(t.seq_start[s], 0), t.experts_of(t.seq_start[s], 0) + t.layers * t.topk,
                             t.experts_of(t.seq_start[s] - 1, 0));
  EXPECT_GT(differing, 0);
}

// The fraction of slots repeating the previous token's expert is locality + (1 - locality) * chance,
// chance being the rate without locality (about 1/E for uniform popularity).
TEST(SyntheticTrace, LocalityRaisesTheRepeatFraction) {
  const double chance = repeat_fraction(synthetic_trace(spec_of(0.0, 0.0, 0.0, 3)));
  EXPECT_NEAR(chance, 1.0 / 16, 0.02);
  double last = chance;
  for (const double loc : {0.25, 0.5, 0.75, 0.9}) {
    const double f = repeat_fraction(synthetic_trace(spec_of(0.0, loc, 0.0, 3)));
    EXPECT_NEAR(f, loc + (1 - loc) * chance, 0.03) << "locality " << loc;
    EXPECT_GT(f, last) << "locality " << loc;
    last = f;
  }
}

TEST(SyntheticTrace, ZipfConcentratesPopularity) {
  const auto uniform = shares(synthetic_trace(spec_of(0.0, 0.0, 0.0, 9)));
  double top0 = 0;
  for (const auto& layer : uniform) {
    const auto [lo, hi] = std::minmax_element(layer.begin(), layer.end());
    EXPECT_GT(*lo, 0.75 / 16);
    EXPECT_LT(*hi, 1.25 / 16);
    top0 = std::max(top0, *hi);
  }
  double top1_min = 1;
  for (const auto& layer : shares(synthetic_trace(spec_of(1.0, 0.0, 0.0, 9))))
    top1_min = std::min(top1_min, *std::max_element(layer.begin(), layer.end()));
  EXPECT_GT(top1_min, top0);
  for (const auto& layer : shares(synthetic_trace(spec_of(2.0, 0.0, 0.0, 9)))) {
    const double top = *std::max_element(layer.begin(), layer.end());
    EXPECT_GT(top, 0.35) << "Zipf(2): the top expert is in most tokens (a share of at most 1/k = 0.5)";
    EXPECT_GT(top, top1_min);
    EXPECT_GT(top, 5 * top0);
  }
}

TEST(SyntheticTrace, CorrelationMakesTheNextLayerPredictable) {
  const Transitions none = transitions(synthetic_trace(spec_of(0.0, 0.0, 0.0, 21)));
  const Transitions half = transitions(synthetic_trace(spec_of(0.0, 0.0, 0.5, 21)));
  const Transitions most = transitions(synthetic_trace(spec_of(0.0, 0.0, 0.9, 21)));
  EXPECT_LT(none.top1, 0.2);
  EXPECT_GT(none.entropy, 3.5);  // about log2(16) = 4 bits
  EXPECT_GT(half.top1, none.top1 + 0.3);
  EXPECT_GT(most.top1, half.top1 + 0.2);
  EXPECT_GT(most.top1, 0.8);
  EXPECT_LT(half.entropy, none.entropy - 0.5);
  EXPECT_LT(most.entropy, half.entropy - 0.5);
}

// correlation = 1, top-1, no locality: layer l + 1's expert is a function of layer l's.
TEST(SyntheticTrace, FullCorrelationIsAFixedLayerToLayerMap) {
  SyntheticTraceSpec s = spec_of(1.0, 0.0, 1.0, 4);
  s.topk = 1;
  const Transitions tr = transitions(synthetic_trace(s));
  EXPECT_DOUBLE_EQ(tr.top1, 1.0);
  EXPECT_NEAR(tr.entropy, 0.0, 1e-12);
}

TEST(SyntheticTrace, AcceptsTheBoundaries) {
  for (const double x : {0.0, 1.0}) {
    SyntheticTraceSpec s = spec_of(0.0, x, 1.0 - x);
    s.sequences = 1;
    s.seq_len = 1;
    s.layers = 1;
    s.experts = 1;
    s.topk = 1;
    EXPECT_NO_THROW(synthetic_trace(s));
  }
}

std::string spec_error(const SyntheticTraceSpec& s) {
  try {
    synthetic_trace(s);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  ADD_FAILURE() << "synthetic_trace did not throw std::invalid_argument";
  return "";
}

TEST(SyntheticTrace, ErrorsNameTheAxis) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  struct Case {
    const char* axis;
    SyntheticTraceSpec spec;
  };
  std::vector<Case> cases;
  auto add = [&](const char* axis, auto edit) {
    SyntheticTraceSpec s = spec_of(1.0, 0.5, 0.5);
    edit(s);
    cases.push_back({axis, s});
  };
  add("layers", [](auto& s) { s.layers = 0; });
  add("experts", [](auto& s) { s.experts = 0; s.topk = 0; });
  add("experts", [](auto& s) { s.experts = -3; });
  add("topk", [](auto& s) { s.topk = 0; });
  add("topk", [](auto& s) { s.topk = 17; });
  add("sequences", [](auto& s) { s.sequences = 0; });
  add("seq_len", [](auto& s) { s.seq_len = 0; });
  add("zipf", [](auto& s) { s.zipf = -0.5; });
  add("zipf", [nan](auto& s) { s.zipf = nan; });
  add("zipf", [inf](auto& s) { s.zipf = inf; });
  add("locality", [](auto& s) { s.locality = -0.01; });
  add("locality", [](auto& s) { s.locality = 1.5; });
  add("locality", [nan](auto& s) { s.locality = nan; });
  add("correlation", [](auto& s) { s.correlation = -1; });
  add("correlation", [](auto& s) { s.correlation = 1.01; });
  add("correlation", [nan](auto& s) { s.correlation = nan; });
  for (const Case& c : cases) EXPECT_THAT(spec_error(c.spec), StartsWith(std::string(c.axis) + ":")) << c.axis;

  SyntheticTraceSpec s = spec_of(1.0, 0.5, 0.5);
  s.experts = 8;
  s.topk = 9;
  EXPECT_EQ(spec_error(s), "topk: 9 exceeds experts (8)");
  s = spec_of(1.0, 2.0, 0.5);
  EXPECT_EQ(spec_error(s), "locality: must be in [0, 1]");
}

}  // namespace
}  // namespace mlsb::moe_offload
