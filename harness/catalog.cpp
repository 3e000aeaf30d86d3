#include "harness/catalog.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "harness/registry.hpp"
#include "harness/suite.hpp"
#include "harness/text.hpp"

namespace mlsb {

nlohmann::json catalog_json(const std::vector<std::filesystem::path>& suite_dirs) {
  nlohmann::json out;
  out["workloads"] = nlohmann::json::array();
  for (const auto& name : workload_names()) {
    const WorkloadInfo info = make_workload(name)->info();
    nlohmann::json w{{"name", info.name}, {"description", info.description}, {"primary_metric", info.primary_metric}};
    w["axes"] = nlohmann::json::array();
    for (const auto& a : info.axes) {
      nlohmann::json axis{{"name", a.name}, {"type", to_string(a.type)}, {"help", a.help}};
      axis["defaults"] = nlohmann::json::array();
      for (const auto& v : a.defaults) axis["defaults"].push_back(to_json(v));
      // A path axis's choices are keywords beside any path (`none`, `auto`), not a closed list.
      if (!a.choices.empty()) axis[a.path ? "keywords" : "choices"] = a.choices;
      axis["path"] = a.path;
      axis["data"] = a.data;  // defines the case's input (its seed), not the method
      w["axes"].push_back(axis);
    }
    w["metrics"] = nlohmann::json::array();
    for (const auto& m : info.metrics)
      w["metrics"].push_back({{"name", m.name}, {"unit", m.unit}, {"better", to_string(m.better)}, {"help", m.help}});
    w["examples"] = info.examples;
    out["workloads"].push_back(w);
  }
  out["suites"] = nlohmann::json::array();
  for (const auto& file : find_suites(suite_dirs)) {
    nlohmann::json s{{"name", file.stem().string()}, {"file", file.string()}};
    try {
      const Suite suite = load_suite(file);
      s["name"] = suite.name;
      s["description"] = suite.description;
      nlohmann::json cases = nlohmann::json::array();
      for (const auto& e : suite.entries) cases.push_back(e.workload);
      s["workloads"] = cases;
    } catch (const std::exception& e) {
      s["error"] = e.what();
    }
    out["suites"].push_back(s);
  }
  return out;
}

nlohmann::json workload_catalog(const nlohmann::json& catalog, const std::string& workload) {
  nlohmann::json out{{"workloads", nlohmann::json::array()}, {"suites", nlohmann::json::array()}};
  std::vector<std::string> names;
  for (const auto& w : catalog["workloads"]) {
    names.push_back(w["name"].get<std::string>());
    if (w["name"] == workload) out["workloads"].push_back(w);
  }
  if (out["workloads"].empty())
    throw std::invalid_argument("unknown workload '" + workload + "' (workloads: " + join(names, ", ") + ")" +
                                did_you_mean(workload, names));
  for (const auto& s : catalog["suites"])
    if (s.contains("workloads") && std::find(s["workloads"].begin(), s["workloads"].end(), workload) != s["workloads"].end())
      out["suites"].push_back(s);
  return out;
}

std::string catalog_text(const nlohmann::json& c) {
  std::ostringstream o;
  o << "Workloads:\n";
  for (const auto& w : c["workloads"]) {
    o << "\n  " << w["name"].get<std::string>() << " — " << w["description"].get<std::string>() << "\n";
    o << "    axes:\n";
    for (const auto& a : w["axes"]) {
      std::string defaults;
      for (const auto& d : a["defaults"]) defaults += (defaults.empty() ? "" : ",") + (d.is_string() ? d.get<std::string>() : d.dump());
      o << "      " << a["name"].get<std::string>() << " (" << a["type"].get<std::string>() << ", default "
        << defaults << (a.value("data", false) ? ", data" : "") << ")";
      if (a.contains("choices")) o << " [" << join(a["choices"].get<std::vector<std::string>>(), "|") << "]";
      if (a.value("path", false))
        o << " [a path" << (a.contains("keywords") ? ", or " + join(a["keywords"].get<std::vector<std::string>>(), "|") : "")
          << "]";
      o << "  " << a["help"].get<std::string>() << "\n";
    }
    o << "    metrics (primary: " << w["primary_metric"].get<std::string>() << "):\n";
    for (const auto& m : w["metrics"])
      o << "      " << m["name"].get<std::string>() << " [" << m["unit"].get<std::string>() << ", "
        << m["better"].get<std::string>() << " is better]  " << m["help"].get<std::string>() << "\n";
    if (w.contains("examples") && !w["examples"].empty()) {
      o << "    examples:\n";
      for (const auto& e : w["examples"]) o << "      mlsysbench " << e.get<std::string>() << "\n";
    }
  }
  o << "\nSuites:\n";
  for (const auto& s : c["suites"]) {
    o << "  " << s["name"].get<std::string>();
    if (s.contains("error")) o << "  INVALID: " << s["error"].get<std::string>();
    else o << " — " << s["description"].get<std::string>();
    o << "\n";
  }
  return o.str();
}

}  // namespace mlsb
