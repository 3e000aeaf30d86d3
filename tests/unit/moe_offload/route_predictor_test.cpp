// The route predictor (route_predictor.hpp): the learned layer-to-layer transitions (on a trace where
// layer l + 1's expert is a function of layer l's), token scores as the mean over k, batch scores as
// 1 - prod(1 - token score), popularity counts, the empty profile (all-ones popularity, transitions
// equal to the prior), predicted paths, and make_predicted_uses' steps and horizons.
#include "workloads/moe_offload/route_predictor.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "workloads/moe_offload/schedule.hpp"
#include "workloads/moe_offload/synthetic_trace.hpp"
#include "workloads/moe_offload/trace.hpp"

namespace mlsb::moe_offload {
namespace {

/// The map of the deterministic trace: layer l's expert e -> layer l + 1's.
int32_t next_of(int64_t l, int32_t e, int64_t E) { return static_cast<int32_t>((e * 5 + l + 1) % E); }

/// A trace of `seqs` sequences of `len` tokens with no routes yet.
RoutingTrace shaped_trace(int64_t layers, int64_t E, int64_t k, int64_t seqs, int64_t len) {
  RoutingTrace t;
  t.layers = layers;
  t.experts = E;
  t.topk = k;
  t.seq_start = {0};
  for (int64_t s = 0; s < seqs; ++s) t.seq_start.push_back(t.seq_start.back() + len);
  return t;
}

/// `seqs` sequences of `len` tokens, top-1, layer 0 random, layer l + 1 = next_of(l, layer l).
RoutingTrace deterministic_trace(int64_t layers = 3, int64_t E = 6, int64_t seqs = 4, int64_t len = 30) {
  RoutingTrace t = shaped_trace(layers, E, 1, seqs, len);
  std::mt19937 rng(17);
  for (int64_t tok = 0; tok < t.tokens(); ++tok) {
    int32_t e = static_cast<int32_t>(rng() % E);
    for (int64_t l = 0; l < layers; ++l) {
      t.route.push_back(e);
      e = next_of(l, e, E);
    }
  }
  t.weights.assign(t.route.size(), 1.0f);
  return t;
}

RoutingTrace synthetic(double zipf, double locality, double correlation, int64_t L = 4, int64_t E = 8, int64_t k = 2,
                       int64_t seqs = 12, int64_t len = 32, uint64_t seed = 1) {
  SyntheticTraceSpec s;
  s.layers = L;
  s.experts = E;
  s.topk = k;
  s.sequences = seqs;
  s.seq_len = len;
  s.zipf = zipf;
  s.locality = locality;
  s.correlation = correlation;
  s.seed = seed;
  return synthetic_trace(s);
}

std::vector<float> token_scores(const RoutePredictor& p, int64_t E, int64_t layer, const std::vector<int32_t>& experts) {
  std::vector<float> s(E, -1.f);
  p.token_scores(layer, experts.data(), static_cast<int64_t>(experts.size()), s.data());
  return s;
}

std::vector<float> batch_scores(const RoutePredictor& p, const RoutingTrace& t, int64_t layer, const std::vector<int64_t>& tokens) {
  std::vector<float> s(t.experts, -1.f);
  p.predict_next(t, layer, tokens.data(), static_cast<int64_t>(tokens.size()), s.data());
  return s;
}

// --- transitions ---------------------------------------------------------------------------------

TEST(RoutePredictor, LearnsADeterministicTransition) {
  const RoutingTrace t = deterministic_trace();
  const RoutePredictor p(t, make_schedule(t, Phase::Decode, 1, 1, 0, t.sequences()));
  for (int64_t tok = 0; tok < t.tokens(); tok += 7)
    for (int64_t l = 0; l + 1 < t.layers; ++l) {
      const int32_t e = t.experts_of(tok, l)[0], want = next_of(l, e, t.experts);
      ASSERT_EQ(t.experts_of(tok, l + 1)[0], want);
      const std::vector<float> s = batch_scores(p, t, l, {tok});
      for (int32_t x = 0; x < t.experts; ++x) {
        if (x == want) EXPECT_GT(s[x], 0.9f) << "token " << tok << " layer " << l;
        else EXPECT_LT(s[x], 0.1f) << "token " << tok << " layer " << l << " expert " << x;
        EXPECT_GE(s[x], 0.f);
        EXPECT_LE(s[x], 1.f);
      }
      const std::vector<float> one = token_scores(p, t.experts, l, {e});
      for (int32_t x = 0; x < t.experts; ++x) EXPECT_NEAR(one[x], s[x], 1e-6) << "a batch of one token scores as the token";
    }
}

// Learned on sequences [0, 2) only, it still predicts the map on the others (same map).
TEST(RoutePredictor, PredictsTokensOutsideTheProfile) {
  const RoutingTrace t = deterministic_trace(3, 6, 6, 30);
  const RoutePredictor p(t, make_schedule(t, Phase::Prefill, 4, 2, 0, 2));
  for (int64_t tok = t.seq_start[2]; tok < t.tokens(); tok += 5) {
    const int32_t e = t.experts_of(tok, 0)[0];
    const std::vector<float> s = batch_scores(p, t, 0, {tok});
    const int32_t best = static_cast<int32_t>(std::max_element(s.begin(), s.end()) - s.begin());
    EXPECT_EQ(best, next_of(0, e, 6));
    EXPECT_GT(s[best], 0.7f);
  }
}

TEST(RoutePredictor, TokenScoreIsTheMeanOverItsExperts) {
  const RoutingTrace t = synthetic(1.0, 0.3, 0.6, 4, 8, 3);
  const RoutePredictor p(t, make_schedule(t, Phase::Decode, 2, 2, 0, 8));
  for (int64_t l = 0; l + 1 < t.layers; ++l)
    for (int32_t a = 0; a < 8; ++a)
      for (int32_t b = 0; b < 8; ++b) {
        if (a == b) continue;
        const int32_t c = (a + b + 1) % 8;
        const auto sa = token_scores(p, 8, l, {a}), sb = token_scores(p, 8, l, {b}), sc = token_scores(p, 8, l, {c});
        const auto sab = token_scores(p, 8, l, {a, b});
        for (int32_t e = 0; e < 8; ++e) EXPECT_NEAR(sab[e], (sa[e] + sb[e]) / 2, 1e-6) << l << " " << a << " " << b << " " << e;
        if (c == a || c == b) continue;
        const auto sabc = token_scores(p, 8, l, {a, b, c});
        for (int32_t e = 0; e < 8; ++e) EXPECT_NEAR(sabc[e], (sa[e] + sb[e] + sc[e]) / 3, 1e-6);
        for (int32_t e = 0; e < 8; ++e) EXPECT_TRUE(sa[e] >= 0 && sa[e] <= 1) << sa[e];
      }
}

TEST(RoutePredictor, BatchScoreIsTheChanceAnyTokenNeedsIt) {
  const RoutingTrace t = synthetic(1.0, 0.4, 0.6);
  const RoutePredictor p(t, make_schedule(t, Phase::Decode, 2, 2, 0, 6));
  const Schedule replay = make_schedule(t, Phase::Decode, 3, 2, 6, 12);
  for (int64_t b = 0; b < replay.batches(); b += 3) {
    const std::vector<int64_t> tokens(replay.tokens.begin() + replay.batch_start[b],
                                      replay.tokens.begin() + replay.batch_start[b + 1]);
    for (int64_t l = 0; l + 1 < t.layers; ++l) {
      std::vector<double> miss(t.experts, 1.0);
      for (const int64_t tok : tokens) {
        const auto s = token_scores(p, t.experts, l, {t.experts_of(tok, l), t.experts_of(tok, l) + t.topk});
        for (int64_t e = 0; e < t.experts; ++e) miss[e] *= 1.0 - s[e];
      }
      const auto got = batch_scores(p, t, l, tokens);
      for (int64_t e = 0; e < t.experts; ++e) EXPECT_NEAR(got[e], 1.0 - miss[e], 1e-5) << "batch " << b << " layer " << l;
    }
  }
  // No tokens: nobody needs anything.
  const auto none = batch_scores(p, t, 0, {});
  for (const float x : none) EXPECT_EQ(x, 0.f);
}

// --- popularity ----------------------------------------------------------------------------------

TEST(RoutePredictor, PopularityCountsTheProfilesTokens) {
  const RoutingTrace t = synthetic(1.5, 0.3, 0.3, 3, 6, 2, 10, 20);
  std::vector<double> want(3 * 6, 0.0);
  for (int64_t tok = 0; tok < t.seq_start[4]; ++tok)
    for (int64_t l = 0; l < 3; ++l)
      for (int64_t j = 0; j < 2; ++j) want[l * 6 + t.experts_of(tok, l)[j]] += 1;
  const RoutePredictor d(t, make_schedule(t, Phase::Decode, 2, 3, 0, 4));
  EXPECT_EQ(d.popularity(), want);
  const RoutePredictor f(t, make_schedule(t, Phase::Prefill, 8, 1, 0, 4));
  EXPECT_EQ(f.popularity(), want);
  for (int64_t l = 0; l < 3; ++l)
    EXPECT_EQ(std::accumulate(want.begin() + l * 6, want.begin() + l * 6 + 6, 0.0), 4.0 * 20 * 2);
}

// An expert the profile never saw at layer l predicts layer l + 1's popularity (the smoothing prior).
TEST(RoutePredictor, UnseenExpertPredictsThePopularity) {
  RoutingTrace t;
  t.layers = 2;
  t.experts = 4;
  t.topk = 1;
  // Layer 0 only ever expert 0; layer 1: expert 1 three times, expert 2 once.
  t.route = {0, 1, 0, 1, 0, 1, 0, 2};
  t.weights.assign(t.route.size(), 1.0f);
  t.seq_start = {0, 4};
  const RoutePredictor p(t, make_schedule(t, Phase::Decode, 1, 1, 0, 1));
  EXPECT_EQ(p.popularity(), (std::vector<double>{4, 0, 0, 0, 0, 3, 1, 0}));
  for (const int32_t unseen : {1, 2, 3}) {
    const auto s = token_scores(p, 4, 0, {unseen});
    EXPECT_NEAR(s[1] / s[2], 3.0, 1e-4) << "unseen expert " << unseen;
    EXPECT_FLOAT_EQ(s[0], 0.f);
    EXPECT_FLOAT_EQ(s[3], 0.f);
  }
  const auto seen = token_scores(p, 4, 0, {0});
  EXPECT_GT(seen[1], seen[2]);
  EXPECT_GT(seen[1], 0.5f);
}

// --- the empty profile ---------------------------------------------------------------------------

TEST(RoutePredictor, EmptyProfileIsUniform) {
  const RoutingTrace t = synthetic(2.0, 0.5, 0.9, 3, 8, 2);
  const Schedule empty = make_schedule(t, Phase::Decode, 4, 2, 0, 0);
  ASSERT_TRUE(empty.tokens.empty());
  const RoutePredictor p(t, empty);
  EXPECT_EQ(p.popularity(), std::vector<double>(3 * 8, 1.0));
  // Every transition is the prior: P(e' in a top-2 route of 8 uniform experts) = 2/8.
  for (int64_t l = 0; l + 1 < 3; ++l)
    for (int32_t a = 0; a < 8; ++a) {
      for (const float x : token_scores(p, 8, l, {a})) EXPECT_NEAR(x, 2.0f / 8, 1e-6);
      for (const float x : token_scores(p, 8, l, {a, static_cast<int32_t>((a + 3) % 8)})) EXPECT_NEAR(x, 2.0f / 8, 1e-6);
    }
  const auto s = batch_scores(p, t, 1, {0, 1, 2});
  for (const float x : s) EXPECT_NEAR(x, 1.0 - std::pow(1.0 - 2.0 / 8, 3), 1e-5);
  // Paths: the layer-0 experts, then ties everywhere: experts 0 and 1.
  for (int64_t tok = 0; tok < t.tokens(); tok += 13) {
    const std::vector<int32_t> path = p.path(t, tok, false);
    ASSERT_EQ(path.size(), 6u);
    EXPECT_EQ(std::set<int32_t>(path.begin(), path.begin() + 2),
              std::set<int32_t>(t.experts_of(tok, 0), t.experts_of(tok, 0) + 2));
    EXPECT_EQ(std::set<int32_t>(path.begin() + 2, path.begin() + 4), (std::set<int32_t>{8, 9}));
    EXPECT_EQ(std::set<int32_t>(path.begin() + 4, path.end()), (std::set<int32_t>{16, 17}));
  }
}

// --- paths ---------------------------------------------------------------------------------------

TEST(RoutePredictor, PathFollowsADeterministicTransition) {
  const RoutingTrace t = deterministic_trace(4, 6, 4, 30);
  const RoutePredictor p(t, make_schedule(t, Phase::Decode, 2, 1, 0, 4));
  for (int64_t tok = 0; tok < t.tokens(); ++tok) {
    std::vector<int32_t> want;
    for (int64_t l = 0; l < 4; ++l) want.push_back(static_cast<int32_t>(l * 6 + t.experts_of(tok, l)[0]));
    EXPECT_EQ(p.path(t, tok, false), want) << "token " << tok;
  }
}

// Layer-0 experts first, then per layer the k most likely under the chain alone (no vocabulary ids,
// previous token unknown): the mean of the layer before's transition rows weighted by the predicted
// experts' renormalised probabilities; ties to the lower id.
TEST(RoutePredictor, PathChainsTheWeightedTransitions) {
  const RoutingTrace t = synthetic(1.0, 0.3, 0.7, 5, 10, 3, 10, 24, 3);
  const RoutePredictor p(t, make_schedule(t, Phase::Decode, 4, 1, 0, 6));
  const int64_t L = 5, E = 10, k = 3;
  for (int64_t tok = 0; tok < t.tokens(); tok += 11) {
    const std::vector<int32_t> path = p.path(t, tok, false);
    ASSERT_EQ(static_cast<int64_t>(path.size()), L * k);
    std::vector<int32_t> cur(t.experts_of(tok, 0), t.experts_of(tok, 0) + k);
    std::vector<double> w(k, 1.0 / k);
    EXPECT_EQ(std::set<int32_t>(path.begin(), path.begin() + k), std::set<int32_t>(cur.begin(), cur.end()))
        << "the layer-0 experts";
    for (int64_t l = 1; l < L; ++l) {
      std::vector<double> chain(E, 0.0);
      for (int64_t j = 0; j < k; ++j) {
        const auto row = token_scores(p, E, l - 1, {cur[j]});
        for (int64_t e = 0; e < E; ++e) chain[e] += w[j] * row[e];
      }
      std::vector<int32_t> order(E);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return chain[a] > chain[b]; });
      cur.assign(order.begin(), order.begin() + k);
      double z = 0;
      for (int64_t j = 0; j < k; ++j) z += w[j] = chain[cur[j]];
      for (double& x : w) x /= z;
      std::set<int32_t> want;
      for (const int32_t e : cur) want.insert(static_cast<int32_t>(l * E + e));
      EXPECT_EQ(std::set<int32_t>(path.begin() + l * k, path.begin() + (l + 1) * k), want) << "token " << tok << " layer " << l;
    }
  }
}

