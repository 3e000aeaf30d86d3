// Writes a Comparison as an aligned terminal table, JSON ("mlsysbench.compare/1") or Markdown.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "util/json_parse.hpp"
#include "util/text.hpp"
#include "reports/baseline.hpp"
#include "reports/compare.hpp"
#include "reports/detail/html_page.hpp"
#include "reports/detail/report_text.hpp"
#include "reports/run_listing.hpp"

namespace mlsb::reports {
namespace {

using detail::fmt_interval;
using detail::fmt_num;
using detail::json_number;
using detail::kNoEstimate;
using ojson = nlohmann::ordered_json;

// Whether the candidate was t-tested against a history (compare --history N).
bool any_history(const Comparison& cmp) {
  return cmp.options.history_t_test &&
         std::any_of(cmp.metrics.begin(), cmp.metrics.end(), [](const MetricComparison& m) { return m.history_n > 0; });
}

std::vector<std::string> header(const Comparison& cmp) {
  std::vector<std::string> h{"case", "metric", "base", "cand", "ratio", "95% CI", "p", "verdict"};
  if (any_history(cmp)) h.insert(h.end() - 1, {"reference", "hist p"});
  return h;
}

// How bad a row is, for the worst-first order of the HTML page: worse first (largest change first),
// then noisy, better, same.
int rank(const MetricComparison& m) {
  switch (m.verdict) {
    case Verdict::Worse: return 0;
    case Verdict::Noisy: return 1;
    case Verdict::Better: return 2;
    case Verdict::Same: return 3;
  }
  return 3;
}

// The rows a short rendering shows: primary metrics whose verdict is not "same" (every row with `all`),
// worst first when `worst_first`.
std::vector<const MetricComparison*> shown(const Comparison& cmp, bool all, bool worst_first) {
  std::vector<const MetricComparison*> out;
  for (const auto& m : cmp.metrics)
    if (all || (m.primary && m.verdict != Verdict::Same)) out.push_back(&m);
  if (worst_first)
    std::stable_sort(out.begin(), out.end(), [](const MetricComparison* a, const MetricComparison* b) {
      if (rank(*a) != rank(*b)) return rank(*a) < rank(*b);
      return std::fabs(std::log(a->ratio)) > std::fabs(std::log(b->ratio));
    });
  return out;
}

// A row without a significance test (n = 1 on a side) shows no CI or p and is marked "n=1"; a noisy
// row beyond the threshold says why.
std::vector<std::vector<std::string>> rows(const Comparison& cmp, const std::vector<const MetricComparison*>& metrics) {
  std::vector<std::vector<std::string>> out;
  const bool history = any_history(cmp);
  for (const MetricComparison* mp : metrics) {
    const MetricComparison& m = *mp;
    const std::string unit = m.unit.empty() ? "" : " " + m.unit;
    const bool tested = m.significance != Significance::None;
    out.push_back({m.name, m.metric + (m.primary ? " *" : ""), fmt_num(m.base_median) + unit,
                   fmt_num(m.cand_median) + unit, fmt_num(m.ratio),
                   tested ? fmt_interval(m.ci_lo, m.ci_hi) : kNoEstimate, tested ? fmt_num(m.p_value, 3) : kNoEstimate,
                   std::string(to_string(m.verdict)) + (tested ? "" : " (n=1)") + (m.why.empty() ? "" : ": " + m.why)});
    if (history)
      out.back().insert(out.back().end() - 1,
                        {m.history_n ? fmt_num(m.reference) + unit + " (n=" + std::to_string(m.history_n) + ")" : kNoEstimate,
                         std::isfinite(m.history_p) ? fmt_num(m.history_p, 3) : kNoEstimate});
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

// A case's status in one run, or `absent` when the case is not in that run.
std::string status_or(const std::optional<CaseStatus>& s, const char* absent) { return s ? status_name(*s) : absent; }

std::string tally(const Comparison& cmp) {
  if (cmp.metrics.empty()) return "no case ok in both runs: nothing was compared";
  int counts[4] = {0, 0, 0, 0};
  for (const auto& m : cmp.metrics) ++counts[static_cast<int>(m.verdict)];
  return std::to_string(counts[0]) + " better, " + std::to_string(counts[1]) + " worse, " + std::to_string(counts[2]) +
         " same, " + std::to_string(counts[3]) + " noisy; primary-metric regression: " +
         (cmp.has_regression() ? "yes" : "no");
}

std::string settings(const Comparison& cmp) {
  return "threshold " + fmt_num(100 * cmp.options.threshold, 3) + "%, alpha " + fmt_num(cmp.options.alpha, 3) +
         (any_history(cmp) ? std::string(", t-test against the history")
                           : ", run-to-run noise from the last runs on this machine, else " +
                                 fmt_num(100 * cmp.options.run_noise, 3) + "%") +
         (std::any_of(cmp.metrics.begin(), cmp.metrics.end(), [](const MetricComparison& m) { return m.deterministic; })
              ? "; counted (deterministic) metrics: threshold " +
                    fmt_num(100 * cmp.options.deterministic_threshold, 3) + "% alone"
              : std::string()) +
         "; * marks the primary metric";
}

// The header of every rendering: where each run came from, the commit range, what differs in their
// environments, and the rule.
std::vector<std::pair<std::string, std::string>> heading(const Comparison& cmp) {
  std::vector<std::pair<std::string, std::string>> out = {
      {"base", run_line(cmp.base)}, {"candidate", run_line(cmp.cand)}, {"commits", commit_range(cmp.base, cmp.cand)}};
  for (const auto& d : environment_differences(cmp.base, cmp.cand)) out.emplace_back("environment", d);
  out.emplace_back("rule", settings(cmp));
  return out;
}

// What a rendering says about the rows it shows: how many of how many, and in which order.
std::string shown_note(const Comparison& cmp, size_t shown_rows, bool all, bool worst_first) {
  return std::to_string(shown_rows) + " of " + std::to_string(cmp.metrics.size()) + " rows" +
         (all ? "" : ": primary metrics that changed") + (worst_first ? ", worst first" : ", in case order") +
         (all ? "." : " (--all for every row).");
}

// A row's statistics in words (the line under it in text, its folded details in HTML): the test's 95% CI of
// the ratio and p, and the history's reference and p.
std::vector<std::string> row_details(const Comparison& cmp, const MetricComparison& m) {
  std::vector<std::string> d;
  const std::string unit = m.unit.empty() ? "" : " " + m.unit;
  if (m.significance != Significance::None)
    d.push_back("ratio 95% CI " + fmt_interval(m.ci_lo, m.ci_hi) + ", p " + fmt_num(m.p_value, 3) + " (" +
                std::to_string(m.base_n) + " vs " + std::to_string(m.cand_n) + " samples)");
  else
    d.push_back("n=1: no significance test");
  if (any_history(cmp) && m.history_n)
    d.push_back("reference " + fmt_num(m.reference) + unit + " (n=" + std::to_string(m.history_n) + "), hist p " +
                (std::isfinite(m.history_p) ? fmt_num(m.history_p, 3) : kNoEstimate));
  return d;
}

// 100 columns: the case on its own line, under it one line per metric (base, cand, ratio, verdict) and
// the row's statistics indented beneath.
std::string comparison_text(const Comparison& cmp, bool all) {
  constexpr size_t kWidth = 100, kKey = 13;
  std::string out;
  for (const auto& [key, value] : heading(cmp))
    out += key + ":" + std::string(kKey - key.size() - 1, ' ') + word_wrap(value, kWidth, kKey) + "\n";
  const auto metrics = shown(cmp, all, /*worst_first=*/!all);
  out += "\n" + shown_note(cmp, metrics.size(), all, !all) + "\n";
  if (!metrics.empty()) {
    std::vector<std::vector<std::string>> table = {{"case / metric", "base", "cand", "ratio", "verdict"}};
    for (const MetricComparison* m : metrics) {
      const std::string unit = m->unit.empty() ? "" : " " + m->unit;
      table.push_back({"  " + m->metric + (m->primary ? " *" : ""), fmt_num(m->base_median) + unit,
                       fmt_num(m->cand_median) + unit, fmt_num(m->ratio),
                       std::string(to_string(m->verdict)) + (m->significance == Significance::None ? " (n=1)" : "")});
    }
    std::vector<size_t> width(table[0].size(), 0);
    for (const auto& r : table)
      for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], utf8_columns(r[i]));
    const auto line = [&](const std::vector<std::string>& r) {
      std::string l;
      for (size_t i = 0; i < r.size(); ++i) {
        const bool left = i == 0 || i + 1 == r.size();
        const std::string pad(width[i] - utf8_columns(r[i]), ' ');
        l += (i ? "  " : "") + (left ? r[i] + pad : pad + r[i]);
      }
      l.erase(l.find_last_not_of(' ') + 1);
      return l + "\n";
    };
    out += "\n" + line(table[0]);
    std::string last_case;
    for (size_t i = 0; i < metrics.size(); ++i) {
      if (metrics[i]->name != last_case) out += metrics[i]->name + "\n";
      last_case = metrics[i]->name;
      out += line(table[i + 1]);
      auto details = row_details(cmp, *metrics[i]);
      if (!metrics[i]->why.empty()) details.push_back(metrics[i]->why);
      out += "      " + word_wrap(join(details, "; "), kWidth, 6) + "\n";
    }
  }
  const auto list = [&](const char* title, const std::vector<CaseInRuns>& cases) {
    if (cases.empty()) return;
    out += std::string("\n") + title + ":\n";
    for (const auto& c : cases)
      out += "  " + c.name + "  (" + (c.base_status ? "base " + status_name(*c.base_status) : "") +
             (c.base_status && c.cand_status ? ", " : "") +
             (c.cand_status ? "candidate " + status_name(*c.cand_status) : "") + ")\n";
  };
  list("Only in base", cmp.only_base);
  list("Only in candidate", cmp.only_cand);
  list("Not compared (not ok in both runs)", cmp.not_compared);
  list("Primary metric missing in the candidate", cmp.lost_primary);
  if (const auto power = detection_lines(cmp); !power.empty()) {
    out += "\nWhat the gate can see (a worse step caught with 95% probability):\n";
    for (const auto& p : power) out += "  " + word_wrap(p, kWidth, 4) + "\n";  // continued 4 columns in
  }
  const std::string note = untested_note(cmp);
  return out + "\n" + (note.empty() ? "" : word_wrap(note, kWidth, 0) + "\n") + tally(cmp) + "\n";
}

ojson case_list(const std::vector<CaseInRuns>& cases) {
  ojson out = ojson::array();
  for (const auto& c : cases)
    out.push_back({{"case", c.name}, {"workload", c.workload}, {"params_key", c.params_key},
                   {"base_status", status_or(c.base_status, "")}, {"cand_status", status_or(c.cand_status, "")}});
  return out;
}

std::string comparison_json(const Comparison& cmp) {
  ojson metrics = ojson::array();
  for (const auto& m : cmp.metrics)
    metrics.push_back({{"case", m.name}, {"workload", m.workload}, {"params_key", m.params_key}, {"metric", m.metric},
                       {"unit", m.unit}, {"better", to_string(m.better)}, {"primary", m.primary},
                       {"base_n", m.base_n}, {"cand_n", m.cand_n}, {"base_median", json_number(m.base_median)},
                       {"cand_median", json_number(m.cand_median)}, {"ratio", json_number(m.ratio)},
                       {"ci_lo", json_number(m.ci_lo)}, {"ci_hi", json_number(m.ci_hi)}, {"p_value", json_number(m.p_value)},
                       {"verdict", to_string(m.verdict)}, {"significance", to_string(m.significance)},
                       {"why", m.why}, {"throttled", m.throttled}, {"history_n", m.history_n},
                       {"history_mean", json_number(m.history_mean)}, {"history_p", json_number(m.history_p)},
                       {"base_run", m.base_run}, {"reference", json_number(m.reference)},
                       {"rel_noise", json_number(m.rel_noise)}, {"detectable", json_number(m.detectable)},
                       {"detectable_full", json_number(m.detectable_full)}});
  const auto run = [](const RunRecord& r) {
    return ojson{{"id", r.id},
                 {"uuid", r.uuid},
                 {"suite", r.suite},
                 {"git_sha", r.git_sha},
                 {"git_dirty", r.git_dirty},
                 {"branch", r.branch},
                 {"started_at", detail::iso_time(r.started_at)},
                 {"finished_at", detail::iso_time(r.finished_at)},
                 {"machine_key", r.machine_key},
                 {"host", r.host}};
  };
  const ojson out = {{"schema", "mlsysbench.compare/1"},
                     {"base", run(cmp.base)},
                     {"cand", run(cmp.cand)},
                     {"commits", commit_range(cmp.base, cmp.cand)},
                     {"environment_differences", environment_differences(cmp.base, cmp.cand)},
                     {"threshold", cmp.options.threshold},
                     {"alpha", cmp.options.alpha},
                     {"run_noise", cmp.options.run_noise},
                     {"history_limit", cmp.options.history_limit},
                     {"regression", cmp.has_regression()},
                     {"worse_cases", cmp.worse_cases()},
                     {"metrics", std::move(metrics)},
                     {"only_base", case_list(cmp.only_base)},
                     {"only_cand", case_list(cmp.only_cand)},
                     {"not_compared", case_list(cmp.not_compared)},
                     {"lost_primary", case_list(cmp.lost_primary)}};
  return dump_json(out, 2) + "\n";
}

std::string comparison_md(const Comparison& cmp, bool all) {
  using detail::md_escape;
  std::string out = "# mlsysbench comparison\n\n";
  for (const auto& [key, value] : heading(cmp)) out += "- " + key + ": " + md_escape(value) + "\n";
  const auto metrics = shown(cmp, all, /*worst_first=*/!all);
  out += "\n" + shown_note(cmp, metrics.size(), all, !all) + "\n\n";
  const auto head = header(cmp);
  if (!metrics.empty()) {  // a table of no rows is a header alone: the line above says it all
    out += "|";
    for (const auto& h : head) out += " " + h + " |";
    out += "\n|";
    for (size_t i = 0; i < head.size(); ++i) out += i >= 2 && i != 5 && i + 1 != head.size() ? " ---: |" : " --- |";
    out += "\n";
  }
  for (const auto& r : rows(cmp, metrics)) {
    out += "|";
    for (const auto& cell : r) out += " " + md_escape(cell) + " |";
    out += "\n";
  }
  const auto list = [&](const char* title, const std::vector<CaseInRuns>& cases) {
    if (cases.empty()) return;
    out += std::string("\n") + title + ":\n\n";
    for (const auto& c : cases)
      out += "- " + md_escape(c.name) + " (base " + status_or(c.base_status, "-") + ", candidate " + status_or(c.cand_status, "-") +
             ")\n";
  };
  list("Only in base", cmp.only_base);
  list("Only in candidate", cmp.only_cand);
  list("Not compared (not ok in both runs)", cmp.not_compared);
  list("Primary metric missing in the candidate", cmp.lost_primary);
  if (const auto power = detection_lines(cmp); !power.empty()) {
    out += "\n<details><summary>What the gate can see (a worse step caught with 95% probability)</summary>\n\n";
    for (const auto& p : power) out += "- " + md_escape(p) + "\n";
    out += "\n</details>\n";
  }
  const std::string note = untested_note(cmp);
  return out + "\n" + (note.empty() ? "" : md_escape(note) + "\n\n") + tally(cmp) + "\n";
}

std::string comparison_html(const Comparison& cmp, bool all) {
  using detail::html_escape;
  std::string out = detail::html_page_head("mlsysbench comparison: " + cmp.cand.uuid + " vs " + cmp.base.uuid);
  const auto failures = cmp.gate_failures();
  auto meta = heading(cmp);
  meta.emplace_back("verdicts", tally(cmp));
  out += "<header><h1>mlsysbench comparison</h1>\n<p class=\"banner " + std::string(failures.empty() ? "pass" : "fail") +
         "\">" + (failures.empty() ? "PASS: no primary metric worse" : "REGRESSION: " + html_escape(join(failures, ", "))) +
         "</p>\n" + detail::html_meta_table(meta) + "</header>\n";
  const auto metrics = shown(cmp, all, /*worst_first=*/true);
  out += "<p>" + html_escape(shown_note(cmp, metrics.size(), all, true)) + "</p>\n";
  if (!metrics.empty()) {
    // Verdict first; the statistics fold per row. Below 820 px each row stacks into a card (html_page.cpp).
    out += "<table class=\"compare\"><thead><tr><th>verdict</th><th>case</th><th>metric</th><th>base</th>"
           "<th>cand</th><th>ratio</th><th>statistics</th></tr></thead><tbody>\n";
    for (const MetricComparison* m : metrics) {
      const std::string unit = m->unit.empty() ? "" : " " + m->unit;
      const bool tested = m->significance != Significance::None;
      std::string stats;
      for (const auto& d : row_details(cmp, *m)) stats += "<div>" + html_escape(d) + "</div>";
      out += "<tr class=\"" + std::string(to_string(m->verdict)) + "\"><td class=\"verdict\"><b>" +
             html_escape(std::string(to_string(m->verdict)) + (tested ? "" : " (n=1)")) + "</b>" +
             (m->why.empty() ? "" : "<div class=\"why\">" + html_escape(m->why) + "</div>") +
             "</td><td class=\"case\">" + html_escape(m->name) + "</td><td data-label=\"metric\">" +
             html_escape(m->metric + (m->primary ? " *" : "")) + "</td><td class=\"num\" data-label=\"base\">" +
             html_escape(fmt_num(m->base_median) + unit) + "</td><td class=\"num\" data-label=\"cand\">" +
             html_escape(fmt_num(m->cand_median) + unit) + "</td><td class=\"num\" data-label=\"ratio\">" +
             html_escape(fmt_num(m->ratio)) + "</td><td class=\"stats\"><details><summary>" +
             html_escape(tested ? "p " + fmt_num(m->p_value, 3) : "n=1") + "</summary>" + stats +
             "</details></td></tr>\n";
    }
    out += "</tbody></table>\n";
  }
  const auto list = [&](const char* title, const std::vector<CaseInRuns>& cases) {
    if (cases.empty()) return;
    out += std::string("<h2>") + title + "</h2><ul>";
    for (const auto& c : cases)
      out += "<li>" + html_escape(c.name + " (base " + status_or(c.base_status, "-") + ", candidate " +
                                  status_or(c.cand_status, "-") + ")") + "</li>";
    out += "</ul>\n";
  };
  list("Only in base", cmp.only_base);
  list("Only in candidate", cmp.only_cand);
  list("Not compared (not ok in both runs)", cmp.not_compared);
  list("Primary metric missing in the candidate", cmp.lost_primary);
  if (const auto power = detection_lines(cmp); !power.empty()) {
    out += "<h2>What the gate can see</h2><p>A worse step caught with 95% probability:</p><ul>";
    for (const auto& p : power) out += "<li>" + html_escape(p) + "</li>";
    out += "</ul>\n";
  }
  if (const std::string note = untested_note(cmp); !note.empty()) out += "<p>" + html_escape(note) + "</p>\n";
  out += "</body></html>\n";
  return out;
}

}  // namespace

std::vector<std::string> detection_lines(const Comparison& cmp) {
  std::vector<std::string> out;
  for (const auto& m : cmp.metrics) {
    if (!m.primary || !std::isfinite(m.detectable)) continue;
    const bool t_test = cmp.options.history_t_test;
    std::string line = m.name + " " + m.metric + ": detects >= " + fmt_num(100 * m.detectable, 2) + "% with " +
                       std::to_string(m.history_n) + (m.history_n == 1 ? " run" : " runs") + " of history";
    if (m.deterministic) {
      out.push_back(m.name + " " + m.metric + ": detects >= " + fmt_num(100 * m.detectable, 2) +
                    "% (a counted metric: the threshold alone)");
      continue;
    }
    if (t_test && m.history_n < kTTestHistory)
      line += " (the two-run rule until " + std::to_string(kTTestHistory) + ")";
    if (t_test && m.history_n < cmp.options.history_limit && std::isfinite(m.detectable_full))
      line += ", >= " + fmt_num(100 * m.detectable_full, 2) + "% with " + std::to_string(cmp.options.history_limit);
    out.push_back(line + " (run-to-run noise " + fmt_num(100 * m.rel_noise, 2) + "%)");
  }
  return out;
}

std::string render_comparison(const Comparison& cmp, std::string_view format, bool all) {
  if (format == "text") return comparison_text(cmp, all);
  if (format == "json") return comparison_json(cmp);
  if (format == "md" || format == "markdown") return comparison_md(cmp, all);
  if (format == "html") return comparison_html(cmp, all);
  throw std::invalid_argument("unknown comparison format '" + std::string(format) + "' (expected text, json, md or html)");
}

}  // namespace mlsb::reports
