// Writes a Comparison as an aligned terminal table, JSON ("mlsysbench.compare/1") or Markdown.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "harness/json_parse.hpp"
#include "reports/compare.hpp"
#include "reports/detail/report_text.hpp"

namespace mlsb::reports {
namespace {

using detail::fmt_interval;
using detail::fmt_num;
using detail::kNoEstimate;
using ojson = nlohmann::ordered_json;

std::vector<std::string> header() { return {"case", "metric", "base", "cand", "ratio", "95% CI", "p", "verdict"}; }

// A row without a significance test (n = 1 on a side) shows no CI or p and is marked "n=1".
std::vector<std::vector<std::string>> rows(const Comparison& cmp) {
  std::vector<std::vector<std::string>> out;
  for (const auto& m : cmp.metrics) {
    const std::string unit = m.unit.empty() ? "" : " " + m.unit;
    const bool tested = m.significance != Significance::None;
    out.push_back({m.name, m.metric + (m.primary ? " *" : ""), fmt_num(m.base_median) + unit,
                   fmt_num(m.cand_median) + unit, fmt_num(m.ratio),
                   tested ? fmt_interval(m.ci_lo, m.ci_hi) : kNoEstimate, tested ? fmt_num(m.p_value, 3) : kNoEstimate,
                   std::string(to_string(m.verdict)) + (tested ? "" : " (n=1)")});
  }
  return out;
}

// The footnote for rows marked "n=1"; "" when every row was tested.
std::string untested_note(const Comparison& cmp) {
  for (const auto& m : cmp.metrics)
    if (m.significance == Significance::None)
      return "n=1: a single sample has no noise estimate, so these verdicts follow the threshold alone; "
             "rerun both sides with --repetitions 5 (or more) for a significance test.";
  return "";
}

std::string run_name(const RunRecord& r) {
  return r.uuid + " (id " + std::to_string(r.id) + (r.suite.empty() ? "" : ", " + r.suite) + ")";
}

std::string tally(const Comparison& cmp) {
  int counts[4] = {0, 0, 0, 0};
  for (const auto& m : cmp.metrics) ++counts[static_cast<int>(m.verdict)];
  return std::to_string(counts[0]) + " better, " + std::to_string(counts[1]) + " worse, " + std::to_string(counts[2]) +
         " same, " + std::to_string(counts[3]) + " noisy; primary-metric regression: " +
         (cmp.has_regression() ? "yes" : "no");
}

std::string settings(const Comparison& cmp) {
  return "threshold " + fmt_num(100 * cmp.options.threshold, 3) + "%, alpha " + fmt_num(cmp.options.alpha, 3) +
         "; * marks the primary metric";
}

// Terminal columns a cell takes: its UTF-8 code points (the cells hold no wide characters).
size_t columns(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char ch) { return (ch & 0xC0) != 0x80; }));
}

std::string text(const Comparison& cmp) {
  std::string out = "base:      " + run_name(cmp.base) + "\ncandidate: " + run_name(cmp.cand) + "\n" + settings(cmp) + "\n\n";
  auto table = rows(cmp);
  table.insert(table.begin(), header());
  std::vector<size_t> width(header().size(), 0);
  for (const auto& r : table)
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], columns(r[i]));
  for (const auto& r : table) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      const bool left = i < 2 || i + 1 == r.size();
      const std::string pad(width[i] - columns(r[i]), ' ');
      line += (i ? "  " : "") + (left ? r[i] + pad : pad + r[i]);
    }
    line.erase(line.find_last_not_of(' ') + 1);
    out += line + "\n";
  }
  const auto list = [&](const char* title, const std::vector<CaseStatus>& cases) {
    if (cases.empty()) return;
    out += std::string("\n") + title + ":\n";
    for (const auto& c : cases)
      out += "  " + c.name + "  (" + (c.base_status.empty() ? "" : "base " + c.base_status) +
             (c.base_status.empty() || c.cand_status.empty() ? "" : ", ") +
             (c.cand_status.empty() ? "" : "candidate " + c.cand_status) + ")\n";
  };
  list("Only in base", cmp.only_base);
  list("Only in candidate", cmp.only_cand);
  list("Not compared (not ok in both runs)", cmp.not_compared);
  const std::string note = untested_note(cmp);
  return out + "\n" + (note.empty() ? "" : note + "\n") + tally(cmp) + "\n";
}

