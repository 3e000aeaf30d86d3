// Parallel Folding's rank groups equal Megatron-LM's for its documented 8-rank examples (the attention and MoE
// parts folded over the same ranks), the order axis moves them as Megatron's generator does, and every broken
// rule is an error naming the axis.
#include "workloads/moe_train/fold/mapping.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

namespace mlsb::moe_train::fold {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using G = std::vector<std::vector<int>>;

const G& of(const Groups& g, Group k) { return g.of[static_cast<size_t>(k)]; }

TEST(FoldMapping, AttentionTp2Dp4IsMegatronsExample) {
  const Groups g = make_groups(make_mapping(8, 2, 1, 1, 8, 1, kDefaultOrder));
  EXPECT_EQ(of(g, Group::Tp), (G{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(of(g, Group::Dp), (G{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(of(g, Group::Ep), (G{{0, 1, 2, 3, 4, 5, 6, 7}})) << "ETP=1, EP=8: one EP group of every rank";
  EXPECT_EQ(of(g, Group::Edp), (G{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}));
}

TEST(FoldMapping, LegacyEtp2Ep4) {
  const Mapping m = make_mapping(8, 2, 1, 2, 4, 1, kDefaultOrder);
  EXPECT_TRUE(m.legacy());
  EXPECT_EQ(m.edp, 1);
  const Groups g = make_groups(m);
  EXPECT_EQ(of(g, Group::Etp), (G{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(of(g, Group::Ep), (G{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(of(g, Group::TpEp), (G{{0, 1, 2, 3, 4, 5, 6, 7}}));
}

TEST(FoldMapping, FoldedEtp1Ep4) {
  const Mapping m = make_mapping(8, 2, 1, 1, 4, 1, kDefaultOrder);
  EXPECT_FALSE(m.legacy()) << "ETP differs from TP";
  EXPECT_EQ(m.edp, 2);
  const Groups g = make_groups(m);
  EXPECT_EQ(of(g, Group::Ep), (G{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(of(g, Group::Edp), (G{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
}

TEST(FoldMapping, ContextParallelKeepsFoldedEpContiguous) {
  const Mapping m = make_mapping(8, 1, 2, 1, 4, 1, kDefaultOrder);
  EXPECT_EQ(m.dp, 4);
  const Groups g = make_groups(m);
  EXPECT_EQ(of(g, Group::Cp), (G{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(of(g, Group::Dp), (G{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(of(g, Group::DpCp), (G{{0, 1, 2, 3, 4, 5, 6, 7}}));
  EXPECT_EQ(of(g, Group::Ep), (G{{0, 1, 2, 3}, {4, 5, 6, 7}}));
}

TEST(FoldMapping, OrderMovesTheGroupsAsMegatronsGenerator) {
  // tp-dp-...: DP next to TP, so with TP=2, DP=4 a DP group is 4 ranks at stride 2 either way, but EP
  // (after dp in this order) strides over TP x DP.
  const Mapping m = make_mapping(8, 2, 1, 2, 2, 1, "tp-dp-ep-cp-pp");
  EXPECT_EQ(m.edp, 2);
  const Groups g = make_groups(m);
  EXPECT_EQ(of(g, Group::Ep), (G{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  EXPECT_EQ(of(g, Group::Edp), (G{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  // A name of size 1 may be left out: Megatron appends it.
  EXPECT_EQ(make_mapping(8, 2, 1, 2, 4, 1, "tp-ep-dp").order, "tp-ep-dp-cp-pp");
}

TEST(FoldMapping, EveryRankInExactlyOneGroupOfEachKind) {
  for (const Mapping& m : legal_mappings(8, 8, 64, 4, 16, true)) {
    const Groups g = make_groups(m);
    for (int k = 0; k < kGroupKinds; ++k) {
      std::multiset<int> seen;
      for (const auto& group : g.of[static_cast<size_t>(k)]) seen.insert(group.begin(), group.end());
      EXPECT_EQ(seen, (std::multiset<int>{0, 1, 2, 3, 4, 5, 6, 7})) << m.label() << " " << to_string(Group(k));
    }
    EXPECT_EQ(g.containing(Group::TpEp, 0).size(), static_cast<size_t>(m.etp * m.ep));
    EXPECT_EQ(g.containing(Group::DpCp, 0).size(), static_cast<size_t>(m.dp * m.cp));
  }
}

TEST(FoldMapping, LegalMappingsOfEightRanks) {
  // E = 8, ffn 64, 4 heads, seq 16, no CP: tp in {1, 2, 4}; etp x ep divides 8 with ep | 8.
  const auto all = legal_mappings(8, 8, 64, 4, 16, false);
  std::set<std::string> labels;
  for (const auto& m : all) labels.insert(m.label());
  EXPECT_EQ(all.size(), labels.size());
  EXPECT_TRUE(labels.count("tp2 cp1 dp4 | etp1 ep8 edp1"));
  EXPECT_TRUE(labels.count("tp1 cp1 dp8 | etp8 ep1 edp1"));
  EXPECT_FALSE(labels.count("tp8 cp1 dp1 | etp1 ep8 edp1")) << "4 heads do not divide by tp 8";
  EXPECT_EQ(all.size(), 3u * 10u) << "3 TPs times the 10 (etp, ep) with etp x ep | 8";
}

void expect_error(auto f, const char* what) {
  try {
    f();
    ADD_FAILURE() << "no error for " << what;
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr(what));
  }
}

TEST(FoldMapping, BrokenRulesNameTheAxis) {
  expect_error([] { make_mapping(8, 3, 1, 1, 8, 1, kDefaultOrder); }, "tp: tp x cp x pp = 3 does not divide the 8");
  expect_error([] { make_mapping(8, 2, 1, 3, 1, 1, kDefaultOrder); }, "ep: etp x ep x pp = 3");
  expect_error([] { make_mapping(8, 0, 1, 1, 1, 1, kDefaultOrder); }, "tp: must be >= 1");
  expect_error([] { make_mapping(8, 2, 1, 1, 8, 1, "tp-cp-ep-dp-xx"); }, "order: unknown name 'xx'");
  expect_error([] { make_mapping(8, 2, 1, 1, 8, 1, "tp-tp-ep-dp-pp"); }, "order: 'tp' appears twice");
  expect_error([] { make_mapping(8, 2, 1, 1, 4, 1, "tp-ep-pp"); }, "order: 'tp-ep-pp' leaves out dp");
  expect_error([] { RankGenerator(1, 2, 2, 2, 1, kDefaultOrder); }, "ep: EP (2) and CP (2) cannot share");
  const Mapping m = make_mapping(8, 2, 1, 2, 4, 1, kDefaultOrder);
  expect_error([&] { check_model(m, 6, 64, 4, 16); }, "ep: the 6 experts do not divide by ep = 4");
  expect_error([&] { check_model(m, 8, 63, 4, 16); }, "etp: ffn 63 does not divide by etp = 2");
  expect_error([&] { check_model(m, 8, 64, 3, 16); }, "tp: the 3 heads do not divide by tp = 2");
  expect_error([&] { check_model(m, 8, 64, 4, 15); }, "seq: 15 does not divide by cp x tp = 2");
}

TEST(FoldMapping, GeneratorMatchesHandWrittenLayout) {
  // tp=2, pp=2, dp=2 in order tp-pp-dp: rank = tp + 2 pp + 4 dp.
  const RankGenerator g(2, 1, 1, 2, 2, "tp-pp-dp");
  EXPECT_EQ(g.order(), "tp-pp-dp-cp-ep");
  EXPECT_THAT(g.groups("pp"), ElementsAre(ElementsAre(0, 2), ElementsAre(1, 3), ElementsAre(4, 6), ElementsAre(5, 7)));
  EXPECT_THAT(g.groups("tp-dp"), ElementsAre(ElementsAre(0, 1, 4, 5), ElementsAre(2, 3, 6, 7)));
}

}  // namespace
}  // namespace mlsb::moe_train::fold
