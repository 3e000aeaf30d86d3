// ExpertFlow's token scheduling (token_scheduler.hpp): the regrouped schedule keeps every window's
// tokens, the batch sizes and the windows; and on a trace of two interleaved route families it puts
// each family in its own batches, so make_lookups needs fewer lookups than the original order.
#include "workloads/moe_offload/token_scheduler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

#include "workloads/moe_offload/route_predictor.hpp"
#include "workloads/moe_offload/schedule.hpp"
#include "workloads/moe_offload/synthetic_trace.hpp"
#include "workloads/moe_offload/trace.hpp"

namespace mlsb::moe_offload {
namespace {

std::vector<int64_t> tokens_of_window(const Schedule& s, size_t w) {
  std::vector<int64_t> out(s.tokens.begin() + s.batch_start[s.window_start[w]],
                           s.tokens.begin() + s.batch_start[s.window_start[w + 1]]);
  std::sort(out.begin(), out.end());
  return out;
}

/// The regrouped schedule has the same batch and window offsets and the same tokens per window.
void expect_same_windows(const Schedule& a, const Schedule& b) {
  EXPECT_EQ(a.batch_start, b.batch_start);
  EXPECT_EQ(a.window_start, b.window_start);
  ASSERT_EQ(a.tokens.size(), b.tokens.size());
  for (size_t w = 0; w + 1 < a.window_start.size(); ++w) EXPECT_EQ(tokens_of_window(a, w), tokens_of_window(b, w)) << "window " << w;
}

TEST(TokenScheduler, KeepsTokensBatchesAndWindows) {
  SyntheticTraceSpec spec;
  spec.layers = 4;
  spec.experts = 16;
  spec.topk = 2;
  spec.sequences = 20;
  spec.seq_len = 24;
  spec.zipf = 0.8;
  spec.locality = 0.3;
  spec.correlation = 0.7;
  const RoutingTrace t = synthetic_trace(spec);
  const RoutePredictor learned(t, make_schedule(t, Phase::Decode, 1, 1, 0, 4));
  const RoutePredictor uniform(t, make_schedule(t, Phase::Decode, 1, 1, 0, 0));
  struct Shape {
    Phase phase;
    int64_t batch, window, begin, end;
  };
  for (const Shape& sh : {Shape{Phase::Decode, 4, 4, 4, 20}, Shape{Phase::Decode, 3, 2, 4, 19}, Shape{Phase::Decode, 1, 5, 4, 20},
                          Shape{Phase::Decode, 4, 1, 4, 20}, Shape{Phase::Prefill, 8, 3, 4, 20},
                          Shape{Phase::Prefill, 5, 2, 4, 11}})
    for (const RoutePredictor* p : {&learned, &uniform}) {
      SCOPED_TRACE(testing::Message() << (sh.phase == Phase::Decode ? "decode" : "prefill") << " batch " << sh.batch
                                      << " window " << sh.window << (p == &learned ? " learned" : " uniform"));
      const Schedule s = make_schedule(t, sh.phase, sh.batch, sh.window, sh.begin, sh.end);
      std::vector<std::vector<int32_t>> paths;
      const Schedule r = schedule_tokens(t, s, *p, &paths);
      expect_same_windows(r, s);
      EXPECT_EQ(paths, p->paths(t, r)) << "the paths come back in the regrouped order";
      // Every token once.
      std::vector<int64_t> all = r.tokens;
      std::sort(all.begin(), all.end());
      EXPECT_EQ(std::adjacent_find(all.begin(), all.end()), all.end());
      // The lookups are still one step per (batch, layer).
      EXPECT_EQ(make_lookups(t, r).steps(), s.batches() * t.layers);
    }
}

TEST(TokenScheduler, EmptyScheduleStaysEmpty) {
  SyntheticTraceSpec spec;
  spec.sequences = 2;
  spec.seq_len = 4;
  const RoutingTrace t = synthetic_trace(spec);
  const RoutePredictor p(t, make_schedule(t, Phase::Decode, 1, 1, 0, 1));
  const Schedule s = make_schedule(t, Phase::Decode, 2, 2, 1, 1);
  const Schedule r = schedule_tokens(t, s, p);
  EXPECT_TRUE(r.tokens.empty());
  EXPECT_EQ(r.batch_start, s.batch_start);
  EXPECT_EQ(r.window_start, s.window_start);
}

// Two families of routes, 8 experts, top-2, 2 layers: family A uses {0, 1} then {2, 3}, family B
// {4, 5} then {6, 7}. Sequence q is of family q % 2, so a decode group of 4 sequences holds A, B, A, B
// and each original batch (2 consecutive sequences) mixes the families.
RoutingTrace two_families(int64_t sequences, int64_t len) {
  RoutingTrace t;
  t.layers = 2;
  t.experts = 8;
  t.topk = 2;
  t.seq_start = {0};
  for (int64_t q = 0; q < sequences; ++q) {
    t.seq_start.push_back(t.seq_start.back() + len);
    const int32_t base = q % 2 == 0 ? 0 : 4;
    for (int64_t pos = 0; pos < len; ++pos) {
      const bool swap = (pos + q) % 3 == 0;  // the slot order varies; the sets do not
      t.route.insert(t.route.end(), {swap ? base + 1 : base, swap ? base : base + 1});
      t.route.insert(t.route.end(), {base + 2, base + 3});
    }
  }
  t.weights.assign(t.route.size(), 0.5f);
  return t;
}

int family_of(const RoutingTrace& t, int64_t token) { return t.experts_of(token, 0)[0] < 4 ? 0 : 1; }

TEST(TokenScheduler, GroupsInterleavedRouteFamiliesAndSavesLookups) {
  const RoutingTrace t = two_families(8, 6);
  const Schedule s = make_schedule(t, Phase::Decode, 2, 2, 0, 8);
  ASSERT_EQ(s.batches(), 2 * 6 * 2);
  // The original order mixes the families in every batch: 4 experts per step.
  for (int64_t b = 0; b < s.batches(); ++b)
    ASSERT_NE(family_of(t, s.tokens[s.batch_start[b]]), family_of(t, s.tokens[s.batch_start[b] + 1]));
  const int64_t before = make_lookups(t, s).lookups();
  EXPECT_EQ(before, s.batches() * 2 * 4);

  const RoutePredictor learned(t, make_schedule(t, Phase::Decode, 1, 1, 0, 8));
  const RoutePredictor uniform(t, make_schedule(t, Phase::Decode, 1, 1, 0, 0));
  for (const RoutePredictor* p : {&learned, &uniform}) {
    SCOPED_TRACE(p == &learned ? "learned" : "uniform");
    const Schedule r = schedule_tokens(t, s, *p);
    expect_same_windows(r, s);
    for (int64_t b = 0; b < r.batches(); ++b)
      EXPECT_EQ(family_of(t, r.tokens[r.batch_start[b]]), family_of(t, r.tokens[r.batch_start[b] + 1])) << "batch " << b;
    const int64_t after = make_lookups(t, r).lookups();
    EXPECT_LT(after, before);
    EXPECT_EQ(after, r.batches() * 2 * 2);
  }
}

// The same in prefill: a window of 4 chunks of one sequence whose tokens alternate families.
TEST(TokenScheduler, GroupsFamiliesWithinAPrefillWindow) {
  RoutingTrace t;
  t.layers = 2;
  t.experts = 8;
  t.topk = 2;
  t.seq_start = {0, 16, 32};
  for (int64_t tok = 0; tok < 32; ++tok) {
    const int32_t base = tok % 2 == 0 ? 0 : 4;
    t.route.insert(t.route.end(), {base, base + 1, base + 2, base + 3});
  }
  t.weights.assign(t.route.size(), 0.5f);
  const Schedule s = make_schedule(t, Phase::Prefill, 4, 4, 0, 2);
  ASSERT_EQ(s.window_start, (std::vector<int64_t>{0, 4, 8}));
  const int64_t before = make_lookups(t, s).lookups();
  EXPECT_EQ(before, 8 * 2 * 4);
  const RoutePredictor p(t, make_schedule(t, Phase::Prefill, 4, 4, 0, 1));
  const Schedule r = schedule_tokens(t, s, p);
  expect_same_windows(r, s);
  for (int64_t b = 0; b < r.batches(); ++b) {
    std::set<int> fam;
    for (int64_t i = r.batch_start[b]; i < r.batch_start[b + 1]; ++i) fam.insert(family_of(t, r.tokens[i]));
    EXPECT_EQ(fam.size(), 1u) << "batch " << b;
  }
  EXPECT_EQ(make_lookups(t, r).lookups(), 8 * 2 * 2);
}

}  // namespace
}  // namespace mlsb::moe_offload