/// A trace whose routes at every layer are a function of the token's vocabulary id (ids 0..V-1 drawn
/// at random), top-2 of E: layer transitions and the previous token say little, the id says all.
RoutingTrace routed_by_id(int64_t L, int64_t E, int64_t V, int64_t seqs, int64_t len) {
  RoutingTrace t = shaped_trace(L, E, 2, seqs, len);
  std::mt19937 rng(5);
  for (int64_t tok = 0; tok < t.tokens(); ++tok) {
    const int32_t v = static_cast<int32_t>(rng() % V);
    t.token_id.push_back(v);
    for (int64_t l = 0; l < L; ++l) {
      const int32_t a = static_cast<int32_t>((v * 7 + l * 3) % E), b = static_cast<int32_t>((a + 1 + v % 3) % E);
      t.route.push_back(a);
      t.route.push_back(b);
    }
  }
  t.weights.assign(t.route.size(), 0.5f);
  return t;
}

TEST(RoutePredictor, PathOfATokenWhoseIdProfilingSawIsItsRoute) {
  const RoutingTrace t = routed_by_id(4, 16, 20, 12, 40);
  const RoutePredictor p(t, make_schedule(t, Phase::Decode, 1, 1, 0, 6));
  for (int64_t tok = 6 * 40; tok < t.tokens(); ++tok) {
    std::set<int32_t> want;
    for (int64_t l = 0; l < 4; ++l)
      for (int64_t j = 0; j < 2; ++j) want.insert(static_cast<int32_t>(l * 16 + t.experts_of(tok, l)[j]));
    for (const bool previous : {false, true}) {
      const std::vector<int32_t> path = p.path(t, tok, previous);
      EXPECT_EQ(std::set<int32_t>(path.begin(), path.end()), want) << "token " << tok << " id " << t.vocab_id(tok);
    }
  }
  // An id profiling never saw falls back to the chain: the path a predictor profiled without ids gives.
  RoutingTrace unseen = t;
  for (int32_t& v : unseen.token_id) v += 1000;
  RoutingTrace anonymous = t;
  anonymous.token_id.clear();
  const RoutePredictor r(anonymous, make_schedule(t, Phase::Decode, 1, 1, 0, 6));
  int64_t differ = 0;
  for (int64_t tok = 6 * 40; tok < t.tokens(); tok += 5) {
    EXPECT_EQ(p.path(unseen, tok, false), r.path(anonymous, tok, false));
    differ += p.path(t, tok, false) != r.path(anonymous, tok, false);
  }
  EXPECT_GT(differ, 0) << "the ids changed no path";
}

