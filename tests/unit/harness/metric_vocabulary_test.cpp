// The metric vocabulary of every registered workload: the primary metric is declared; every unit comes from
// the documented set below; a name's suffix agrees with its unit (`_ms` in ms, `_gbps` in GB/s, `_per_s` a
// rate, ...) and a time or rate points the right way; axis and metric names are unique and carry help; a
// metric name means the same unit and direction in every benchmark of a family. The checks themselves are
// tested on hand-made WorkloadInfos, so a workload declaring `foo_ms` in seconds fails here.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "harness/alias.hpp"
#include "harness/registry.hpp"

namespace mlsb {
namespace {

using ::testing::HasSubstr;

// Every unit a metric may declare, and what it means: exactly the units the workloads use today (a test
// keeps it so). A new unit is added here, with its meaning, on purpose; seconds would be "s".
const std::map<std::string, std::string>& known_units() {
  static const std::map<std::string, std::string> units = {
      {"ms", "milliseconds"},
      {"GB/s", "10^9 bytes per second"},
      {"TFLOP/s", "10^12 floating-point operations per second"},
      {"tokens/s", "tokens per second"},
      {"tasks/s", "task trials per second"},
      {"lookups/s", "cache lookups per second"},
      {"ratio", "a dimensionless quotient or share (1 = 100%)"},
      {"points", "percentage points (100 x a difference of shares)"},
      {"bits", "bits (per element where the name says so)"},
      {"bytes", "bytes"},
      {"MB", "10^6 bytes"},
      {"GB", "10^9 bytes"},
      {"dB", "decibels"},
      {"abs", "an absolute difference in the data's own units"},
      {"count", "a number of things"},
      {"tokens", "LLM tokens"},
      {"loss", "a training objective's value, in its own units"},
      {"nats/byte", "cross-entropy per byte of text, natural log"},
      {"USD", "US dollars"},
  };
  return units;
}

// What the name's suffix says the unit is; "" when the suffix says nothing. `X_per_s` must be "X/s" with X
// the name's word before `_per_s` (tokens_per_s in tokens/s).
std::string unit_from_name(const std::string& name) {
  if (name.ends_with("_per_s")) {
    const std::string stem = name.substr(0, name.size() - 6);
    return stem.substr(stem.rfind('_') == std::string::npos ? 0 : stem.rfind('_') + 1) + "/s";
  }
  static const std::vector<std::pair<std::string, std::string>> suffixes = {
      {"_ms", "ms"},       {"_s", "s"},        {"_gbps", "GB/s"},      {"_tflops", "TFLOP/s"},
      {"_mb", "MB"},       {"_gb", "GB"},      {"_bytes", "bytes"},    {"_db", "dB"},
      {"_ratio", "ratio"}, {"_rate", "ratio"}, {"_fraction", "ratio"}, {"_speedup", "ratio"},
  };
  for (const auto& [suffix, unit] : suffixes)
    if (name.ends_with(suffix)) return unit;
  if (name == "ratio" || name == "speedup") return "ratio";
  return "";
}

// Metrics whose name breaks a suffix rule on purpose (name -> why). None today: keep it so.
const std::map<std::string, std::string> kSuffixExceptions = {};

// Everything wrong with one workload's declared vocabulary; empty when nothing is.
std::vector<std::string> vocabulary_problems(const WorkloadInfo& w) {
  std::vector<std::string> out;
  const auto problem = [&](const std::string& what) { out.push_back(w.name + ": " + what); };
  if (w.metrics.empty()) problem("declares no metric");
  if (!w.find_metric(w.primary_metric)) problem("primary metric '" + w.primary_metric + "' is not declared");
  std::set<std::string> metric_names, axis_names;
  for (const Metric& m : w.metrics) {
    if (!metric_names.insert(m.name).second) problem("metric '" + m.name + "' declared twice");
    if (m.help.empty()) problem("metric '" + m.name + "' has no help");
    if (!known_units().contains(m.unit))
      problem("metric '" + m.name + "' has unit '" + m.unit + "', not one of the documented units");
    if (const std::string unit = unit_from_name(m.name);
        !unit.empty() && unit != m.unit && !kSuffixExceptions.contains(m.name))
      problem("metric '" + m.name + "' has unit '" + m.unit + "' where its name says '" + unit + "'");
    if ((m.unit == "ms" || m.unit == "s") && m.better != Better::Lower)
      problem("metric '" + m.name + "' is a time (" + m.unit + ") where higher is better");
    if (m.unit.ends_with("/s") && m.better != Better::Higher)
      problem("metric '" + m.name + "' is a rate (" + m.unit + ") where lower is better");
  }
  for (const Axis& a : w.axes) {
    if (!axis_names.insert(a.name).second) problem("axis '" + a.name + "' declared twice");
    if (a.help.empty()) problem("axis '" + a.name + "' has no help");
  }
  return out;
}

// Metric names that mean different things (unit or direction) in two workloads of one family
// (`across_families`: of any two workloads).
std::vector<std::string> meaning_conflicts(const std::vector<WorkloadInfo>& workloads, bool across_families) {
  std::vector<std::string> out;
  std::map<std::pair<std::string, std::string>, std::pair<std::string, const Metric*>> first;  // (group, metric)
  for (const WorkloadInfo& w : workloads)
    for (const Metric& m : w.metrics) {
      const std::string group = across_families ? "" : workload_family(w.name);
      const auto [it, fresh] = first.try_emplace({group, m.name}, w.name, &m);
      const Metric& seen = *it->second.second;
      if (!fresh && (seen.unit != m.unit || seen.better != m.better))
        out.push_back(m.name + ": " + it->second.first + " [" + seen.unit + ", " + std::string(to_string(seen.better)) +
                      "] vs " + w.name + " [" + m.unit + ", " + std::string(to_string(m.better)) + "]");
    }
  return out;
}

// The project's workloads: every registered one except the test_* workloads this test binary registers to
// exercise the runner.
std::vector<WorkloadInfo> project_workloads() {
  std::vector<WorkloadInfo> out;
  for (const auto& name : workload_names())
    if (!name.starts_with("test_")) out.push_back(make_workload(name)->info());
  return out;
}

WorkloadInfo well_formed() {
  WorkloadInfo w;
  w.name = "fam.bench";
  w.axes.emplace_back();
  w.axes[0].name = "size";
  w.axes[0].help = "elements";
  w.metrics = {{"time_ms", "ms", Better::Lower, "one call"}, {"tokens_per_s", "tokens/s", Better::Higher, "rate"}};
  w.primary_metric = "time_ms";
  return w;
}

TEST(HarnessMetricVocabulary, EveryProjectWorkloadIsWellFormed) {
  const std::vector<WorkloadInfo> workloads = project_workloads();
  std::set<std::string> families;
  for (const WorkloadInfo& w : workloads) {
    families.insert(workload_family(w.name));
    EXPECT_THAT(vocabulary_problems(w), ::testing::IsEmpty());
  }
  // Every family is here (a workload that stops registering would otherwise go unchecked).
  EXPECT_EQ(families, (std::set<std::string>{"compress", "moe_offload", "moe_train", "toolbench"}));
  EXPECT_GE(workloads.size(), 7u);
}

TEST(HarnessMetricVocabulary, EveryDocumentedUnitIsInUse) {
  std::set<std::string> used;
  for (const WorkloadInfo& w : project_workloads())
    for (const Metric& m : w.metrics) used.insert(m.unit);
  for (const auto& [unit, meaning] : known_units()) EXPECT_TRUE(used.contains(unit)) << unit << " (" << meaning << ")";
}

TEST(HarnessMetricVocabulary, AMetricNameMeansOneThingWithinAFamily) {
  EXPECT_THAT(meaning_conflicts(project_workloads(), /*across_families=*/false), ::testing::IsEmpty());
}

// The problems of well_formed() after `edit`, or of it with one more metric, one a line ("" when none).
std::string problems_of(const std::function<void(WorkloadInfo&)>& edit) {
  WorkloadInfo w = well_formed();
  edit(w);
  std::string out;
  for (const std::string& p : vocabulary_problems(w)) out += p + "\n";
  return out;
}
std::string problems_of(const Metric& extra) {
  return problems_of([&](WorkloadInfo& w) { w.metrics.push_back(extra); });
}

TEST(HarnessMetricVocabulary, TheChecksCatchEachMistake) {
  EXPECT_EQ(problems_of([](WorkloadInfo&) {}), "");
  EXPECT_THAT(problems_of({"foo_ms", "s", Better::Lower, "x"}),
              HasSubstr("'foo_ms' has unit 's' where its name says 'ms'"));
  EXPECT_THAT(problems_of({"wait_s", "ms", Better::Lower, "x"}), HasSubstr("where its name says 's'"));
  EXPECT_THAT(problems_of({"h2d_gbps", "MB/s", Better::Higher, "x"}), HasSubstr("not one of the documented units"));
  EXPECT_THAT(problems_of({"peak_mb", "GB", Better::Lower, "x"}), HasSubstr("where its name says 'MB'"));
  EXPECT_THAT(problems_of({"hit_rate", "count", Better::Higher, "x"}), HasSubstr("where its name says 'ratio'"));
  EXPECT_THAT(problems_of([](WorkloadInfo& w) { w.metrics[1].unit = "tasks/s"; }),
              HasSubstr("where its name says 'tokens/s'"));
  EXPECT_THAT(problems_of([](WorkloadInfo& w) { w.metrics[0].better = Better::Higher; }), HasSubstr("is a time"));
  EXPECT_THAT(problems_of([](WorkloadInfo& w) { w.metrics[1].better = Better::Lower; }), HasSubstr("is a rate"));
  EXPECT_THAT(problems_of([](WorkloadInfo& w) { w.primary_metric = "time"; }),
              HasSubstr("primary metric 'time' is not declared"));
  EXPECT_THAT(problems_of([](WorkloadInfo& w) { w.metrics.push_back(w.metrics[0]); }),
              HasSubstr("'time_ms' declared twice"));
  EXPECT_THAT(problems_of([](WorkloadInfo& w) { w.axes.push_back(w.axes[0]); }), HasSubstr("'size' declared twice"));
  EXPECT_THAT(problems_of([](WorkloadInfo& w) { w.axes[0].help = ""; }), HasSubstr("axis 'size' has no help"));
  EXPECT_THAT(problems_of([](WorkloadInfo& w) { w.metrics[0].help = ""; }), HasSubstr("metric 'time_ms' has no help"));
}

TEST(HarnessMetricVocabulary, ConflictsAreFoundWithinAFamilyOnly) {
  WorkloadInfo a = well_formed(), b = well_formed(), other = well_formed();
  b.name = "fam.other";
  b.metrics[0].better = Better::Higher;
  other.name = "elsewhere";
  other.metrics[1].unit = "tasks/s";
  EXPECT_THAT(meaning_conflicts({a, b}, false), ::testing::ElementsAre(HasSubstr("time_ms: fam.bench [ms, lower]")));
  EXPECT_THAT(meaning_conflicts({a, other}, false), ::testing::IsEmpty());
  EXPECT_THAT(meaning_conflicts({a, other}, true), ::testing::ElementsAre(HasSubstr("tokens_per_s")));
}

}  // namespace
}  // namespace mlsb
