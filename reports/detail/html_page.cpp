#include "reports/detail/html_page.hpp"

#include "reports/detail/report_text.hpp"

namespace mlsb::reports::detail {
namespace {

constexpr const char* kStyle = R"css(
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px;color:#1f2328;background:#fff}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #d0d7de}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0 16px;max-width:100%}th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f6f8fa}td.num{text-align:right;white-space:nowrap;font-variant-numeric:tabular-nums}
table.meta td{overflow-wrap:anywhere}td.text{overflow-wrap:break-word;max-width:32em}
table.meta th{width:9em}tr.total td{font-weight:600}
div.wide{overflow-x:auto;max-width:100%}table.metrics td:first-child,table.cases td:first-child,table.summary td:first-child{min-width:14em}
tr.throttled td{background:#fff1e5}tr.st-failed td,tr.st-timeout td,tr.st-interrupted td{background:#ffebe9}tr.st-skipped td{background:#fff8c5}
figure{margin:8px 0 20px;overflow-x:auto}figcaption{font-weight:600;margin-bottom:4px}
svg.chart{display:block}
svg.chart .bar{fill:#54aeff}svg.chart .err,svg.chart .axis{stroke:#1f2328;stroke-width:1;fill:none}
svg.chart .level{stroke:#8c959f;stroke-width:3;opacity:.5;fill:none}svg.chart .step{stroke:#8c959f;stroke-width:1.5;stroke-dasharray:4 3}svg.chart .step.regression{stroke:#cf222e}svg.chart .pt{fill:#0969da}svg.chart .pt.throttled{fill:#fff;stroke:#bc4c00}
svg.chart .line{stroke:#0969da;stroke-width:1.5;fill:none}svg.chart text{font-size:11px;fill:#1f2328}svg.chart .lbl{text-anchor:end}svg.chart .end{text-anchor:end}
svg.chart .grp{font-weight:600}svg.chart .mid{text-anchor:middle}svg.chart .start{text-anchor:start}svg.chart .grid{stroke:#d0d7de;stroke-width:1}
svg.chart .mark{stroke:#1f2328;stroke-width:1.5;stroke-dasharray:6 4;fill:none}svg.chart .mark-label{fill:#1f2328;paint-order:stroke;stroke:#fff;stroke-width:3px}
svg.chart .frontier{stroke:#1a7f37;stroke-width:1.5;fill:none}svg.chart .pt.front{fill:#1a7f37}svg.chart .pt.other{fill:#fff;stroke:#0969da;stroke-width:1.5}
details.more-charts{margin:8px 0 20px}details.more-charts>summary{cursor:pointer;font-weight:600}
svg.chart .line.alt{stroke-dasharray:6 3}svg.chart .line.s1{stroke:#bc4c00}svg.chart .line.s2{stroke:#8250df}svg.chart .line.s3{stroke:#1a7f37}svg.chart .line.s4{stroke:#cf222e}svg.chart .line.s5{stroke:#57606a}
svg.chart .pt.s1{fill:#bc4c00}svg.chart .pt.s2{fill:#8250df}svg.chart .pt.s3{fill:#1a7f37}svg.chart .pt.s4{fill:#cf222e}svg.chart .pt.s5{fill:#57606a}
svg.chart .p0{fill:#54aeff}svg.chart .p1{fill:#f0883e}svg.chart .p2{fill:#8250df}svg.chart .p3{fill:#8c959f}
tr.worse td{background:#ffebe9}tr.better td{background:#dafbe1}
p.banner{font-size:16px;font-weight:600;padding:8px 12px;border-radius:6px}p.banner.fail{background:#ffebe9;color:#82071e}p.banner.pass{background:#dafbe1;color:#116329}p.banner.warn{background:#fff8c5;color:#7d4e00}
table.compare{width:100%}table.compare td.case{overflow-wrap:anywhere;min-width:12em}table.compare td.verdict{min-width:8em;max-width:22em}
table.compare td.stats{font-size:12px;min-width:9em}table.compare summary{cursor:pointer}
@media (max-width:820px){table.compare thead{display:none}table.compare tr{display:block;border:1px solid #d0d7de;margin-bottom:8px}
table.compare td{display:block;border:none;max-width:none}table.compare td[data-label]{display:inline-block;padding-right:16px}
table.compare td[data-label]::before{content:attr(data-label) ": ";color:#57606a}
table.compare tr.worse{background:#ffebe9}table.compare tr.better{background:#dafbe1}table.compare tr td{background:none}}
code{font-family:ui-monospace,monospace}nav a{margin-right:12px}
table.night{width:100%}table.night td.case{overflow-wrap:break-word;min-width:10em}table.night td.val{text-align:right;font-variant-numeric:tabular-nums}table.night td.links a{margin-right:8px;white-space:nowrap}
.why{font-size:12px;color:#57606a}ul.notes li{overflow-wrap:anywhere}svg.chart.spark{display:inline}svg.spark .line{stroke-width:1.2}svg.spark.worse .line{stroke:#cf222e}svg.spark.worse .pt{fill:#cf222e}
)css";

}  // namespace

std::string html_page_head(const std::string& title) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<meta name=\"generator\" content=\"mlsysbench " MLSB_VERSION "\"><title>";
  out += html_escape(title);
  out += "</title><style>";
  out += kStyle;
  out += "</style></head><body>\n";
  return out;
}

std::string html_meta_table(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string out = "<table class=\"meta\"><tbody>";
  for (const auto& [k, v] : rows) out += "<tr><th>" + html_escape(k) + "</th><td>" + html_escape(v) + "</td></tr>";
  out += "</tbody></table>\n";
  return out;
}

std::string html_figure(const std::string& caption, const std::string& svg) {
  return "<figure><figcaption>" + html_escape(caption) + "</figcaption>" + svg + "</figure>\n";
}

}  // namespace mlsb::reports::detail