// Locality 0.9, no inter-layer correlation, uniform popularity: a token mostly repeats the previous
// one's experts and the layer before says nothing, so once the previous token has run the path is
// mostly the route, and without it layers >= 1 are guesses.
TEST(RoutePredictor, PathFollowsThePreviousTokenOnceItHasRun) {
  const RoutingTrace t = synthetic(0.0, 0.9, 0.0, 4, 16, 2, 400, 8, 9);
  const RoutePredictor p(t, make_schedule(t, Phase::Decode, 1, 1, 0, 200));
  int64_t known_right = 0, unknown_right = 0, total = 0;
  for (int64_t s = 200; s < 400; ++s)
    for (int64_t tok = t.seq_start[s] + 1; tok < t.seq_start[s + 1]; ++tok) {
      std::set<int32_t> want;
      for (int64_t l = 1; l < 4; ++l)
        for (int64_t j = 0; j < 2; ++j) want.insert(static_cast<int32_t>(l * 16 + t.experts_of(tok, l)[j]));
      for (const int32_t key : p.path(t, tok, true)) known_right += want.count(key);
      for (const int32_t key : p.path(t, tok, false)) unknown_right += want.count(key);
      total += 6;
    }
  const double known = double(known_right) / total, unknown = double(unknown_right) / total;
  EXPECT_GT(known, 0.8) << "layers >= 1 with the previous token: " << known;
  EXPECT_LT(unknown, 0.3) << "layers >= 1 without it: " << unknown;
}

