#include "app/catalog.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "harness/alias.hpp"
#include "harness/registry.hpp"
#include "harness/suite.hpp"
#include "util/text.hpp"

namespace mlsb {

nlohmann::json catalog_json(const std::vector<std::filesystem::path>& suite_dirs) {
  nlohmann::json out;
  out["workloads"] = nlohmann::json::array();
  out["aliases"] = nlohmann::json::object();
  for (const auto& name : workload_names()) {
    const WorkloadInfo info = make_workload(name)->info();
    nlohmann::json w{{"name", info.name},
                     {"family", workload_family(info.name)},
                     {"description", info.description},
                     {"primary_metric", info.primary_metric}};
    w["axes"] = nlohmann::json::array();
    for (const auto& a : info.axes) {
      nlohmann::json axis{{"name", a.name}, {"type", to_string(a.type)}, {"help", a.help}};
      axis["defaults"] = nlohmann::json::array();
      for (const auto& v : a.defaults) axis["defaults"].push_back(to_json(v));
      // A path axis's choices are keywords beside any path (`none`, `auto`), not a closed list.
      if (!a.choices.empty()) axis[a.path ? "keywords" : "choices"] = a.choices;
      axis["path"] = a.path;
      axis["data"] = a.data;  // defines the case's input (its seed), not the method
      if (!a.applies_if.empty()) axis["applies_when"] = {{"axis", a.applies_if}, {"values", a.applies_if_values}};
      w["axes"].push_back(axis);
    }
    w["metrics"] = nlohmann::json::array();
    for (const auto& m : info.metrics)
      w["metrics"].push_back({{"name", m.name}, {"unit", m.unit}, {"better", to_string(m.better)}, {"help", m.help}});
    w["examples"] = info.examples;
    out["workloads"].push_back(w);
    const std::string family = workload_family(info.name);
    if (const WorkloadAlias* alias = find_alias(family); alias && !out["aliases"].contains(family)) {
      nlohmann::json targets = nlohmann::json::object();
      for (const auto& [value, target] : alias->targets) targets[value] = target;
      out["aliases"][family] = {{"axis", alias->axis}, {"default", alias->default_value}, {"targets", targets}};
    }
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
  std::vector<std::string> names, picked;
  for (const auto& w : catalog["workloads"]) {
    names.push_back(w["name"].get<std::string>());
    if (w["name"] == workload || w.value("family", "") == workload) {
      out["workloads"].push_back(w);
      picked.push_back(names.back());
    }
  }
  if (out["workloads"].empty()) {
    std::vector<std::string> suites;
    for (const auto& s : catalog["suites"]) {
      suites.push_back(s["name"].get<std::string>());
      if (s["name"] != workload) continue;  // a suite: it and the workloads it runs
      out["suites"].push_back(s);
      for (const auto& w : catalog["workloads"])
        if (s.contains("workloads") && std::find(s["workloads"].begin(), s["workloads"].end(), w["name"]) != s["workloads"].end())
          out["workloads"].push_back(w);
      return out;
    }
    if (catalog.contains("aliases"))
      for (const auto& [family, alias] : catalog["aliases"].items()) names.push_back(family);
    std::sort(names.begin(), names.end());
    std::vector<std::string> all = names;
    all.insert(all.end(), suites.begin(), suites.end());
    throw std::invalid_argument("unknown workload or suite '" + workload + "' (workloads: " + join(names, ", ") +
                                "; suites: " + join(suites, ", ") + ")" + did_you_mean(workload, all));
  }
  if (catalog.contains("aliases") && catalog["aliases"].contains(workload))
    out["aliases"][workload] = catalog["aliases"][workload];
  for (const auto& s : catalog["suites"])
    if (s.contains("workloads") && std::any_of(picked.begin(), picked.end(), [&](const std::string& name) {
          return std::find(s["workloads"].begin(), s["workloads"].end(), name) != s["workloads"].end();
        }))
      out["suites"].push_back(s);
  return out;
}

std::string catalog_text(const nlohmann::json& c) {
  std::ostringstream o;
  o << "Workloads:\n";
  std::string family;
  for (const auto& w : c["workloads"]) {
    // A family of benchmarks (names "family.benchmark") gets a heading naming its members and its alias.
    if (const std::string f = w.value("family", ""); f != w["name"] && f != family) {
      std::vector<std::string> members;
      for (const auto& m : c["workloads"])
        if (m.value("family", "") == f) members.push_back(m["name"].get<std::string>());
      o << "\n" << f << ": " << join(members, ", ");
      if (c.contains("aliases") && c["aliases"].contains(f)) {
        const auto& a = c["aliases"][f];
        std::vector<std::string> values;
        for (const auto& [value, target] : a["targets"].items()) values.push_back(value);
        o << " (`" << f << "` runs " << a["targets"][a["default"].get<std::string>()].get<std::string>()
          << "; `" << f << " -p " << a["axis"].get<std::string>() << "=" << join(values, "|") << "` picks one)";
      }
      o << "\n";
    }
    family = w.value("family", "");
    o << "\n  " << w["name"].get<std::string>() << " — " << w["description"].get<std::string>() << "\n";
    o << "    axes:\n";
    for (const auto& a : w["axes"]) {
      std::string defaults;
      for (const auto& d : a["defaults"]) defaults += (defaults.empty() ? "" : ",") + (d.is_string() ? d.get<std::string>() : d.dump());
      o << "      " << a["name"].get<std::string>() << " (" << a["type"].get<std::string>() << ", default "
        << defaults << (a.value("data", false) ? ", data" : "")
        << (a.contains("applies_when") ? ", only when " + a["applies_when"]["axis"].get<std::string>() + "=" +
                                             join(a["applies_when"]["values"].get<std::vector<std::string>>(), "|")
                                       : "")
        << ")";
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
  if (!c["suites"].empty()) o << "\nSuites:\n";
  for (const auto& s : c["suites"]) {
    o << "  " << s["name"].get<std::string>();
    if (s.contains("error")) o << "  INVALID: " << s["error"].get<std::string>();
    else o << " — " << s["description"].get<std::string>();
    o << "\n";
  }
  return o.str();
}

}  // namespace mlsb
