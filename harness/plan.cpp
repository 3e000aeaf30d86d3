#include "harness/plan.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>

#include "harness/alias.hpp"
#include "harness/registry.hpp"
#include "harness/suite.hpp"
#include "util/text.hpp"

namespace mlsb {
namespace {

std::vector<std::string> axis_list(const WorkloadInfo& info) {
  std::vector<std::string> names;
  for (const auto& a : info.axes) names.push_back(a.name);
  return names;
}

std::string axis_names(const WorkloadInfo& info) { return join(axis_list(info), ", "); }

bool is_suite_path(std::string_view target) {
  return target.size() > 5 && target.substr(target.size() - 5) == ".json";
}

}  // namespace

RunnerDefaults RunnerOverrides::apply(RunnerDefaults b) const {
  if (warmup) b.warmup = *warmup;
  if (min_samples) b.min_samples = *min_samples;
  if (max_samples) b.max_samples = *max_samples;
  if (min_time_s) b.min_time_s = *min_time_s;
  if (max_noise) b.max_noise = *max_noise;
  if (max_time_s) b.max_time_s = *max_time_s;
  if (timeout_s) b.timeout_s = *timeout_s;
  if (min_sample_s) b.min_sample_s = *min_sample_s;
  b.max_samples = std::max(b.max_samples, b.min_samples);
  return b;
}

RunnerOverrides RunnerOverrides::merged(const RunnerOverrides& o) const {
  RunnerOverrides r = *this;
  if (o.warmup) r.warmup = o.warmup;
  if (o.min_samples) r.min_samples = o.min_samples;
  if (o.max_samples) r.max_samples = o.max_samples;
  if (o.min_time_s) r.min_time_s = o.min_time_s;
  if (o.max_noise) r.max_noise = o.max_noise;
  if (o.max_time_s) r.max_time_s = o.max_time_s;
  if (o.timeout_s) r.timeout_s = o.timeout_s;
  if (o.min_sample_s) r.min_sample_s = o.min_sample_s;
  return r;
}

void RunnerOverrides::set_repetitions(int n) {
  min_samples = max_samples = n;
  max_time_s = INFINITY;
}

std::string CaseSpec::id() const { return workload + "/" + params_key(params); }

std::string CaseSpec::display_name() const { return label.empty() ? workload : workload + "/" + label; }

std::string case_label(const WorkloadInfo& info, const Params& p, const std::set<std::string>& given) {
  Params named;
  for (const auto& [name, value] : p) {
    const Axis* axis = info.find_axis(name);
    if (axis && !axis->applies(p)) continue;  // set to its default for this case: no part of its name
    if (!axis || given.count(name) || axis->defaults.size() != 1 || !(axis->defaults[0] == value))
      named[name] = value;
  }
  return params_key(named);
}

std::string canonical_path_value(const Axis& axis, const std::string& value) {
  namespace fs = std::filesystem;
  fs::path p(expand_placeholders(value));
  std::error_code ec;
  if (p.is_relative()) {
    const fs::path from_cwd = fs::absolute(p, ec);
    p = fs::exists(from_cwd, ec) ? from_cwd : fs::path(MLSB_SOURCE_DIR) / p;
  }
  if (!fs::exists(p, ec))
    throw std::invalid_argument("axis '" + axis.name + "': " + value + " does not exist");
  p = fs::weakly_canonical(p, ec);
  const std::pair<std::string, fs::path> roots[] = {
      {"${source_dir}", fs::weakly_canonical(MLSB_SOURCE_DIR, ec)},
      {"${shared_dir}", fs::weakly_canonical(expand_placeholders("${shared_dir}"), ec)}};
  for (const auto& [name, root] : roots) {
    const fs::path rel = p.lexically_relative(root);
    if (!root.empty() && !rel.empty() && *rel.begin() != "..") return name + "/" + rel.generic_string();
  }
  return p.string();
}

AxisOverrides parse_axis_overrides(const std::vector<std::string>& specs) {
  AxisOverrides out;
  for (const auto& spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("-p '" + spec + "': expected axis=value[,value...]");
    auto values = split(std::string_view(spec).substr(eq + 1), ',');
    if (std::any_of(values.begin(), values.end(), [](const auto& v) { return v.empty(); }))
      throw std::invalid_argument("-p '" + spec + "': empty value");
    auto& slot = out[spec.substr(0, eq)];
    slot.insert(slot.end(), values.begin(), values.end());
  }
  return out;
}

void validate_value(const Axis& axis, const Value& value) {
  if (axis.min || axis.max) {
    const double v = std::holds_alternative<int64_t>(value) ? static_cast<double>(std::get<int64_t>(value))
                     : std::holds_alternative<double>(value) ? std::get<double>(value)
                                                              : NAN;
    if (!(v >= axis.min.value_or(-INFINITY) && v <= axis.max.value_or(INFINITY))) {
      std::string range = axis.min && axis.max ? to_string(Value{*axis.min}) + " to " + to_string(Value{*axis.max})
                          : axis.min           ? ">= " + to_string(Value{*axis.min})
                                               : "<= " + to_string(Value{*axis.max});
      throw std::invalid_argument("axis '" + axis.name + "': " + to_string(value) + " is out of range (allowed: " +
                                  range + ")");
    }
  }
  if (axis.choices.empty() || axis.path) return;  // a path axis's choices are keywords, not a closed list
  const std::string text = to_string(value);
  if (std::find(axis.choices.begin(), axis.choices.end(), text) == axis.choices.end())
    throw std::invalid_argument("axis '" + axis.name + "': '" + text + "' is not allowed (allowed: " +
                                join(axis.choices, ", ") + ")" + did_you_mean(text, axis.choices));
}

std::vector<Params> expand_axes(const WorkloadInfo& info, const AxisOverrides& values) {
  for (const auto& [name, v] : values)
    if (!info.find_axis(name))
      throw std::invalid_argument("workload '" + info.name + "' has no axis '" + name + "' (axes: " +
                                  axis_names(info) + ")" + did_you_mean(name, axis_list(info)));
  std::vector<Params> cases{Params{}};
  for (const auto& axis : info.axes) {
    std::vector<Value> vals;
    if (auto it = values.find(axis.name); it != values.end()) {
      for (const auto& text : it->second)
        for (auto& v : parse_values(axis.type, text, axis.name)) vals.push_back(std::move(v));
    } else {
      vals = axis.defaults;
    }
    if (vals.empty())
      throw std::invalid_argument("workload '" + info.name + "': axis '" + axis.name + "' has no value");
    for (const auto& v : vals) validate_value(axis, v);
    std::vector<Params> next;
    next.reserve(cases.size() * vals.size());
    for (const auto& c : cases)
      for (const auto& v : vals) {
        Params p = c;
        p[axis.name] = v;
        next.push_back(std::move(p));
      }
    cases = std::move(next);
  }
  // An axis that does not apply to a case takes its default there; the cases that then coincide are one.
  std::vector<Params> out;
  std::set<std::string> keys;
  for (auto& p : cases) {
    for (const auto& axis : info.axes)
      if (!axis.applies(p)) p[axis.name] = axis.defaults.front();
    if (keys.insert(params_key(p)).second) out.push_back(std::move(p));
  }
  return out;
}

void Plan::set_measure(const std::string& m) {
  for (auto& c : cases) c.measure = m;
}

size_t Plan::counted() const {
  return static_cast<size_t>(
      std::count_if(cases.begin(), cases.end(), [](const CaseSpec& c) { return c.measure == "instructions"; }));
}

namespace {

// A -p axis that applies only under another axis's values (Axis::applies_if) and applies to none of the plan's
// cases: a warning, unless every value given is the axis's default (nothing is lost then).
void warn_unapplied(Plan& plan, const AxisOverrides& overrides) {
  std::map<std::string, WorkloadInfo> infos;
  for (const auto& [axis, vals] : overrides) {
    std::string condition;
    bool applied = false;
    for (const auto& c : plan.cases) {
      auto it = infos.find(c.workload);
      if (it == infos.end()) it = infos.emplace(c.workload, make_workload(c.workload)->info()).first;
      const Axis* a = it->second.find_axis(axis);
      if (!a || a->applies_if.empty()) continue;
      bool defaults = true;
      for (const auto& text : vals)
        for (const auto& v : parse_values(a->type, text, axis))
          defaults = defaults && to_string(v) == to_string(a->defaults.front());
      if (defaults) continue;
      if (a->applies(c.params)) applied = true;
      condition = a->applies_if + " is " + join(a->applies_if_values, ", ");
    }
    if (!applied && !condition.empty())
      plan.warnings.push_back("-p " + axis + " applies only where " + condition +
                              "; no case here has that, so its value is not used");
  }
}

}  // namespace

Plan build_plan(std::string_view target, const std::vector<std::filesystem::path>& suite_dirs,
                const AxisOverrides& overrides, const RunnerOverrides& runner, const std::string& filter) {
  struct Entry {
    std::string workload;
    AxisOverrides params;
    RunnerOverrides runner;
    double expected_s = -1;
    std::string measure = "time";
  };
  std::vector<Entry> entries;
  Plan plan;
  const auto known = runnable_names();
  std::optional<std::filesystem::path> suite_file;
  if (is_suite_path(target)) {
    suite_file = std::filesystem::path(target);
  } else if (std::find(known.begin(), known.end(), target) == known.end()) {
    for (const auto& f : find_suites(suite_dirs))
      if (f.stem() == target) suite_file = f;
    if (!suite_file) {
      std::vector<std::string> suites;
      for (const auto& f : find_suites(suite_dirs)) suites.push_back(f.stem().string());
      std::vector<std::string> names = known;
      names.insert(names.end(), suites.begin(), suites.end());
      throw std::invalid_argument("'" + std::string(target) + "' is neither a workload (" + join(known, ", ") +
                                  ") nor a suite (" + join(suites, ", ") + ") nor a suite file (*.json)" +
                                  did_you_mean(target, names));
    }
  }
  if (suite_file) {
    Suite suite = load_suite(*suite_file);
    plan.suite = suite.name;
    // The suite's times were for its own runner settings: command-line ones void them, except a sample count
    // alone (--repetitions, and a timeout that only bounds it), by which they are scaled below.
    const bool own_runner = !runner.warmup && !runner.min_samples && !runner.max_samples && !runner.min_time_s &&
                            !runner.max_noise && !runner.max_time_s && !runner.min_sample_s;
    const bool repetitions_only = !runner.warmup && runner.min_samples && runner.max_samples == runner.min_samples &&
                                  !runner.min_time_s && !runner.max_noise && !runner.min_sample_s && runner.max_time_s &&
                                  std::isinf(*runner.max_time_s);
    for (auto& e : suite.entries)
      entries.push_back({e.workload, e.params, e.runner, own_runner || repetitions_only ? e.expected_s : -1,
                         e.measure.empty() ? suite.measure : e.measure});
  } else {
    plan.suite = std::string(target);
    // An alias takes its mode axis and the axes of the benchmarks it picks from the command line.
    for (auto& e : resolve_alias(plan.suite, find_alias(target) ? overrides : AxisOverrides{}))
      entries.push_back({std::move(e.workload), std::move(e.params), {}, -1, "time"});
  }

  std::set<std::string> used;
  if (!suite_file && find_alias(target))  // resolve_alias placed every override or threw
    for (const auto& [axis, vals] : overrides) used.insert(axis);
  std::string all_axes;
  std::vector<std::string> axis_pool;  // every axis of the entries, for "did you mean"
  for (auto& e : entries) {
    const auto workload = make_workload(e.workload);
    const auto info = workload->info();
    all_axes += (all_axes.empty() ? "" : "; ") + e.workload + ": " + axis_names(info);
    for (auto& a : axis_list(info)) axis_pool.push_back(std::move(a));
    for (const auto& [axis, vals] : overrides)
      if (info.find_axis(axis)) {
        e.params[axis] = vals;
        used.insert(axis);
        e.expected_s = -1;  // the suite's time was for other cases
      }
    std::set<std::string> given;  // axes the suite entry or the command line set: always in the name
    for (const auto& [axis, vals] : e.params) given.insert(axis);
    const RunnerOverrides over = e.runner.merged(runner);
    // --repetitions N: the suite's time, taken with its own sample count, scaled to N samples.
    if (e.expected_s > 0 && runner.min_samples)
      e.expected_s *= static_cast<double>(*runner.min_samples) / std::max(1, e.runner.apply(info.runner).min_samples);
    for (auto& p : expand_axes(info, e.params)) {
      const RunnerDefaults settings = over.apply(info.runner);
      for (const auto& axis : info.axes) {
        const std::string text = to_string(p.at(axis.name));
        if (axis.path && std::find(axis.choices.begin(), axis.choices.end(), text) == axis.choices.end())
          p[axis.name] = canonical_path_value(axis, text);
      }
      workload->check(p);
      std::string label = case_label(info, p, given);
      plan.cases.push_back({e.workload, std::move(p), settings, std::move(label), e.expected_s, e.measure});
    }
  }
  for (const auto& [axis, vals] : overrides)
    if (!used.count(axis))
      throw std::invalid_argument(entries.size() == 1 && !suite_file
                                      ? "workload '" + plan.suite + "' has no axis '" + axis + "' (axes: " +
                                            all_axes.substr(plan.suite.size() + 2) + ")" + did_you_mean(axis, axis_pool)
                                      : "-p " + axis + ": no workload in suite '" + plan.suite + "' has an axis '" +
                                            axis + "' (" + all_axes + ")" + did_you_mean(axis, axis_pool));
  if (!filter.empty()) {
    std::regex re;
    try {
      re = std::regex(filter);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("--filter '" + filter + "': invalid regular expression (" + e.what() + ")");
    }
    std::erase_if(plan.cases, [&](const CaseSpec& c) { return !std::regex_search(c.id(), re); });
  }
  warn_unapplied(plan, overrides);
  return plan;
}

}  // namespace mlsb
