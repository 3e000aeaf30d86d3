#include "workloads/toolbench/scorer.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <span>
#include <stdexcept>

#include "util/text.hpp"

namespace mlsb::toolbench {

using nlohmann::json;

namespace {

// Short JSON text of a value for messages, cut at a UTF-8 boundary.
std::string show(const json& v) {
  return utf8_excerpt(v.dump(-1, ' ', false, json::error_handler_t::replace), 80);
}

std::string json_type(const json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return "integer";
  return v.type_name();
}

bool single_type_matches(const std::string& type, const json& v) {
  if (type == "string") return v.is_string();
  if (type == "number") return v.is_number();
  if (type == "integer") return v.is_number_integer() || v.is_number_unsigned();
  if (type == "boolean") return v.is_boolean();
  if (type == "array") return v.is_array();
  if (type == "object") return v.is_object();
  if (type == "null") return v.is_null();
  return true;  // unknown type keywords do not reject
}

std::string type_text(const json& schema) {
  if (schema.contains("enum")) return "one of " + show(schema["enum"]);
  if (schema.contains("type")) return schema["type"].is_string() ? schema["type"].get<std::string>() : show(schema["type"]);
  return "a value of the schema";
}

bool scalar_equal(const json& expected, const json& actual, bool path) {
  if (expected.is_string() && actual.is_string())
    return normalize_string(expected.get<std::string>(), path) == normalize_string(actual.get<std::string>(), path);
  if (expected.is_number() && actual.is_number()) return expected.get<double>() == actual.get<double>();
  return expected == actual;
}

std::string param_name(const std::string& where) { return "param '" + where + "'"; }

// A string that spells a value of the schema's scalar type read as that value ("2" for an integer, "2.5"
// for a number, "True" for a boolean), as a type-aware checker or an LLM judge reads a label; any other
// value as it is. MCPToolBench++ labels write numbers and booleans as strings in some categories.
json read_as_schema_type(const json& schema, const json& v) {
  if (!v.is_string() || !schema.is_object() || !schema.contains("type") || !schema["type"].is_string()) return v;
  const std::string type = schema["type"].get<std::string>(), text = v.get<std::string>();
  if (type == "integer" || type == "number") {
    int64_t i = 0;
    const char *b = text.data(), *e = text.data() + text.size();
    if (auto [end, ec] = std::from_chars(b, e, i); ec == std::errc() && end == e && !text.empty()) return i;
    double d = 0;
    if (auto [end, ec] = std::from_chars(b, e, d); type == "number" && ec == std::errc() && end == e &&
                                                   !text.empty() && std::isfinite(d))
      return d;
  } else if (type == "boolean") {
    const std::string l = ascii_lower(text);
    if (l == "true" || l == "false") return l == "true";
  }
  return v;
}

struct Checker {
  std::vector<std::string> problems;

  void value(const json& schema, const json& expected_text, const json& actual_text, const std::string& where,
             bool path) {
    const json expected = read_as_schema_type(schema, expected_text);
    const json actual = read_as_schema_type(schema, actual_text);
    if (!type_matches(schema, actual)) {
      problems.push_back(param_name(where) + ": expected " + type_text(schema) + ", got " + json_type(actual) + " " +
                         show(actual));
      return;
    }
    if (expected.is_object() && actual.is_object()) return object(schema, expected, actual, where);
    if (expected.is_array() && actual.is_array()) {
      if (expected.size() != actual.size()) {
        problems.push_back(param_name(where) + ": expected " + std::to_string(expected.size()) + " items " +
                           show(expected) + ", got " + std::to_string(actual.size()) + " " + show(actual));
        return;
      }
      const json items = schema.is_object() && schema.contains("items") ? schema["items"] : json::object();
      for (std::size_t i = 0; i < expected.size(); ++i)
        value(items, expected[i], actual[i], where + "[" + std::to_string(i) + "]", path);
      return;
    }
    if (!scalar_equal(expected, actual, path))
      problems.push_back(param_name(where) + ": expected " + show(expected) + " got " + show(actual));
  }

