#include "reports/import_gbench.hpp"

#include <cmath>
#include <map>
#include <set>

#include "util/json_file.hpp"
#include "harness/value.hpp"

namespace mlsb::reports {
namespace {

constexpr std::uintmax_t kMaxGbenchBytes = std::uintmax_t{512} << 20;

// Milliseconds per unit of Google Benchmark's time_unit.
double ms_per(const std::string& unit, const std::string& where) {
  if (unit == "ns") return 1e-6;
  if (unit == "us") return 1e-3;
  if (unit == "ms") return 1;
  if (unit == "s") return 1e3;
  throw std::invalid_argument(where + ": time_unit '" + unit + "' is not ns, us, ms or s");
}

// Fields of an entry that are not user counters.
const std::set<std::string>& reserved_fields() {
  static const std::set<std::string> r = {
      "name", "family_index", "per_family_instance_index", "run_name", "run_type", "repetitions",
      "repetition_index", "threads", "iterations", "real_time", "cpu_time", "time_unit", "aggregate_name",
      "aggregate_unit", "label", "error_occurred", "error_message", "skipped", "skip_message",
      "bytes_per_second", "items_per_second", "big_o", "rms"};
  return r;
}

struct Metrics {
  std::map<std::string, std::vector<double>> samples;
  std::map<std::string, std::pair<std::string, Better>> declared;  // metric -> unit, better
  void add(const std::string& metric, double v, const std::string& unit, Better better) {
    if (!std::isfinite(v)) return;
    samples[metric].push_back(v);
    declared.emplace(metric, std::make_pair(unit, better));
  }
};

}  // namespace

RunData import_gbench(const std::filesystem::path& file) {
  const nlohmann::json doc = read_json_file(file, "Google Benchmark JSON", kMaxGbenchBytes);
  const std::string f = file.string();
  if (!doc.is_object() || !doc.contains("benchmarks") || !doc["benchmarks"].is_array())
    throw std::invalid_argument(f + ": not Google Benchmark JSON (no \"benchmarks\" array)");
  RunData data;
  const nlohmann::json context = doc.value("context", nlohmann::json::object());
  const std::string exe = context.is_object() ? context.value("executable", std::string("unknown")) : "unknown";
  data.run.suite = "gbench:" + std::filesystem::path(exe).filename().string();
  data.run.env = {{"gbench_context", context}};
  if (context.is_object() && context.contains("host_name")) data.run.env["host"] = context["host_name"];
  data.run.argv = "import gbench " + f;

  std::vector<std::string> order;
  std::map<std::string, CaseRecord> cases;
  std::map<std::string, Metrics> metrics;
  size_t index = 0;
  for (const auto& e : doc["benchmarks"]) {
    const std::string where = f + ": benchmarks[" + std::to_string(index++) + "]";
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string())
      throw std::invalid_argument(where + ": an entry needs a string \"name\"");
    if (e.value("run_type", std::string("iteration")) == "aggregate") continue;
    const std::string name = e.contains("run_name") && e["run_name"].is_string() ? e["run_name"].get<std::string>()
                                                                                 : e["name"].get<std::string>();
    auto [it, fresh] = cases.try_emplace(name);
    CaseRecord& c = it->second;
    if (fresh) {
      order.push_back(name);
      c.workload = "gbench";
      c.params = {{"benchmark", name}};
      c.params_key = params_key(Params{{"benchmark", Value(name)}});
      c.label = name;
      c.status = CaseStatus::Ok;
      c.primary_metric = "real_time_ms";
    }
    if (e.value("error_occurred", false)) {
      c.status = CaseStatus::Failed;
      c.reason = e.value("error_message", std::string("error_occurred"));
      continue;
    }
    if (e.contains("skipped") && !(e["skipped"].is_boolean() && !e["skipped"].get<bool>()) &&
        !(e["skipped"].is_number() && e["skipped"].get<double>() == 0)) {
      c.status = CaseStatus::Skipped;
      c.reason = e.value("skip_message", std::string("skipped"));
      continue;
    }
    auto num = [&](const char* key) -> double {
      if (!e.contains(key)) return NAN;
      if (!e[key].is_number()) throw std::invalid_argument(where + ": \"" + key + "\" is not a number");
      return e[key].get<double>();
    };
    const double scale = ms_per(e.value("time_unit", std::string("ns")), where);
    Metrics& m = metrics[name];
    m.add("real_time_ms", num("real_time") * scale, "ms", Better::Lower);
    m.add("cpu_time_ms", num("cpu_time") * scale, "ms", Better::Lower);
    m.add("gbps", num("bytes_per_second") / 1e9, "GB/s", Better::Higher);
    m.add("items_per_second", num("items_per_second"), "items/s", Better::Higher);
    for (const auto& [key, value] : e.items())
      if (!reserved_fields().count(key) && value.is_number()) m.add(key, value.get<double>(), "counter", Better::Higher);
  }
  for (const auto& name : order) {
    CaseRecord c = std::move(cases[name]);
    const Metrics& m = metrics[name];
    if (c.status == CaseStatus::Ok) {
      if (!m.samples.count("real_time_ms")) {
        c.status = CaseStatus::Failed;
        c.reason = "no iteration entry with a real_time";
      } else {
        c.samples = m.samples;
        for (const auto& [metric, values] : m.samples) {
          const auto& [unit, better] = m.declared.at(metric);
          c.summaries.push_back({metric, unit, better, summarize(values)});
        }
      }
    }
    data.cases.push_back(std::move(c));
  }
  if (data.cases.empty()) throw std::invalid_argument(f + ": no benchmark entries to import");
  return data;
}

}  // namespace mlsb::reports
