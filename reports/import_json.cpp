#include "reports/import_json.hpp"

#include <algorithm>
#include <climits>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "util/json_file.hpp"

namespace mlsb::reports {
namespace {

using json = nlohmann::json;

constexpr const char* kSchema = "mlsysbench.report/1";
// A report holds every sample and item of a run: allow more than a configuration file.
constexpr std::uintmax_t kMaxReportBytes = std::uintmax_t{1} << 30;

// A value of the report and where it is ("cases[2].samples"), so that every error names the file and field.
class Field {
 public:
  Field(const json& v, std::string where, const std::string& file) : v_(v), where_(std::move(where)), file_(file) {}

  [[noreturn]] void fail(const std::string& what) const { throw std::invalid_argument(file_ + ": " + where_ + ": " + what); }

  /// The member `key` of this object; it must be present.
  Field operator[](const std::string& key) const {
    const auto it = object().find(key);
    if (it == v_.end()) Field(v_, child(key), file_).fail("missing");
    return Field(*it, child(key), file_);
  }
  bool has(const std::string& key) const { return object().contains(key); }
  /// The elements of this array, with their places.
  std::vector<Field> elements() const {
    require(v_.is_array(), "an array");
    std::vector<Field> out;
    for (size_t i = 0; i < v_.size(); ++i) out.emplace_back(v_[i], where_ + "[" + std::to_string(i) + "]", file_);
    return out;
  }
  /// The members of this object, with their names.
  std::vector<std::pair<std::string, Field>> members() const {
    std::vector<std::pair<std::string, Field>> out;
    for (const auto& [key, value] : object().items()) out.emplace_back(key, Field(value, child(key), file_));
    return out;
  }