  void object(const json& schema, const json& expected, const json& actual, const std::string& where) {
    const auto key_of = [&](const std::string& k) { return where.empty() ? k : where + "." + k; };
    const json props = schema.is_object() && schema.contains("properties") ? schema["properties"] : json();
    const json required = schema.is_object() && schema.contains("required") ? schema["required"] : json::array();
    const json extra = schema.is_object() && schema.contains("additionalProperties") ? schema["additionalProperties"]
                                                                                      : json(false);
    const bool extra_ok = (extra.is_boolean() && extra.get<bool>()) || extra.is_object();
    const auto is_required = [&](const std::string& k) {
      return std::find(required.begin(), required.end(), json(k)) != required.end();
    };
    const auto member_schema = [&](const std::string& k) {
      return props.is_object() && props.contains(k) ? props[k] : json::object();
    };
    const auto is_default = [&](const std::string& k, const json& v) {
      const json s = member_schema(k);
      return s.contains("default") && scalar_equal(s["default"], v, is_path_param(k));
    };
    for (const auto& r : required)
      if (r.is_string() && !actual.contains(r.get<std::string>()))
        problems.push_back(param_name(key_of(r.get<std::string>())) + ": required but missing");
    for (const auto& [k, v] : actual.items()) {
      if (props.is_object() && !props.contains(k) && !extra_ok) {
        problems.push_back(param_name(key_of(k)) + ": unexpected (not in the tool's input_schema)");
      } else if (!expected.contains(k) && !is_default(k, v)) {
        problems.push_back(param_name(key_of(k)) + ": not in the label, got " + show(v));
      }
    }
    for (const auto& [k, v] : expected.items()) {
      if (actual.contains(k)) {
        const bool unexpected = props.is_object() && !props.contains(k) && !extra_ok;
        if (!unexpected) value(member_schema(k), v, actual[k], key_of(k), is_path_param(k));
      } else if (!is_required(k) && !is_default(k, v)) {
        problems.push_back(param_name(key_of(k)) + ": missing, expected " + show(v));
      }
    }
  }
};

}  // namespace

bool type_matches(const json& schema, const json& value) {
  if (!schema.is_object()) return true;
  for (const char* alt : {"anyOf", "oneOf"}) {
    if (!schema.contains(alt) || !schema[alt].is_array()) continue;
    const auto& alts = schema[alt];
    if (!std::any_of(alts.begin(), alts.end(), [&](const json& s) { return type_matches(s, value); })) return false;
  }
  if (schema.contains("enum") && schema["enum"].is_array()) {
    const auto& e = schema["enum"];
    if (std::find(e.begin(), e.end(), value) == e.end()) return false;
  }
  if (!schema.contains("type")) return true;
  const json& t = schema["type"];
  if (t.is_string()) return single_type_matches(t.get<std::string>(), value);
  if (t.is_array())
    return std::any_of(t.begin(), t.end(),
                       [&](const json& x) { return x.is_string() && single_type_matches(x.get<std::string>(), value); });
  return true;
}

std::vector<std::string> label_defects(const Task& task) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < task.labels.size(); ++i) {
    const Label& l = task.labels[i];
    const ToolSpec* tool = task.find_tool(l.name);
    if (!tool) continue;
    for (const auto& p : check_arguments(tool->input_schema, l.input, l.input))
      out.push_back("label " + std::to_string(i + 1) + " (" + l.name + "): " + p);
  }
  return out;
}

bool is_path_param(std::string_view key) {
  const std::string k = ascii_lower(key);
  return k.find("path") != std::string::npos || k == "source" || k == "destination";
}