// paths(): a token's previous one is known when an earlier window processed it: in decode every
// token but a sequence's first (a window is one position of a group of sequences); in prefill only a
// window's first chunk's first token, whose previous token ends the window before.
TEST(RoutePredictor, PathsKnowThePreviousTokenWhenAnEarlierWindowRanIt) {
  const RoutingTrace t = synthetic(0.0, 1.0, 0.0, 3, 8, 2, 12, 12, 4);
  const RoutePredictor p(t, make_schedule(t, Phase::Decode, 1, 1, 0, 4));
  for (const Phase phase : {Phase::Decode, Phase::Prefill}) {
    const Schedule s = make_schedule(t, phase, phase == Phase::Decode ? 2 : 3, 2, 4, 12);
    const std::vector<std::vector<int32_t>> paths = p.paths(t, s);
    ASSERT_EQ(paths.size(), s.tokens.size());
    int64_t known = 0, differ = 0;
    for (size_t w = 0; w + 1 < s.window_start.size(); ++w)
      for (int64_t i = s.batch_start[s.window_start[w]]; i < s.batch_start[s.window_start[w + 1]]; ++i) {
        const int64_t tok = s.tokens[i];
        const int64_t pos = tok % 12;
        const bool want = phase == Phase::Decode ? pos > 0 : pos > 0 && i == s.batch_start[s.window_start[w]];
        known += want;
        EXPECT_EQ(paths[i], p.path(t, tok, want)) << (phase == Phase::Decode ? "decode" : "prefill") << " token " << tok;
        // Locality 1: the previous token's route is the token's, so knowing it changes the path.
        if (pos > 0) differ += p.path(t, tok, true) != p.path(t, tok, false);
      }
    EXPECT_GT(known, 0);
    EXPECT_GT(differ, 0) << "knowing the previous token changes some path, so the flag above is tested";
  }
}

