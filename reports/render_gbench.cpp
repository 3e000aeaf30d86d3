// Google-Benchmark-compatible JSON, readable by Google Benchmark's tools/compare.py.
// Mapping (also in REPORT_SCHEMA.md):
//  - one benchmark family per ok case with samples, named by the case's display name ("<workload>/<label>",
//    see reports/case_names.hpp), which compare.py matches between two files;
//  - the timed metric: the primary metric when its unit is a time (ns, us, ms, s), else the case's first
//    time metric, else the primary metric as is (then "label" says so: compare.py treats real_time as
//    lower-is-better, so its verdict reads backwards for a higher-is-better metric);
//  - one run_type "iteration" entry per sample (iterations 1, repetition_index i) with
//    real_time = cpu_time = that sample, so compare.py's U test sees every sample; then, when there are
//    2+ samples, "aggregate" entries mean, median, stddev and cv as Google Benchmark writes them;
//  - every metric is also a counter (the sample's value, or the aggregate of the metric);
//  - failed, skipped and timed-out cases are left out: compare.py cannot represent them.
#include <array>
#include <map>

#include "util/json_parse.hpp"
#include "reports/case_names.hpp"
#include "reports/detail/renderers.hpp"
#include "reports/detail/report_text.hpp"

namespace mlsb::reports::detail {
namespace {

using ojson = nlohmann::ordered_json;

constexpr std::array<const char*, 17> kReserved = {
    "name",       "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
    "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit",
    "aggregate_name", "aggregate_unit", "label", "error_occurred", "error_message"};

std::string counter_name(const std::string& metric) {
  for (const char* r : kReserved)
    if (metric == r) return "metric:" + metric;
  return metric;
}

// Google Benchmark's time_unit for a metric unit, or "" when the unit is not a time.
std::string gbench_unit(const std::string& unit) {
  if (unit == "ns" || unit == "ms" || unit == "s") return unit;
  if (unit == "us" || unit == "\xC2\xB5s") return "us";
  return "";
}

std::string unit_of(const CaseRecord& c, const std::string& metric) {
  const SummaryRow* s = find_summary(c, metric);
  return s ? s->unit : "";
}

std::string timed_metric(const CaseRecord& c) {
  if (!gbench_unit(unit_of(c, c.primary_metric)).empty() && c.samples.count(c.primary_metric))
    return c.primary_metric;
  for (const auto& s : c.summaries)
    if (!gbench_unit(s.unit).empty() && c.samples.count(s.metric)) return s.metric;
  return c.samples.count(c.primary_metric) ? c.primary_metric : "";
}

double stat(const Summary& s, const std::string& aggregate) {
  if (aggregate == "mean") return s.mean;
  if (aggregate == "median") return s.median;
  if (aggregate == "stddev") return s.stddev;
  return s.rel_stddev;  // cv
}

void add_case(ojson& benchmarks, const CaseRecord& c, const std::string& name, int family) {
  const std::string metric = timed_metric(c);
  if (metric.empty()) return;
  const auto& values = c.samples.at(metric);
  std::string unit = gbench_unit(unit_of(c, metric));
  std::string label;
  if (unit.empty()) {
    unit = "s";
    label = "real_time carries " + metric + " [" + unit_of(c, metric) + "], not a time";
  }
  const auto reps = static_cast<int64_t>(values.size());
  const auto entry = [&](const std::string& entry_name, const std::string& run_type) {
    return ojson{{"name", entry_name}, {"family_index", family}, {"per_family_instance_index", 0},
                 {"run_name", name},   {"run_type", run_type},   {"repetitions", reps}};
  };
  for (int64_t i = 0; i < reps; ++i) {
    ojson e = entry(name, "iteration");
    e["repetition_index"] = i;
    e["threads"] = 1;
    e["iterations"] = 1;
    e["real_time"] = json_number(values[static_cast<size_t>(i)]);
    e["cpu_time"] = e["real_time"];
    e["time_unit"] = unit;
    for (const auto& [m, vs] : c.samples)
      if (static_cast<size_t>(i) < vs.size()) e[counter_name(m)] = json_number(vs[static_cast<size_t>(i)]);
    if (!label.empty()) e["label"] = label;
    benchmarks.push_back(std::move(e));
  }
  if (reps < 2) return;
  const SummaryRow* stored = find_summary(c, metric);
  const Summary timed = stored && stored->stats.n == reps ? stored->stats : summarize(values);
  for (const std::string aggregate : {"mean", "median", "stddev", "cv"}) {
    ojson e = entry(name + "_" + aggregate, "aggregate");
    e["threads"] = 1;
    e["aggregate_name"] = aggregate;
    e["aggregate_unit"] = aggregate == "cv" ? "percentage" : "time";
    e["iterations"] = reps;
    e["real_time"] = json_number(stat(timed, aggregate));
    e["cpu_time"] = e["real_time"];
    e["time_unit"] = unit;
    for (const auto& s : c.summaries)
      if (c.samples.count(s.metric)) e[counter_name(s.metric)] = json_number(stat(s.stats, aggregate));
    if (!label.empty()) e["label"] = label;
    benchmarks.push_back(std::move(e));
  }
}

// The scalar at `pointer` in the environment JSON (keys as harness/environment.cpp captures them), else null.
ojson env_value(const nlohmann::json& env, const char* pointer) {
  const nlohmann::json::json_pointer ptr(pointer);
  if (env.is_object() && env.contains(ptr) && env.at(ptr).is_primitive()) return ojson::parse(dump_json(env.at(ptr)));
  return nullptr;
}

}  // namespace

std::string render_gbench(const RunData& data) {
  const RunRecord& r = data.run;
  ojson context = {{"date", iso_time(r.started_at)},
                   {"host_name", env_value(r.env, "/host")},
                   {"executable", "mlsysbench"},
                   {"num_cpus", env_value(r.env, "/cores")},
                   // The build that measured the run (its recorded environment), not the one rendering it.
                   {"library_build_type", r.env.value("build_type", "") == "Debug" ? "debug" : "release"},
                   {"mlsysbench_run", r.uuid},
                   {"mlsysbench_suite", r.suite},
                   {"mlsysbench_git_sha", r.git_sha}};
  ojson benchmarks = ojson::array();
  const std::vector<std::string> names = case_display_names(data.cases);
  int family = 0;
  for (size_t i = 0; i < data.cases.size(); ++i)
    if (data.cases[i].status == CaseStatus::Ok) add_case(benchmarks, data.cases[i], names[i], family++);
  return dump_json(ojson{{"context", std::move(context)}, {"benchmarks", std::move(benchmarks)}}, 2) + "\n";
}

}  // namespace mlsb::reports::detail