std::string normalize_string(std::string_view text, bool path) {
  const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  std::string s = ascii_lower(text);
  if (!path) return s;
  const bool absolute = !s.empty() && s.front() == '/';
  std::string out;
  std::size_t i = 0;
  while (i <= s.size()) {
    const std::size_t slash = std::min(s.find('/', i), s.size());
    const std::string part = s.substr(i, slash - i);
    if (!part.empty() && part != ".") out += (out.empty() ? "" : "/") + part;
    i = slash + 1;
  }
  if (absolute) return "/" + out;
  return out.empty() ? "." : out;
}

std::vector<std::string> check_arguments(const json& schema, const json& expected, const json& actual) {
  Checker c;
  if (!actual.is_object()) return {"arguments: expected an object, got " + json_type(actual)};
  c.object(schema, expected.is_object() ? expected : json::object(), actual, "");
  return c.problems;
}

namespace {

bool has_content(const ToolOutcome& o) {
  for (const auto& block : o.content) {
    if (!block.is_object()) continue;
    if (block.value("type", "") != "text") return true;
    if (block.contains("text") && block["text"].is_string() && !block["text"].get<std::string>().empty()) return true;
  }
  return false;
}

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

}  // namespace

TrialScore score_trial(const Task& task, const std::vector<CallRecord>& all_calls, const std::string& run_error) {
  // A single-step task scores the last call (an agent may look around first); a multi-step one all.
  std::span<const CallRecord> calls(all_calls);
  if (task.labels.size() == 1 && calls.size() > 1) calls = calls.last(1);
  TrialScore s;
  std::vector<std::string> reasons;
  if (!run_error.empty()) reasons.push_back(run_error);

  s.tool_match = calls.size() == task.labels.size();
  if (calls.empty()) reasons.push_back("no tool call made");
  else if (!s.tool_match)
    reasons.push_back("expected " + std::to_string(task.labels.size()) + " call(s), got " + std::to_string(calls.size()));
  const std::size_t n = std::min(calls.size(), task.labels.size());
  for (std::size_t i = 0; i < n; ++i) {
    const Label& l = task.labels[i];
    const std::string& got = calls[i].call.name;
    if (!l.accepts(got)) {
      s.tool_match = false;
      reasons.push_back("tool: expected '" + l.name + "' got '" + got + "'");
    }
  }
  s.param_match = s.tool_match;
  if (s.tool_match) {
    for (std::size_t i = 0; i < n; ++i) {
      const ToolSpec* tool = task.find_tool(calls[i].call.name);
      const auto problems =
          check_arguments(tool ? tool->input_schema : json::object(), task.labels[i].input, calls[i].call.arguments);
      s.param_match = s.param_match && problems.empty();
      reasons.insert(reasons.end(), problems.begin(), problems.end());
    }
  }

  s.exec_pass = !calls.empty();
  for (const auto& c : calls) {
    const ToolOutcome& o = c.outcome;
    std::string why;
    if (!o.error.empty()) why = o.error;
    else if (o.is_error) why = o.text.empty() ? "isError with no text" : o.text;
    else if (!has_content(o)) why = "empty content";
    if (why.empty()) continue;
    s.exec_pass = false;
    reasons.push_back("execution failed: " + c.call.name + ": " + utf8_excerpt(one_line(why), 300));
  }
  s.pass = run_error.empty() && s.tool_match && s.param_match && s.exec_pass;
  for (const auto& r : reasons) s.reason += (s.reason.empty() ? "" : "; ") + r;
  return s;
}

double pass_at_k(int n, int c, int k) {
  if (n < 1 || c < 0 || c > n || k < 1 || k > n)
    throw std::invalid_argument("pass_at_k: need 0 <= c <= n and 1 <= k <= n (n=" + std::to_string(n) +
                                ", c=" + std::to_string(c) + ", k=" + std::to_string(k) + ")");
  if (n - c < k) return 1.0;
  double fail = 1.0;
  for (int i = n - c + 1; i <= n; ++i) fail *= 1.0 - static_cast<double>(k) / i;
  return 1.0 - fail;
}

}  // namespace mlsb::toolbench