TEST(RoutePredictor, PathOfASingleLayerTraceIsItsExperts) {
  const RoutingTrace t = synthetic(1.0, 0.5, 0.5, 1, 6, 2, 2, 8);
  const RoutePredictor p(t, make_schedule(t, Phase::Decode, 1, 1, 0, 2));
  for (int64_t tok = 0; tok < t.tokens(); ++tok) {
    const std::vector<int32_t> path = p.path(t, tok, false);
    EXPECT_EQ(std::set<int32_t>(path.begin(), path.end()), std::set<int32_t>(t.experts_of(tok, 0), t.experts_of(tok, 0) + 2));
    EXPECT_EQ(path.size(), 2u);
  }
}

// --- make_predicted_uses -------------------------------------------------------------------------

TEST(RoutePredictor, PredictedUsesArePathsPerBatchAndLayerWithTheWindowsEnd) {
  const RoutingTrace t = synthetic(1.0, 0.4, 0.6, 3, 8, 2, 14, 10, 5);
  const RoutePredictor p(t, make_schedule(t, Phase::Decode, 2, 2, 0, 4));
  for (const Phase phase : {Phase::Decode, Phase::Prefill}) {
    const Schedule s = make_schedule(t, phase, phase == Phase::Decode ? 2 : 4, phase == Phase::Decode ? 3 : 2, 4, 14);
    const PredictedUses u = make_predicted_uses(t, s, p);
    const std::vector<std::vector<int32_t>> paths = p.paths(t, s);
    const int64_t L = 3, E = 8;
    EXPECT_EQ(u.predicted.layers, L);
    EXPECT_EQ(u.predicted.experts, E);
    ASSERT_EQ(u.predicted.steps(), s.batches() * L);
    ASSERT_EQ(static_cast<int64_t>(u.horizon.size()), s.batches() * L);
    EXPECT_EQ(u.predicted.step_start.front(), 0);
    EXPECT_EQ(u.predicted.step_start.back(), u.predicted.lookups());
    for (size_t w = 0; w + 1 < s.window_start.size(); ++w)
      for (int64_t b = s.window_start[w]; b < s.window_start[w + 1]; ++b)
        for (int64_t l = 0; l < L; ++l) {
          const int64_t step = b * L + l;
          EXPECT_EQ(u.horizon[step], s.window_start[w + 1] * L) << "step " << step;
          std::set<int32_t> want;
          for (int64_t i = s.batch_start[b]; i < s.batch_start[b + 1]; ++i)
            for (const int32_t key : paths[i])
              if (key / E == l) want.insert(key % E);
          const std::vector<int32_t> got(u.predicted.expert.begin() + u.predicted.step_start[step],
                                         u.predicted.expert.begin() + u.predicted.step_start[step + 1]);
          EXPECT_EQ(got, std::vector<int32_t>(want.begin(), want.end())) << "step " << step;
        }
  }
}

