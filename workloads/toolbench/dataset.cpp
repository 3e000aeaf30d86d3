#include <algorithm>
#include <set>

#include "util/json_file.hpp"
#include "workloads/toolbench/task.hpp"

namespace mlsb::toolbench {

using nlohmann::json;

RecordProblem::RecordProblem(std::string f, const std::string& what)
    : std::runtime_error(what), field(std::move(f)) {}

bool Label::accepts(std::string_view tool) const {
  return tool == name || std::find(similar_tools.begin(), similar_tools.end(), tool) != similar_tools.end();
}

const ToolSpec* Task::find_tool(std::string_view name) const {
  for (const auto& t : tools)
    if (t.name == name) return &t;
  return nullptr;
}

namespace {

const json& member(const json& obj, const std::string& key, const std::string& where, json::value_t type,
                   const char* type_name) {
  const std::string field = where.empty() ? key : where + "." + key;
  auto it = obj.find(key);
  if (it == obj.end()) throw RecordProblem(field, "missing field '" + field + "'");
  const bool ok = type == json::value_t::number_integer ? it->is_number_integer() : it->type() == type;
  if (!ok)
    throw RecordProblem(field, "field '" + field + "' must be " + type_name + ", got " + it->type_name());
  return *it;
}

std::string string_member(const json& obj, const std::string& key, const std::string& where) {
  return member(obj, key, where, json::value_t::string, "a string").get<std::string>();
}

std::vector<std::string> string_array(const json& arr, const std::string& field) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    if (!arr[i].is_string())
      throw RecordProblem(field + "[" + std::to_string(i) + "]",
                          "field '" + field + "[" + std::to_string(i) + "]' must be a string");
    out.push_back(arr[i].get<std::string>());
  }
  return out;
}

// `similar_tools` entries are tool names, or (published MCPToolBench++ browser and search records)
// objects {"name": ..., "mcp_server": ...} of which the name counts.
std::vector<std::string> similar_tools(const json& arr, const std::string& field) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < arr.size(); ++i) {
    const std::string where = field + "[" + std::to_string(i) + "]";
    if (arr[i].is_string()) out.push_back(arr[i].get<std::string>());
    else if (arr[i].is_object()) out.push_back(string_member(arr[i], "name", where));
    else throw RecordProblem(where, "field '" + where + "' must be a tool name or an object with a 'name'");
  }
  return out;
}

ToolSpec parse_tool(const json& t, const std::string& where) {
  if (!t.is_object()) throw RecordProblem(where, "field '" + where + "' must be an object");
  ToolSpec spec;
  spec.name = string_member(t, "name", where);
  if (t.contains("description"))
    spec.description = string_member(t, "description", where);
  spec.input_schema = member(t, "input_schema", where, json::value_t::object, "an object");
  return spec;
}

Label parse_label(const json& l, const std::string& where) {
  if (!l.is_object()) throw RecordProblem(where, "field '" + where + "' must be an object");
  Label label;
  label.name = string_member(l, "name", where);
  label.server = string_member(l, "mcp_server", where);
  label.input = member(l, "input", where, json::value_t::object, "an object");
  if (auto it = l.find("step"); it != l.end()) {
    if (it->is_string()) label.step = it->get<std::string>();
    else if (it->is_number_integer()) label.step = std::to_string(it->get<long long>());
    else throw RecordProblem(where + ".step", "field '" + where + ".step' must be a string or integer");
  }
  if (l.contains("similar_tools"))
    label.similar_tools = similar_tools(member(l, "similar_tools", where, json::value_t::array, "an array"),
                                        where + ".similar_tools");
  return label;
}

}  // namespace

Task parse_task(const json& r) {
  if (!r.is_object()) throw RecordProblem("", std::string("record must be an object, got ") + r.type_name());
  Task task;
  task.uuid = string_member(r, "uuid", "");
  task.category = string_member(r, "category", "");
  task.call_type = string_member(r, "call_type", "");
  task.query = string_member(r, "query", "");
  const json& tools = member(r, "tools", "", json::value_t::array, "an array");
  for (std::size_t i = 0; i < tools.size(); ++i)
    task.tools.push_back(parse_tool(tools[i], "tools[" + std::to_string(i) + "]"));
  const json& dict = member(r, "mcp_tools_dict", "", json::value_t::object, "an object");
  for (const auto& [server, names] : dict.items()) {
    const std::string field = "mcp_tools_dict." + server;
    if (!names.is_array()) throw RecordProblem(field, "field '" + field + "' must be an array");
    task.server_tools[server] = string_array(names, field);
  }
  const json& labels = member(r, "function_call_label", "", json::value_t::array, "an array");
  if (labels.empty())
    throw RecordProblem("function_call_label", "field 'function_call_label' must not be empty");
  for (std::size_t i = 0; i < labels.size(); ++i)
    task.labels.push_back(parse_label(labels[i], "function_call_label[" + std::to_string(i) + "]"));
  // Calls run in step order when every step is a number; otherwise in file order.
  const auto numeric = [](const Label& l) {
    return !l.step.empty() && l.step.find_first_not_of("0123456789") == std::string::npos && l.step.size() < 10;
  };
  if (std::all_of(task.labels.begin(), task.labels.end(), numeric))
    std::stable_sort(task.labels.begin(), task.labels.end(),
                     [](const Label& a, const Label& b) { return std::stoi(a.step) < std::stoi(b.step); });
  return task;
}

Dataset load_dataset(const std::filesystem::path& path) {
  json doc;
  try {
    doc = read_json_file(path, "task file", kMaxTaskFileBytes);
  } catch (const JsonFileError& e) {
    throw DatasetError(e.what());
  }
  if (doc.is_object()) doc = json::array({std::move(doc)});  // a single record (MCPToolBench++ samples/)
  if (!doc.is_array())
    throw DatasetError("task file " + path.string() + ": expected a JSON array of task records or one record, got " +
                       doc.type_name());
  Dataset ds;
  ds.path = path;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const json& r = doc[i];
    const auto text_of = [&](const char* key) {
      return r.is_object() && r.contains(key) && r[key].is_string() ? r[key].get<std::string>() : std::string();
    };
    const std::string uuid = text_of("uuid");
    const std::string where = "record " + std::to_string(i) + (uuid.empty() ? " (no uuid)" : " (uuid " + uuid + ")") + ": ";
    try {
      Task task = parse_task(r);
      task.index = i;
      if (!seen.insert(task.uuid).second) throw RecordProblem("uuid", "duplicate uuid " + task.uuid);
      ds.tasks.push_back(std::move(task));
    } catch (const RecordProblem& p) {
      const std::string problem = where + p.what();
      ds.errors.push_back({i, uuid, text_of("category"), p.field, problem, path.string() + ": " + problem});
    }
  }
  return ds;
}

}  // namespace mlsb::toolbench