  const json& value() const { return v_; }
  const json& object() const { return require(v_.is_object(), "an object"); }
  std::string str() const { return require(v_.is_string(), "a string").get<std::string>(); }
  double num() const { return require(v_.is_number(), "a number").get<double>(); }
  bool flag() const { return require(v_.is_boolean(), "true or false").get<bool>(); }
  uint64_t unsigned_int() const { return require(v_.is_number_unsigned(), "an unsigned integer").get<uint64_t>(); }
  std::string one_of(std::initializer_list<std::string_view> allowed) const {
    std::string s = str();
    if (std::find(allowed.begin(), allowed.end(), s) != allowed.end()) return s;
    std::string list;
    for (const auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    fail("'" + s + "' is not one of " + list);
  }

 private:
  const json& require(bool ok, const char* type) const {
    if (!ok) fail(std::string("expected ") + type + ", got " + v_.type_name());
    return v_;
  }
  std::string child(const std::string& key) const { return where_.empty() ? key : where_ + "." + key; }

  const json& v_;
  std::string where_;
  const std::string& file_;
};

std::vector<std::string> strings(const Field& f) {
  std::vector<std::string> out;
  for (const auto& e : f.elements()) out.push_back(e.str());
  return out;
}

RunRecord read_run(const Field& run, const Field& env) {
  RunRecord r;
  r.uuid = run["uuid"].str();
  if (r.uuid.empty()) run["uuid"].fail("empty");
  r.suite = run["suite"].str();
  r.status = *parse_run_status(run["status"].one_of({"ok", "failed", "interrupted"}));  // a finished run: "running" is no result
  r.started_at = run["started_at"].num();
  r.finished_at = run["finished_at"].num();
  r.argv = run["argv"].str();
  r.seed = run["seed"].unsigned_int();
  r.tags = strings(run["tags"]);
  r.git_sha = run["git"]["sha"].str();
  r.git_dirty = run["git"]["dirty"].flag();
  r.env = env.object();
  if (run.has("machine_key")) r.machine_key = run["machine_key"].str();
  if (run.has("branch")) r.branch = run["branch"].str();
  if (run.has("ci")) r.ci = run["ci"].object();
  if (run.has("selection")) r.selection = run["selection"].object();
  // A report written before "partial" existed: a run made with --filter holds part of its plan.
  r.partial = run.has("partial") ? run["partial"].flag()
                                 : r.argv.find(" --filter ") != std::string::npos || r.argv.find(" --filter=") != std::string::npos;
  if (run.has("suspect")) r.suspect = run["suspect"].str();
  if (run.has("confirms")) r.confirms = run["confirms"].str();
  return r;
}

CaseRecord read_case(const Field& c) {
  CaseRecord r;
  r.workload = c["workload"].str();
  r.params = c["params"].object();
  r.params_key = c["params_key"].str();
  r.label = c["label"].str();
  r.backend = c["backend"].str();
  r.comm = c["comm"].str();
  const Field ranks = c["ranks"];
  if (const uint64_t n = ranks.unsigned_int(); n >= 1 && n <= INT_MAX)
    r.ranks = static_cast<int>(n);
  else
    ranks.fail("expected at least 1, got " + std::to_string(n));
  r.status = *parse_case_status(c["status"].one_of({"ok", "failed", "skipped", "timeout", "interrupted"}));
  r.reason = c["reason"].str();
  r.primary_metric = c["primary_metric"].str();
  r.started_at = c["started_at"].num();
  r.finished_at = c["finished_at"].num();
  if (c.has("gpu")) r.gpu = c["gpu"].object();
  if (c.has("throttled")) r.throttled = c["throttled"].flag();
  for (const auto& [metric, values] : c["samples"].members()) {
    auto& list = r.samples[metric];
    for (const auto& v : values.elements()) list.push_back(v.num());
  }
  for (const auto& [metric, summary] : c["summaries"].members()) {
    const auto samples = r.samples.find(metric);
    if (samples == r.samples.end() || samples->second.empty())
      summary.fail("no samples to recompute it from (samples." + metric + " is missing or empty)");
    const Better better = summary["better"].one_of({"lower", "higher"}) == "lower" ? Better::Lower : Better::Higher;
    r.summaries.push_back({metric, summary["unit"].str(), better, summarize(samples->second),
                           summary.has("deterministic") && summary["deterministic"].flag()});
  }
  for (const auto& item : c["items"].elements()) r.items.emplace_back(item["key"].str(), item["data"].value());
  // An ok case is judged by its primary metric: without samples of it, a comparison could not see it get worse.
  if (r.status == CaseStatus::Ok && !r.samples.empty() && r.samples[r.primary_metric].empty())
    c["primary_metric"].fail("'" + r.primary_metric + "' has no samples in this ok case");
  for (const auto& [metric, values] : r.samples)
    if (!values.empty() && std::none_of(r.summaries.begin(), r.summaries.end(),
                                        [&](const SummaryRow& row) { return row.metric == metric; }))
      c["samples"][metric].fail("has no summary (its unit and direction are unknown)");
  return r;
}

}  // namespace

RunData read_json_report(const std::filesystem::path& file) {
  const json doc = read_json_file(file, "JSON report", kMaxReportBytes);
  const std::string name = file.string();
  const Field root(doc, "", name);
  if (!doc.is_object()) throw std::invalid_argument(name + ": not an mlsysbench JSON report (expected an object)");
  if (!doc.contains("schema"))
    throw std::invalid_argument(name + ": not an mlsysbench JSON report: no \"schema\" (expected \"" + kSchema + "\")");
  if (const std::string schema = root["schema"].str(); schema != kSchema)
    throw std::invalid_argument(name + ": schema is \"" + schema + "\"; this build imports \"" + kSchema + "\"");
  RunData data;
  data.run = read_run(root["run"], root["env"]);
  for (const auto& c : root["cases"].elements()) data.cases.push_back(read_case(c));
  return data;
}

int64_t store_imported_run(Store& store, RunData& data) {
  if (const auto id = store.run_id_by_uuid(data.run.uuid))
    throw std::invalid_argument("run " + data.run.uuid + " is already in " + store.path().string() + " (run " +
                                std::to_string(*id) + "): nothing imported");
  const int64_t id = store.begin_run(data.run);
  try {
    for (auto& c : data.cases) store.add_case(id, c);
  } catch (...) {
    try {
      store.delete_run(id);
    } catch (const StoreError&) {  // the write's own error says more
    }
    throw;
  }
  return id;
}

}  // namespace mlsb::reports