TEST(RoutePredictor, TrueUsesAreTheLookupsWithTheWindowsEnd) {
  const RoutingTrace t = synthetic(1.0, 0.4, 0.6, 3, 8, 2, 14, 10, 5);
  for (const Phase phase : {Phase::Decode, Phase::Prefill}) {
    const Schedule s = make_schedule(t, phase, 2, 3, 4, 14);
    const LookupStream ls = make_lookups(t, s);
    const PredictedUses truth = true_uses(ls, s);
    EXPECT_EQ(truth.predicted.step_start, ls.step_start);
    EXPECT_EQ(truth.predicted.expert, ls.expert);
    ASSERT_EQ(static_cast<int64_t>(truth.horizon.size()), s.batches() * 3);
    for (size_t w = 0; w + 1 < s.window_start.size(); ++w)
      for (int64_t step = s.window_start[w] * 3; step < s.window_start[w + 1] * 3; ++step)
        EXPECT_EQ(truth.horizon[step], s.window_start[w + 1] * 3) << "step " << step;
  }
}

TEST(RoutePredictor, PredictedUsesOfAnAccuratePredictorAreTheLookups) {
  const RoutingTrace t = deterministic_trace(3, 6, 6, 20);
  const RoutePredictor p(t, make_schedule(t, Phase::Decode, 1, 1, 0, 6));
  const Schedule s = make_schedule(t, Phase::Decode, 2, 2, 0, 6);
  const PredictedUses u = make_predicted_uses(t, s, p);
  const LookupStream ls = make_lookups(t, s);
  EXPECT_EQ(u.predicted.step_start, ls.step_start);
  EXPECT_EQ(u.predicted.expert, ls.expert);
  // Decode, 6 sequences in groups of 4: windows of 2 batches (group 1) then 1 batch (group 2).
  EXPECT_EQ(u.horizon[0], 2 * 3);
  EXPECT_EQ(u.horizon[5], 2 * 3);
  EXPECT_EQ(u.horizon[6], 4 * 3);
}

}  // namespace
}  // namespace mlsb::moe_offload