ojson number(double v) { return std::isfinite(v) ? ojson(v) : ojson(nullptr); }

ojson case_list(const std::vector<CaseStatus>& cases) {
  ojson out = ojson::array();
  for (const auto& c : cases)
    out.push_back({{"case", c.name}, {"workload", c.workload}, {"params_key", c.params_key},
                   {"base_status", c.base_status}, {"cand_status", c.cand_status}});
  return out;
}

std::string json(const Comparison& cmp) {
  ojson metrics = ojson::array();
  for (const auto& m : cmp.metrics)
    metrics.push_back({{"case", m.name}, {"workload", m.workload}, {"params_key", m.params_key}, {"metric", m.metric},
                       {"unit", m.unit}, {"better", to_string(m.better)}, {"primary", m.primary},
                       {"base_n", m.base_n}, {"cand_n", m.cand_n}, {"base_median", number(m.base_median)},
                       {"cand_median", number(m.cand_median)}, {"ratio", number(m.ratio)},
                       {"ci_lo", number(m.ci_lo)}, {"ci_hi", number(m.ci_hi)}, {"p_value", number(m.p_value)},
                       {"verdict", to_string(m.verdict)}, {"significance", to_string(m.significance)}});
  const auto run = [](const RunRecord& r) { return ojson{{"id", r.id}, {"uuid", r.uuid}, {"suite", r.suite}}; };
  const ojson out = {{"schema", "mlsysbench.compare/1"},
                     {"base", run(cmp.base)},
                     {"cand", run(cmp.cand)},
                     {"threshold", cmp.options.threshold},
                     {"alpha", cmp.options.alpha},
                     {"regression", cmp.has_regression()},
                     {"metrics", std::move(metrics)},
                     {"only_base", case_list(cmp.only_base)},
                     {"only_cand", case_list(cmp.only_cand)},
                     {"not_compared", case_list(cmp.not_compared)}};
  return dump_json(out, 2) + "\n";
}

std::string md(const Comparison& cmp) {
  using detail::md_escape;
  std::string out = "# mlsysbench comparison\n\n- base: " + md_escape(run_name(cmp.base)) +
                    "\n- candidate: " + md_escape(run_name(cmp.cand)) + "\n- " + md_escape(settings(cmp)) + "\n\n|";
  for (const auto& h : header()) out += " " + h + " |";
  out += "\n| --- | --- | ---: | ---: | ---: | --- | ---: | --- |\n";
  for (const auto& r : rows(cmp)) {
    out += "|";
    for (const auto& cell : r) out += " " + md_escape(cell) + " |";
    out += "\n";
  }
  const auto list = [&](const char* title, const std::vector<CaseStatus>& cases) {
    if (cases.empty()) return;
    out += std::string("\n") + title + ":\n\n";
    for (const auto& c : cases)
      out += "- " + md_escape(c.name) + " (base " + (c.base_status.empty() ? "-" : c.base_status) +
             ", candidate " + (c.cand_status.empty() ? "-" : c.cand_status) + ")\n";
  };
  list("Only in base", cmp.only_base);
  list("Only in candidate", cmp.only_cand);
  list("Not compared (not ok in both runs)", cmp.not_compared);
  const std::string note = untested_note(cmp);
  return out + "\n" + (note.empty() ? "" : md_escape(note) + "\n\n") + tally(cmp) + "\n";
}

}  // namespace

std::string render_comparison(const Comparison& cmp, std::string_view format) {
  if (format == "text") return text(cmp);
  if (format == "json") return json(cmp);
  if (format == "md" || format == "markdown") return md(cmp);
  throw std::invalid_argument("unknown comparison format '" + std::string(format) + "' (expected text, json or md)");
}

}  // namespace mlsb::reports
