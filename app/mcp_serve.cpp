#include "app/mcp_serve.hpp"

#include <mutex>

#include "app/catalog.hpp"
#include "util/json_parse.hpp"
#include "harness/plan.hpp"
#include "harness/runner.hpp"
#include "reports/compare.hpp"
#include "reports/render.hpp"
#include "reports/run_listing.hpp"
#include "reports/store.hpp"

namespace mlsb {

namespace {

using nlohmann::json;
using mcp::ServerTool;
using mcp::ToolError;

// The optional argument `key` of type T, or `fallback`; ToolError naming it when of another type.
template <class T>
T arg(const json& args, const char* key, T fallback) {
  if (!args.contains(key) || args[key].is_null()) return fallback;
  try {
    return args[key].get<T>();
  } catch (const json::exception&) {
    throw ToolError(std::string("argument '") + key + "' has the wrong type (got " + args[key].type_name() + ")");
  }
}

// {"experts": [8, 64], "dtype": "bf16"} -> {"experts=8,64", "dtype=bf16"}, as `-p` takes them.
std::vector<std::string> axis_specs(const json& params) {
  if (params.is_null()) return {};
  if (!params.is_object()) throw ToolError("argument 'params' must be an object {\"axis\": value or [values]}");
  std::vector<std::string> specs;
  for (const auto& [axis, value] : params.items()) {
    std::string values;
    for (const auto& v : value.is_array() ? value : json::array({value})) {
      if (v.is_object() || v.is_array() || v.is_null()) throw ToolError("params." + axis + ": values must be scalars");
      values += (values.empty() ? "" : ",") + (v.is_string() ? v.get<std::string>() : v.dump());
    }
    specs.push_back(axis + "=" + values);
  }
  return specs;
}

// The store, opened to read; ToolError when no run has been stored yet.
reports::Store read_store(const std::string& db) {
  if (!std::filesystem::exists(db)) throw ToolError("no runs yet: the store " + db + " does not exist (use run)");
  return reports::Store(db, /*read_only=*/true);
}

int64_t resolve(reports::Store& store, const std::string& ref) {
  if (auto id = store.resolve_run(ref)) return *id;
  throw ToolError("no run matches '" + ref + "' (use an id, a uuid, a tag, latest or latest~N; see list_runs)");
}

json object_schema(json properties, json required = json::array()) {
  return {{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)},
          {"additionalProperties", false}};
}

}  // namespace

