// The JSON report: schema "mlsysbench.report/1", documented in reports/REPORT_SCHEMA.md.
#include "util/json_parse.hpp"
#include "reports/case_names.hpp"
#include "reports/detail/renderers.hpp"
#include "reports/detail/report_text.hpp"

namespace mlsb::reports::detail {
namespace {

using ojson = nlohmann::ordered_json;

// JSON has no NaN or infinity: they become null.
ojson summary_json(const SummaryRow& r) {
  const auto& s = r.stats;
  ojson out = {{"unit", r.unit},       {"better", to_string(r.better)}, {"n", s.n},
          {"min", json_number(s.min)}, {"median", json_number(s.median)},   {"mean", json_number(s.mean)},
          {"stddev", json_number(s.stddev)}, {"rel_stddev", json_number(s.rel_stddev)}, {"p05", json_number(s.p05)},
          {"p95", json_number(s.p95)}, {"max", json_number(s.max)},         {"ci_lo", json_number(s.ci_lo)},
          {"ci_hi", json_number(s.ci_hi)}};
  if (r.deterministic) out["deterministic"] = true;  // absent: false
  return out;
}

ojson case_json(const CaseRecord& c, const std::string& name) {
  ojson summaries = ojson::object();
  for (const auto& r : c.summaries) summaries[r.metric] = summary_json(r);
  ojson samples = ojson::object();
  for (const auto& [metric, values] : c.samples) {
    ojson list = ojson::array();
    for (double v : values) list.push_back(json_number(v));
    samples[metric] = std::move(list);
  }
  ojson items = ojson::array();
  for (const auto& [key, item] : c.items) items.push_back({{"key", key}, {"data", ojson::parse(dump_json(item))}});
  return {{"id", c.id},
          {"workload", c.workload},
          {"params", ojson::parse(dump_json(c.params))},
          {"params_key", c.params_key},
          {"label", c.label},
          {"name", name},
          {"backend", c.backend},
          {"comm", c.comm},
          {"ranks", c.ranks},
          {"status", status_name(c.status)},
          {"reason", c.reason},
          {"primary_metric", c.primary_metric},
          {"started_at", c.started_at},
          {"finished_at", c.finished_at},
          {"gpu", ojson::parse(dump_json(c.gpu))},
          {"throttled", c.throttled},
          {"summaries", std::move(summaries)},
          {"samples", std::move(samples)},
          {"items", std::move(items)}};
}

}  // namespace

std::string render_json(const RunData& data) {
  const RunRecord& r = data.run;
  ojson cases = ojson::array();
  const std::vector<std::string> names = case_display_names(data.cases);
  for (size_t i = 0; i < data.cases.size(); ++i) cases.push_back(case_json(data.cases[i], names[i]));
  const ojson report = {
      {"schema", "mlsysbench.report/1"},
      {"generator", {{"name", "mlsysbench"}, {"version", MLSB_VERSION}}},
      {"run",
       {{"id", r.id},
        {"uuid", r.uuid},
        {"suite", r.suite},
        {"status", status_name(r.status)},
        {"started_at", r.started_at},
        {"finished_at", r.finished_at},
        {"argv", r.argv},
        {"seed", r.seed},
        {"tags", r.tags},
        {"git", {{"sha", r.git_sha}, {"dirty", r.git_dirty}}},
        {"machine_key", r.machine_key},
        {"branch", r.branch},
        {"ci", ojson::parse(dump_json(r.ci))},
        {"selection", ojson::parse(dump_json(r.selection))},
        {"partial", r.partial},
        {"suspect", r.suspect},
        {"confirms", r.confirms}}},
      {"env", ojson::parse(dump_json(r.env))},
      {"cases", std::move(cases)}};
  return dump_json(report, 2) + "\n";
}

}  // namespace mlsb::reports::detail
