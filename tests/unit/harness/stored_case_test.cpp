// A case stored before its benchmark gained an axis is the case at that axis's default: it reads back,
// pairs in compare and joins the history under the name a run of this build gives that case.
#include <gtest/gtest.h>

#include "harness/alias.hpp"
#include "reports/compare.hpp"
#include "reports/store.hpp"
#include "support/test_support.hpp"
#include "unit/reports/fixtures.hpp"

namespace mlsb {
namespace {

using reports::test::make_case;

// test_counter has the axes mode (default a) and size; these cases come from a build before `mode` existed.
TEST(StoredCase, WithoutALaterAxisIsTheCaseAtThatAxisDefault) {
  std::string workload = "test_counter", key = "size=5", label = "size=5";
  nlohmann::json params = {{"size", 5}};
  rename_stored_case(workload, params, key, label);
  EXPECT_EQ(workload, "test_counter");
  EXPECT_EQ(params, (nlohmann::json{{"mode", "a"}, {"size", 5}}));
  EXPECT_EQ(key, "mode=a,size=5");
  EXPECT_EQ(label, "size=5");  // the filled default is not named, as in a new run's label
}

TEST(StoredCase, ACaseLackingNoAxisOrOfAnUnknownWorkloadIsLeftAsStored) {
  for (const std::string name : {"test_counter", "gone_workload"}) {
    std::string workload = name, key = "stored key", label = "stored label";
    nlohmann::json params = {{"mode", "b"}, {"size", 5}};
    rename_stored_case(workload, params, key, label);
    EXPECT_EQ(workload, name);
    EXPECT_EQ(params, (nlohmann::json{{"mode", "b"}, {"size", 5}}));
    EXPECT_EQ(key, "stored key");
    EXPECT_EQ(label, "stored label");
  }
}

TEST(StoredCase, PairsWithTheNewRunsCaseAtTheDefaultAndNotWithAnotherValue) {
  reports::set_case_renamer(rename_stored_case);
  struct Unset {
    ~Unset() { reports::set_case_renamer({}); }
  } unset;
  test::TempDir tmp;
  reports::Store store(tmp / "r.db");
  const std::vector<double> times = {1.0, 1.1, 1.2};
  reports::RunData old_run, new_run;
  old_run.cases = {make_case("test_counter", {{"size", 5}}, {{"time_ms", times}})};
  new_run.cases = {make_case("test_counter", {{"mode", "a"}, {"size", 5}}, {{"time_ms", times}}),
                   make_case("test_counter", {{"mode", "b"}, {"size", 5}}, {{"time_ms", times}})};
  for (auto* run : {&old_run, &new_run}) {
    store.begin_run(run->run);
    for (auto& c : run->cases) store.add_case(run->run.id, c);
  }

  const auto cmp = reports::compare_runs(store.load_run(old_run.run.id), store.load_run(new_run.run.id));
  EXPECT_TRUE(cmp.only_base.empty());
  ASSERT_EQ(cmp.only_cand.size(), 1u);
  EXPECT_EQ(cmp.only_cand[0].params_key, "mode=b,size=5");
  ASSERT_EQ(cmp.metrics.size(), 1u);
  EXPECT_EQ(cmp.metrics[0].params_key, "mode=a,size=5");

  const auto points = store.load_metric_points({old_run.run.id, new_run.run.id}, "time_ms");
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].params_key, "mode=a,size=5");  // the old run's point joins the default case's series
}

}  // namespace
}  // namespace mlsb
