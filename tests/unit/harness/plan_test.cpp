#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "harness/plan.hpp"
#include "harness/registry.hpp"
#include "harness/suite.hpp"
#include "support/test_support.hpp"
#include "unit/harness/test_workloads.hpp"

namespace mlsb {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(HarnessValue, ParseAndKey) {
  EXPECT_EQ(std::get<int64_t>(parse_value(AxisType::Int, "64", "experts")), 64);
  EXPECT_DOUBLE_EQ(std::get<double>(parse_value(AxisType::Float, "1.25", "cf")), 1.25);
  EXPECT_EQ(std::get<std::string>(parse_value(AxisType::String, "bf16", "dtype")), "bf16");
  EXPECT_THAT(error_of([] { parse_value(AxisType::Int, "8x", "experts"); }),
              AllOf(HasSubstr("experts"), HasSubstr("8x"), HasSubstr("integer")));
  EXPECT_THROW(parse_value(AxisType::Float, "", "cf"), std::invalid_argument);
  EXPECT_EQ(params_key({{"b", Value{std::string("x")}}, {"a", Value{int64_t{1}}}}), "a=1,b=x");
  EXPECT_EQ(to_string(Value{0.5}), "0.5");
}

// Sizes as nccl-tests writes them: binary suffixes and geometric or arithmetic ranges.
TEST(HarnessValue, SizeSuffixesAndRanges) {
  const auto i = [](std::string_view t) { return std::get<int64_t>(parse_value(AxisType::Int, t, "elements")); };
  EXPECT_EQ(i("64Ki"), 65536);
  EXPECT_EQ(i("64K"), 65536);
  EXPECT_EQ(i("1M"), 1 << 20);
  EXPECT_EQ(i("3Gi"), int64_t{3} << 30);
  EXPECT_EQ(i("2T"), int64_t{2} << 40);
  for (const char* bad : {"1k", "1Mb", "1i", "K", "9000000T"})
    EXPECT_THAT(error_of([&] { parse_value(AxisType::Int, bad, "elements"); }), HasSubstr("elements")) << bad;
  const auto ints = [](std::string_view t) {
    std::vector<int64_t> out;
    for (const auto& v : parse_values(AxisType::Int, t, "elements")) out.push_back(std::get<int64_t>(v));
    return out;
  };
  EXPECT_EQ(ints("1K:8K:*2"), (std::vector<int64_t>{1024, 2048, 4096, 8192}));
  EXPECT_EQ(ints("1K:5000:*2"), (std::vector<int64_t>{1024, 2048, 4096}));  // stops before passing the end
  EXPECT_EQ(ints("1:10:+4"), (std::vector<int64_t>{1, 5, 9}));
  EXPECT_EQ(ints("7"), (std::vector<int64_t>{7}));
  EXPECT_EQ(ints("1:9223372036854775807:*2").size(), 63u);  // no overflow past the end
  for (const char* bad : {"8:1:*2", "1:8", "1:8:*1", "0:8:*2", "1:8:-1", "1:8:+0", "1:100000:+1"})
    EXPECT_THAT(error_of([&] { parse_values(AxisType::Int, bad, "elements"); }),
                AllOf(HasSubstr("axis 'elements'"), HasSubstr("range"))) << bad;
  // A ':' in a string or float axis is a plain value (paths, say).
  EXPECT_EQ(parse_values(AxisType::String, "a:b:c", "x").size(), 1u);
  const WorkloadInfo info = make_workload("test_counter")->info();
  EXPECT_EQ(expand_axes(info, {{"size", {"1:4:+1"}}}).size(), 4u);
}

TEST(HarnessPlan, ExpandsCartesianProduct) {
  const WorkloadInfo info = make_workload("test_counter")->info();
  const auto cases = expand_axes(info, {{"size", {"1", "2", "3"}}, {"mode", {"a", "b"}}});
  ASSERT_EQ(cases.size(), 6u);
  EXPECT_EQ(params_key(cases.front()), "mode=a,size=1");
  EXPECT_EQ(params_key(cases.back()), "mode=b,size=3");
  EXPECT_EQ(expand_axes(info, {}).size(), 1u);  // defaults
}

TEST(HarnessPlan, RejectsBadAxesWithClearErrors) {
  const WorkloadInfo info = make_workload("test_counter")->info();
  EXPECT_THAT(error_of([&] { expand_axes(info, {{"experts", {"8"}}}); }),
              AllOf(HasSubstr("no axis 'experts'"), HasSubstr("size"), HasSubstr("mode")));
  EXPECT_THAT(error_of([&] { expand_axes(info, {{"size", {"big"}}}); }), AllOf(HasSubstr("size"), HasSubstr("big")));
  EXPECT_THAT(error_of([&] { expand_axes(info, {{"mode", {"z"}}}); }),
              AllOf(HasSubstr("mode"), HasSubstr("'z'"), HasSubstr("allowed: a, b")));
  EXPECT_THAT(error_of([&] { expand_axes(info, {{"size", {"1001"}}}); }),
              HasSubstr("axis 'size': 1001 is out of range (allowed: 0 to 1000)"));
  EXPECT_THAT(error_of([&] { expand_axes(info, {{"size", {"-1"}}}); }), HasSubstr("out of range"));
  EXPECT_THAT(error_of([] { parse_axis_overrides({"size"}); }), HasSubstr("axis=value"));
  EXPECT_THAT(error_of([] { parse_axis_overrides({"size=1,,2"}); }), HasSubstr("empty value"));
  EXPECT_EQ(parse_axis_overrides({"size=1,2", "size=3"}).at("size").size(), 3u);
}

TEST(HarnessPlan, BuildPlanForWorkloadSuiteAndFilter) {
  test::TempDir dir;
  test::write_file(dir / "mine.json", R"({"name": "mine", "description": "d", "runner": {"warmup": 0},
    "cases": [{"workload": "test_counter", "params": {"size": [1, 2]}, "runner": {"min_samples": 2}},
              {"workload": "test_fail"}]})");
  const std::vector<std::filesystem::path> dirs{dir.path()};
  Plan p = build_plan("mine", dirs, {}, {}, "");
  EXPECT_EQ(p.suite, "mine");
  ASSERT_EQ(p.cases.size(), 3u);
  EXPECT_EQ(p.cases[0].runner.warmup, 0);
  EXPECT_EQ(p.cases[0].runner.min_samples, 2);
  RunnerOverrides cli;
  cli.min_samples = cli.max_samples = 7;
  p = build_plan((dir / "mine.json").string(), dirs, {{"size", {"5"}}}, cli, "test_counter");
  ASSERT_EQ(p.cases.size(), 1u);
  EXPECT_EQ(p.cases[0].id(), "test_counter/mode=a,size=5");
  EXPECT_EQ(p.cases[0].runner.min_samples, 7);
  EXPECT_THAT(error_of([&] { build_plan("nosuch", dirs, {}, {}, ""); }),
              AllOf(HasSubstr("'nosuch'"), HasSubstr("test_counter"), HasSubstr("mine")));
  EXPECT_THAT(error_of([&] { build_plan("test_counter", dirs, {{"topk", {"2"}}}, {}, ""); }),
              HasSubstr("workload 'test_counter' has no axis 'topk' (axes: mode, size)"));
  EXPECT_THAT(error_of([&] { build_plan("mine", dirs, {{"topk", {"2"}}}, {}, ""); }),
              HasSubstr("no workload in suite 'mine' has an axis 'topk' (test_counter: mode, size; test_fail: )"));
  EXPECT_THAT(error_of([&] { build_plan("test_counter", dirs, {}, {}, "(("); }), HasSubstr("--filter"));
}

