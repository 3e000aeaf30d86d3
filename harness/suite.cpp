#include "harness/suite.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "harness/alias.hpp"
#include "util/json_file.hpp"
#include "harness/registry.hpp"
#include "util/text.hpp"

namespace mlsb {
namespace {

using nlohmann::json;

struct SuiteParser {
  std::string file;

  [[noreturn]] void error(const std::string& where, const std::string& what) const {
    throw std::invalid_argument("suite " + file + ": " + where + ": " + what);
  }

  void only_keys(const json& obj, const std::string& where, const std::set<std::string>& allowed) const {
    if (!obj.is_object()) error(where.empty() ? "top level" : where, "expected an object");
    for (const auto& [k, v] : obj.items())
      if (!allowed.count(k)) {
        error(where.empty() ? k : where + "." + k,
              "unknown key (allowed: " + join({allowed.begin(), allowed.end()}, ", ") + ")");
      }
  }

  RunnerOverrides runner(const json& obj, const std::string& where) const {
    only_keys(obj, where,
              {"warmup", "min_samples", "max_samples", "min_time_s", "max_noise", "max_time_s", "timeout_s",
               "min_sample_s"});
    RunnerOverrides r;
    auto get_int = [&](const char* key, std::optional<int>& slot) {
      if (!obj.contains(key)) return;
      const auto& v = obj[key];
      if (!v.is_number_integer() || v.get<int64_t>() < 0) error(where + "." + key, "expected an integer >= 0");
      slot = v.get<int>();
    };
    auto get_num = [&](const char* key, std::optional<double>& slot) {
      if (!obj.contains(key)) return;
      const auto& v = obj[key];
      if (!v.is_number() || v.get<double>() < 0) error(where + "." + key, "expected a number >= 0");
      slot = v.get<double>();
    };
    get_int("warmup", r.warmup);
    get_int("min_samples", r.min_samples);
    get_int("max_samples", r.max_samples);
    get_num("min_time_s", r.min_time_s);
    get_num("max_noise", r.max_noise);
    get_num("max_time_s", r.max_time_s);
    get_num("timeout_s", r.timeout_s);
    get_num("min_sample_s", r.min_sample_s);
    return r;
  }

  std::string scalar_text(const json& v, const std::string& where) const {
    if (v.is_string()) return expand_placeholders(v.get<std::string>());
    if (v.is_number() || v.is_boolean()) return v.dump();
    error(where, "expected a string or number (or a list of them)");
  }

  /// A "measure" value: "time" or "instructions".
  std::string instrument(const json& m, const std::string& where) const {
    if (!m.is_string() || (m != "time" && m != "instructions"))
      error(where, "expected \"time\" or \"instructions\", got " + m.dump());
    return m.get<std::string>();
  }

