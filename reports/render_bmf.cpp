// Bencher Metric Format (BMF) JSON, read by Bencher's `json` adapter (`bencher run --adapter json --file F`):
// {"<case display name>": {"<metric>": {"value": median, "lower_value": p05, "upper_value": p95}}}, one benchmark
// per ok case with samples and one measure per metric (trend_points; mapping in REPORT_SCHEMA.md).
#include "util/json_parse.hpp"
#include "reports/detail/renderers.hpp"
#include "reports/detail/report_text.hpp"

namespace mlsb::reports::detail {

std::string render_bmf(const RunData& run) {
  nlohmann::ordered_json bmf = nlohmann::ordered_json::object();
  for (const TrendPoint& p : trend_points(run)) {
    const Summary& s = p.summary->stats;
    bmf[p.case_name][p.summary->metric] = {{"value", s.median}, {"lower_value", s.p05}, {"upper_value", s.p95}};
  }
  return dump_json(bmf, 2) + "\n";
}

}  // namespace mlsb::reports::detail