TEST(HarnessSuite, MalformedSuitesNameFileAndKey) {
  test::TempDir dir;
  auto check = [&](const std::string& text, const std::string& expected) {
    test::write_file(dir / "s.json", text);
    const std::string err = error_of([&] { load_suite(dir / "s.json"); });
    EXPECT_THAT(err, HasSubstr("s.json")) << text;
    EXPECT_THAT(err, HasSubstr(expected)) << text;
  };
  check("{\"cases\": [", "not valid JSON");
  check("[]", "top level: expected an object");
  check(R"({"cases": []})", "cases");
  check(R"({"cases": [{"workload": "nope"}]})", "cases[0].workload: unknown workload 'nope'");
  check(R"({"cases": [{"workload": "test_countr"}]})", "did you mean 'test_counter'");
  // The known names include the aliases a suite may use (a family's old workload name).
  check(R"({"cases": [{"workload": "nope"}]})", "compress, compress.codec");
  check(R"({"cases": [{"workload": "test_counter", "params": {"topk": 2}}]})", "cases[0].params.topk");
  check(R"({"cases": [{"workload": "test_counter", "params": {"size": "big"}}]})", "cases[0].params.size");
  check(R"({"cases": [{"workload": "test_counter", "params": {"size": []}}]})", "empty list");
  check(R"({"cases": [{"workload": "test_counter", "runner": {"warmup": -1}}]})", "cases[0].runner.warmup");
  check(R"({"cases": [{"workload": "test_counter", "extra": 1}]})", "cases[0].extra");
  check(R"({"name": "x", "cases": [{"workload": "test_counter"}], "typo": 1})", "typo");
  check(R"({"name": 5, "cases": [{"workload": "test_counter"}]})", "name: expected a string");
  check(R"({"measure": "cycles", "cases": [{"workload": "test_counter"}]})",
        "measure: expected \"time\" or \"instructions\", got \"cycles\"");
  check(R"({"cases": [{"workload": "test_counter", "measure": 1}]})", "cases[0].measure: expected \"time\"");
  check(std::string(100000, '[') , "nesting deeper than");
  EXPECT_THAT(error_of([&] { load_suite(dir / "missing.json"); }), HasSubstr("does not exist"));
  EXPECT_THAT(error_of([&] { load_suite(dir.path()); }), HasSubstr("not a regular file"));
}