std::vector<ServerTool> harness_tools(const std::string& db, const std::vector<std::filesystem::path>& suite_dirs,
                                      const std::atomic<bool>& interrupt) {
  auto run_mutex = std::make_shared<std::mutex>();
  const json run_ref = {{"type", "string"}, {"description", "run id, uuid (or unique prefix), tag, latest or latest~N"}};
  std::vector<ServerTool> tools;

  tools.push_back({"list_workloads",
                   "Workloads: each one's axes (type, defaults, allowed values) and metrics (unit, which direction "
                   "is better, the primary one).",
                   object_schema(json::object()), [suite_dirs](const json&) {
                     return ServerTool::Output{{{"workloads", catalog_json(suite_dirs)["workloads"]}}, ""};
                   }});
  tools.push_back({"list_suites", "The named suites (workloads/suites/*.json and $MLSB_SUITES_DIR) and what they run.",
                   object_schema(json::object()), [suite_dirs](const json&) {
                     return ServerTool::Output{{{"suites", catalog_json(suite_dirs)["suites"]}}, ""};
                   }});

  tools.push_back(
      {"run",
       "Run a suite (name or .json file) or one workload, like `mlsysbench run`, and store it. Returns the run "
       "id, uuid, status and case counts (or, with dry_run, the cases). Can take minutes: see list_suites.",
       object_schema({{"target", {{"type", "string"}, {"description", "suite name, suite file or workload name"}}},
                      {"params", {{"type", "object"}, {"description", "axis overrides: {\"axis\": value or [values]}"}}},
                      {"repetitions", {{"type", "integer"}, {"minimum", 1}, {"description", "measured samples per case"}}},
                      {"seed", {{"type", "integer"}, {"minimum", 0}, {"description", "run seed (default 1)"}}},
                      {"tags", {{"type", "array"}, {"items", {{"type", "string"}}}}},
                      {"filter", {{"type", "string"}, {"description", "regex on case ids"}}},
                      {"dry_run", {{"type", "boolean"}, {"description", "list the cases, run nothing"}}}},
                     {"target"}),
       [db, suite_dirs, run_mutex, &interrupt](const json& args) {
         const std::string target = arg<std::string>(args, "target", "");
         if (target.empty()) throw ToolError("argument 'target' is required: a suite or workload name");
         RunnerOverrides ro;
         if (args.contains("repetitions") && !args["repetitions"].is_null()) {
           const json& reps = args["repetitions"];
           if (!reps.is_number_integer() || reps.get<int64_t>() < 1 || reps.get<int64_t>() > 1'000'000)
             throw ToolError("argument 'repetitions' must be an integer from 1 to 1000000, got " + reps.dump());
           ro.set_repetitions(reps.get<int>());
         }
         Plan plan;
         try {
           plan = build_plan(target, suite_dirs, parse_axis_overrides(axis_specs(args.value("params", json()))), ro,
                             arg<std::string>(args, "filter", ""));
         } catch (const std::invalid_argument& e) {
           throw ToolError(e.what());
         }
         if (plan.cases.empty()) throw ToolError("no case matches the filter");
         json cases = json::array();
         for (const auto& c : plan.cases) cases.push_back(c.display_name());
         if (arg<bool>(args, "dry_run", false)) return ServerTool::Output{{{"cases", std::move(cases)}}, ""};
         std::lock_guard lock(*run_mutex);
         reports::Store store(db);
         RunOptions opts;
         opts.seed = arg<uint64_t>(args, "seed", 1);
         opts.tags = arg<std::vector<std::string>>(args, "tags", {});
         opts.argv = "mlsysbench mcp-serve: run " + dump_json(args);
         opts.comm = "local";
         RunComms comms = RunComms::create("local");
         const RunOutcome out = run_plan(plan, opts, &store, nullptr, interrupt, comms);
         return ServerTool::Output{{{"run_id", out.run_id}, {"uuid", out.uuid}, {"status", reports::status_name(out.status)},
                                    {"ok", out.ok}, {"failed", out.failed}, {"timed_out", out.timed_out},
                                    {"skipped", out.skipped}, {"cases", std::move(cases)}, {"db", db}},
                                   ""};
       }});

  tools.push_back({"list_runs", "Stored runs, newest first: id, uuid, suite, status, tags, case counts.",
                   object_schema({{"limit", {{"type", "integer"}, {"minimum", 0}, {"description", "0 = all (default 20)"}}}}),
                   [db](const json& args) {
                     if (!std::filesystem::exists(db))
                       return ServerTool::Output{{{"runs", json::array()}}, "no runs yet (" + db + " does not exist)\n"};
                     reports::Store store = read_store(db);
                     const auto runs = store.list_run_summaries(arg<int>(args, "limit", 20));
                     json list = json::array();
                     for (const auto& r : runs)
                       list.push_back({{"id", r.run.id}, {"uuid", r.run.uuid}, {"suite", r.run.suite},
                                       {"status", reports::status_name(r.run.status)}, {"tags", r.run.tags}});
                     return ServerTool::Output{{{"runs", std::move(list)}}, reports::format_run_list(runs)};
                   }});

  tools.push_back({"get_report",
                   "One stored run as a report: json (every case, its summaries per metric, items) or md.",
                   object_schema({{"run", run_ref},
                                  {"format", {{"type", "string"}, {"enum", {"json", "md"}}, {"description", "default json"}}}}),
                   [db](const json& args) {
                     reports::Store store = read_store(db);
                     const std::string format = arg<std::string>(args, "format", "json");
                     if (format != "json" && format != "md") throw ToolError("format must be json or md");
                     const auto data = store.load_run(resolve(store, arg<std::string>(args, "run", "latest")));
                     const std::string text = reports::render(data, reports::parse_format(format));
                     json structured = format == "json" ? json::parse(text) : json{{"markdown", text}};
                     return ServerTool::Output{std::move(structured), text};
                   }});

  tools.push_back(
      {"compare_runs",
       "Compare two runs case by case: per metric the ratio of medians with a bootstrap CI, a Mann-Whitney U "
       "p-value and a verdict (better, worse, same, noisy); `regression` says whether a primary metric got "
       "worse or a case that was ok failed.",
       object_schema({{"base", run_ref},
                      {"candidate", run_ref},
                      {"threshold", {{"type", "number"}, {"minimum", 0}, {"description", "relative change that counts (0.05)"}}},
                      {"alpha", {{"type", "number"}, {"minimum", 0}, {"maximum", 1}, {"description", "significance level (0.05)"}}}},
                     {"base", "candidate"}),
       [db](const json& args) {
         reports::Store store = read_store(db);
         reports::CompareOptions opts;
         opts.threshold = arg<double>(args, "threshold", opts.threshold);
         opts.alpha = arg<double>(args, "alpha", opts.alpha);
         const auto base = store.load_run(resolve(store, arg<std::string>(args, "base", "")));
         const auto cand = store.load_run(resolve(store, arg<std::string>(args, "candidate", "")));
         const auto cmp = reports::compare_runs(base, cand, opts);
         json structured = json::parse(reports::render_comparison(cmp, "json"));
         const bool regression = cmp.has_regression() || !cmp.new_failures().empty();
         return ServerTool::Output{{{"regression", regression}, {"comparison", std::move(structured)}},
                                   reports::render_comparison(cmp, "text")};
       }});
  return tools;
}

}  // namespace mlsb
