// github-action-benchmark's custom JSON, for its tools customSmallerIsBetter and customBiggerIsBetter: an array
// of {"name", "unit", "value", "range", "extra"}. One action step reads one tool's file, so the lower-is-better
// and the higher-is-better metrics go to two files (formats gab and gab-bigger; mapping in REPORT_SCHEMA.md).
#include "util/json_parse.hpp"
#include "reports/detail/renderers.hpp"
#include "reports/detail/report_text.hpp"

namespace mlsb::reports::detail {

std::string render_gab(const RunData& run, Better better) {
  nlohmann::ordered_json benches = nlohmann::ordered_json::array();
  for (const TrendPoint& p : trend_points(run)) {
    if (p.summary->better != better) continue;
    const Summary& s = p.summary->stats;
    // Kept short: the params that differ from their defaults (the full params_key is in the JSON report).
    const std::string params = p.c->label.empty() ? "defaults" : p.c->label;
    benches.push_back({{"name", p.case_name + " " + p.summary->metric},
                       {"unit", p.summary->unit},
                       {"value", s.median},
                       {"range", "p05..p95 " + fmt_num(s.p05) + ".." + fmt_num(s.p95)},
                       {"extra", "n=" + std::to_string(s.n) + "\nparams: " + params}});
  }
  return dump_json(benches, 2) + "\n";
}

}  // namespace mlsb::reports::detail