TEST(HarnessSuite, ShippedSuitesAreValid) {
  const auto files = find_suites({test::source_dir() / "workloads" / "suites"});
  ASSERT_FALSE(files.empty());
  for (const auto& f : files) {
    const Suite s = load_suite(f);
    EXPECT_EQ(s.name, f.stem().string());
    EXPECT_FALSE(s.description.empty()) << f;
  }
}

TEST(HarnessPlan, PathAxesAreCanonicalAndMustExist) {
  Axis axis{"dataset", AxisType::String, {}, "a file", {"auto"}};
  axis.path = true;
  const auto readme = test::source_dir() / "README.md";
  EXPECT_EQ(canonical_path_value(axis, readme.string()), "${source_dir}/README.md");
  EXPECT_EQ(canonical_path_value(axis, "${source_dir}/harness/../README.md"), "${source_dir}/README.md");
  test::TempDir dir;
  test::write_file(dir / "t.json", "[]");
  EXPECT_EQ(canonical_path_value(axis, (dir / "t.json").string()), (dir / "t.json").string());
  EXPECT_THAT(error_of([&] { canonical_path_value(axis, (dir / "none.json").string()); }),
              AllOf(HasSubstr("axis 'dataset'"), HasSubstr("none.json does not exist")));
  validate_value(axis, Value{std::string("anything")});  // a path axis's choices are keywords only
}

TEST(HarnessPlan, LabelsNameOnlyNonDefaultParams) {
  const WorkloadInfo info = make_workload("test_counter")->info();
  EXPECT_EQ(case_label(info, expand_axes(info, {}).front()), "");
  EXPECT_EQ(case_label(info, expand_axes(info, {{"size", {"4"}}}).front()), "size=4");
  const Plan p = build_plan("test_counter", {}, {{"mode", {"b"}}}, {}, "");
  EXPECT_EQ(p.cases.at(0).display_name(), "test_counter/mode=b");
}

// A value swept on the command line keeps its axis in the name, the default included: `-p size=2,4`
// names both cases by size, never the default one by the workload alone.
TEST(HarnessPlan, GivenAxesAreNamedEvenAtTheirDefault) {
  const WorkloadInfo info = make_workload("test_counter")->info();
  const Params defaults = expand_axes(info, {}).front();
  const std::string size_default = to_string(defaults.at("size"));
  const Plan p = build_plan("test_counter", {}, {{"size", {size_default, "7"}}}, {}, "");
  ASSERT_EQ(p.cases.size(), 2u);
  EXPECT_EQ(p.cases[0].display_name(), "test_counter/size=" + size_default);
  EXPECT_EQ(p.cases[1].display_name(), "test_counter/size=7");
  EXPECT_EQ(case_label(info, defaults, {"size"}), "size=" + size_default);
}

TEST(HarnessSuite, PlaceholdersExpand) {
  EXPECT_EQ(expand_placeholders("${source_dir}/x"), test::source_dir().string() + "/x");
  EXPECT_EQ(expand_placeholders("plain"), "plain");
}

