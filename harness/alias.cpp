#include "harness/alias.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "util/text.hpp"

namespace mlsb {
namespace {

std::map<std::string, WorkloadAlias, std::less<>>& aliases() {
  static std::map<std::string, WorkloadAlias, std::less<>> a;
  return a;
}

Value value_from_json(const nlohmann::json& v) {
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number()) return v.get<double>();
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// The benchmark `alias` maps `value` of its axis to, or nullptr.
const std::string* target_of(const WorkloadAlias& alias, std::string_view value) {
  for (const auto& [v, target] : alias.targets)
    if (v == value) return &target;
  return nullptr;
}

}  // namespace

bool register_alias(WorkloadAlias alias) {
  std::string name = alias.name;
  aliases()[std::move(name)] = std::move(alias);
  return true;
}

const WorkloadAlias* find_alias(std::string_view name) {
  const auto it = aliases().find(name);
  return it == aliases().end() ? nullptr : &it->second;
}

std::vector<std::string> runnable_names() {
  std::vector<std::string> names = workload_names();
  for (const auto& [name, alias] : aliases()) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

std::string workload_family(std::string_view name) { return std::string(name.substr(0, name.find('.'))); }

std::vector<WorkloadEntry> resolve_alias(const std::string& workload, const AxisOverrides& params) {
  const WorkloadAlias* alias = find_alias(workload);
  if (!alias) return {{workload, params}};
  std::vector<std::string> values{alias->default_value};
  if (const auto it = params.find(alias->axis); it != params.end()) values = it->second;
  std::vector<WorkloadEntry> out;
  std::vector<WorkloadInfo> infos;
  std::vector<std::string> known;
  for (const auto& [value, target] : alias->targets) known.push_back(value);
  for (const auto& value : values) {
    const std::string* target = target_of(*alias, value);
    if (!target)
      throw std::invalid_argument("axis '" + alias->axis + "': '" + value + "' is not allowed (allowed: " +
                                  join(known, ", ") + ")" + did_you_mean(value, known));
    if (std::any_of(out.begin(), out.end(), [&](const WorkloadEntry& e) { return e.workload == *target; })) continue;
    out.push_back({*target, {}});
    infos.push_back(make_workload(*target)->info());
  }
  for (const auto& [axis, vals] : params) {
    if (axis == alias->axis) continue;
    bool placed = false;
    for (size_t i = 0; i < out.size(); ++i)
      if (infos[i].find_axis(axis)) {
        out[i].params[axis] = vals;
        placed = true;
      }
    if (placed) continue;
    std::vector<std::string> owners;
    for (const auto& [value, target] : alias->targets)
      if (make_workload(target)->info().find_axis(axis)) owners.push_back(target + " (" + alias->axis + "=" + value + ")");
    std::vector<std::string> picked;
    for (const auto& e : out) picked.push_back(e.workload);
    throw std::invalid_argument("axis '" + axis + "' is not an axis of " + join(picked, ", ") +
                                (owners.empty() ? "" : "; it belongs to " + join(owners, ", ")) + " ('" +
                                workload + "' runs " + join(picked, ", ") + " for " + alias->axis + "=" +
                                join(values, ",") + ")");
  }
  return out;
}

void rename_stored_case(std::string& workload, nlohmann::json& params, std::string& key, std::string& label) {
  std::string target = workload;
  const WorkloadAlias* alias = find_alias(workload);
  if (alias) {
    std::string value = alias->default_value;
    if (params.contains(alias->axis) && params[alias->axis].is_string()) value = params[alias->axis].get<std::string>();
    const std::string* picked = target_of(*alias, value);
    if (!picked) return;  // a mode this build no longer has: left as stored
    target = *picked;
  } else if (const auto known = workload_names(); !std::binary_search(known.begin(), known.end(), workload)) {
    return;  // a workload this build does not know (an import, or one since removed)
  }
  const WorkloadInfo info = make_workload(target)->info();
  Params named;
  for (const auto& [axis, v] : params.items())
    if (!alias || info.find_axis(axis)) named[axis] = value_from_json(v);
  bool filled = false;
  for (const auto& axis : info.axes)
    if (axis.defaults.size() == 1 && named.emplace(axis.name, axis.defaults[0]).second) filled = true;
  if (!alias && !filled) return;
  std::set<std::string> given;  // the axes the old label named (a swept axis at its default stays named)
  for (const auto& part : split(label, ','))
    if (const size_t eq = part.find('='); eq != std::string::npos) given.insert(part.substr(0, eq));
  workload = std::move(target);
  params = to_json(named);
  key = params_key(named);
  label = case_label(info, named, given);
}

}  // namespace mlsb
