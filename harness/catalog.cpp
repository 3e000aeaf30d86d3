#include "harness/catalog.hpp"

#include <sstream>

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
      if (!a.choices.empty()) axis["choices"] = a.choices;
      w["axes"].push_back(axis);
    }
    w["metrics"] = nlohmann::json::array();
    for (const auto& m : info.metrics)
      w["metrics"].push_back({{"name", m.name}, {"unit", m.unit}, {"better", to_string(m.better)}, {"help", m.help}});
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
        << defaults << ")";
      if (a.contains("choices")) o << " [" << join(a["choices"].get<std::vector<std::string>>(), "|") << "]";
      o << "  " << a["help"].get<std::string>() << "\n";
    }
    o << "    metrics (primary: " << w["primary_metric"].get<std::string>() << "):\n";
    for (const auto& m : w["metrics"])
      o << "      " << m["name"].get<std::string>() << " [" << m["unit"].get<std::string>() << ", "
        << m["better"].get<std::string>() << " is better]  " << m["help"].get<std::string>() << "\n";
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