// A suite's expected_s was measured with its own sample count: --repetitions N scales it by N over that
// count (the nightly always passes --repetitions), other runner options void it, and so does -p.
TEST(HarnessPlan, ExpectedSecondsScaleWithRepetitionsAndDropForOtherRunnerOptions) {
  test::TempDir dir;
  const auto suite = dir / "timed.json";  // test_counter takes 3 samples at least by default
  test::write_file(suite, R"({"name": "timed", "cases": [{"workload": "test_counter", "expected_s": 6}]})");
  const auto expected = [&](const AxisOverrides& axes, const RunnerOverrides& runner) {
    return build_plan(suite.string(), {}, axes, runner, "").cases.at(0).expected_s;
  };
  EXPECT_DOUBLE_EQ(expected({}, {}), 6);
  RunnerOverrides reps;
  reps.set_repetitions(5);
  EXPECT_DOUBLE_EQ(expected({}, reps), 10);
  reps.timeout_s = 60;  // a timeout only bounds the case
  EXPECT_DOUBLE_EQ(expected({}, reps), 10);
  RunnerOverrides warmup;
  warmup.warmup = 4;
  EXPECT_EQ(expected({}, warmup), -1);
  EXPECT_EQ(expected({{"size", {"7"}}}, reps), -1);
}

// An axis that applies only with another's value (chunks with overlap=chunked, a codec's own knobs) does not
// multiply the cases where it does not apply: one case for those, named without it.
TEST(HarnessPlan, AnAxisThatDoesNotApplyMakesOneCaseNamedWithoutIt) {
  const auto names = [](const Plan& plan) {
    std::vector<std::string> out;
    for (const auto& c : plan.cases) out.push_back(c.display_name());
    return out;
  };
  const Plan overlap = build_plan("moe_train.layer", {}, {{"overlap", {"none", "chunked"}}, {"chunks", {"2", "4"}}}, {}, "");
  EXPECT_EQ(names(overlap), (std::vector<std::string>{"moe_train.layer/overlap=none", "moe_train.layer/chunks=2,overlap=chunked",
                                                      "moe_train.layer/chunks=4,overlap=chunked"}));
  EXPECT_EQ(std::get<int64_t>(overlap.cases[0].params.at("chunks")), 1);  // its default where it does not apply
  const Plan codecs = build_plan("compress.codec", {}, {{"codec", {"zstd", "lz4"}}, {"level", {"1", "3"}}}, {}, "");
  EXPECT_EQ(names(codecs), (std::vector<std::string>{"compress.codec/codec=zstd,level=1", "compress.codec/codec=zstd,level=3",
                                                     "compress.codec/codec=lz4"}));
  EXPECT_TRUE(overlap.warnings.empty()) << "chunks applies to two of the cases";
}

TEST(HarnessPlan, AValueForAnAxisThatAppliesToNoCaseIsWarnedAbout) {
  const Plan fp32 = build_plan("moe_train.lm", {}, {{"accumulate", {"limited"}}}, {}, "");
  ASSERT_EQ(fp32.cases.size(), 1u);
  ASSERT_EQ(fp32.warnings.size(), 1u);
  EXPECT_THAT(fp32.warnings[0], testing::StartsWith("-p accumulate applies only where precision is fp8-delayed"));
  EXPECT_THAT(fp32.warnings[0], testing::HasSubstr("its value is not used"));
  const Plan sweep = build_plan("moe_train.lm", {}, {{"accumulate", {"limited"}}, {"precision", {"fp32", "nvfp4"}}}, {}, "");
  EXPECT_EQ(sweep.cases.size(), 2u);
  EXPECT_TRUE(sweep.warnings.empty()) << "accumulate applies to the nvfp4 case";
  const Plan two = build_plan("moe_train.lm", {}, {{"amax_history", {"16"}}, {"accumulate", {"promoted"}}, {"precision", {"mxfp8"}}},
                              {}, "");
  ASSERT_EQ(two.warnings.size(), 1u) << "accumulate applies; amax_history (fp8-delayed only) does not";
  EXPECT_THAT(two.warnings[0], testing::StartsWith("-p amax_history applies only where precision is fp8-delayed;"));
  // The filter leaves only the case where it does not apply; the default value given loses nothing.
  EXPECT_EQ(build_plan("moe_train.lm", {}, {{"accumulate", {"limited"}}, {"precision", {"fp32", "nvfp4"}}}, {}, "precision=fp32")
                .warnings.size(), 1u);
  EXPECT_TRUE(build_plan("moe_train.lm", {}, {{"accumulate", {"fp32"}}}, {}, "").warnings.empty());
}

}  // namespace
}  // namespace mlsb