  /// One entry of `cases`; an alias (a workload that became a family of benchmarks) gives one entry per
  /// benchmark its mode axis picks.
  std::vector<SuiteEntry> entries(const json& obj, const std::string& where) const {
    only_keys(obj, where, {"workload", "params", "runner", "expected_s", "measure"});
    if (!obj.contains("workload") || !obj["workload"].is_string()) error(where + ".workload", "expected a workload name");
    const std::string workload = obj["workload"].get<std::string>();
    AxisOverrides given;
    if (obj.contains("params")) {
      const auto& params = obj["params"];
      if (!params.is_object()) error(where + ".params", "expected an object of axis values");
      for (const auto& [axis_name, value] : params.items()) {
        const std::string at = where + ".params." + axis_name;
        std::vector<std::string> texts;
        if (value.is_array()) {
          if (value.empty()) error(at, "empty list of values");
          for (size_t i = 0; i < value.size(); ++i)
            texts.push_back(scalar_text(value[i], at + "[" + std::to_string(i) + "]"));
        } else {
          texts.push_back(scalar_text(value, at));
        }
        given[axis_name] = std::move(texts);
      }
    }
    if (const auto names = runnable_names(); std::find(names.begin(), names.end(), workload) == names.end())
      error(where + ".workload",
            "unknown workload '" + workload + "' (known: " + join(names, ", ") + ")" + did_you_mean(workload, names));
    std::vector<WorkloadEntry> resolved;
    try {
      resolved = resolve_alias(workload, given);
    } catch (const std::invalid_argument& ex) {
      error(where + ".params", ex.what());
    }
    RunnerOverrides runner_over;
    if (obj.contains("runner")) runner_over = runner(obj["runner"], where + ".runner");
    double expected_s = -1;
    if (obj.contains("expected_s")) {
      const json& v = obj["expected_s"];
      if (!v.is_number() || !(v.get<double>() >= 0)) error(where + ".expected_s", "expected a number of seconds >= 0");
      expected_s = v.get<double>();
    }
    const std::string measure = obj.contains("measure") ? instrument(obj["measure"], where + ".measure") : "";
    std::vector<SuiteEntry> out;
    for (auto& r : resolved) {
      const auto info = make_workload(r.workload)->info();
      for (const auto& [axis_name, texts] : r.params) {
        const std::string at = where + ".params." + axis_name;
        const Axis* axis = info.find_axis(axis_name);
        if (!axis) {
          std::vector<std::string> names;
          for (const auto& a : info.axes) names.push_back(a.name);
          error(at, "workload '" + r.workload + "' has no such axis (axes: " + join(names, ", ") + ")");
        }
        for (const auto& t : texts) {
          try {
            for (const auto& v : parse_values(axis->type, t, axis->name)) validate_value(*axis, v);
          } catch (const std::invalid_argument& ex) {
            error(at, ex.what());
          }
        }
      }
      out.push_back({std::move(r.workload), std::move(r.params), runner_over, expected_s, measure});
    }
    return out;
  }
};

}  // namespace

std::string expand_placeholders(const std::string& text) {
  const char* shared_env = std::getenv("MLSB_SHARED_DIR");
  const std::string source = MLSB_SOURCE_DIR;
  const std::string shared =
      shared_env ? shared_env : (std::filesystem::path(source).parent_path() / "shared").string();
  std::string out = text;
  for (const auto& [key, val] : {std::pair{std::string("${source_dir}"), source},
                                 std::pair{std::string("${shared_dir}"), shared}}) {
    for (size_t pos = out.find(key); pos != std::string::npos; pos = out.find(key, pos + val.size()))
      out.replace(pos, key.size(), val);
  }
  return out;
}

Suite load_suite(const std::filesystem::path& file) {
  SuiteParser p{file.string()};
  json doc;
  try {
    doc = read_json_file(file, "suite", kMaxConfigFileBytes);
  } catch (const JsonFileError& e) {
    throw std::invalid_argument(e.what());
  }
  p.only_keys(doc, "", {"name", "description", "runner", "measure", "cases"});
  Suite s;
  s.file = file;
  if (doc.contains("name") && !doc["name"].is_string()) p.error("name", "expected a string");
  s.name = doc.contains("name") ? doc["name"].get<std::string>() : file.stem().string();
  if (doc.contains("description")) {
    if (!doc["description"].is_string()) p.error("description", "expected a string");
    s.description = doc["description"].get<std::string>();
  }
  if (doc.contains("measure")) s.measure = p.instrument(doc["measure"], "measure");
  RunnerOverrides common;
  if (doc.contains("runner")) common = p.runner(doc["runner"], "runner");
  if (!doc.contains("cases") || !doc["cases"].is_array() || doc["cases"].empty())
    p.error("cases", "expected a non-empty list of {\"workload\", \"params\", \"runner\"} entries");
  for (size_t i = 0; i < doc["cases"].size(); ++i) {
    for (auto& e : p.entries(doc["cases"][i], "cases[" + std::to_string(i) + "]")) {
      e.runner = common.merged(e.runner);
      s.entries.push_back(std::move(e));
    }
  }
  return s;
}

std::vector<std::filesystem::path> find_suites(const std::vector<std::filesystem::path>& dirs) {
  std::vector<std::filesystem::path> files;
  for (const auto& d : dirs) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(d, ec))
      if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end(),
            [](const auto& a, const auto& b) { return a.filename() < b.filename(); });
  return files;
}

std::vector<std::filesystem::path> default_suite_dirs() {
  std::vector<std::filesystem::path> dirs;
  if (const char* env = std::getenv("MLSB_SUITES_DIR")) dirs.emplace_back(env);
  dirs.emplace_back(std::filesystem::path(MLSB_SOURCE_DIR) / "workloads" / "suites");
  return dirs;
}

}  // namespace mlsb
