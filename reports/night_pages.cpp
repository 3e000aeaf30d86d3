#include "reports/night_pages.hpp"

#include <algorithm>
#include <cmath>

#include "reports/detail/html_page.hpp"
#include "reports/detail/report_text.hpp"
#include "reports/detail/svg_parts.hpp"
#include "reports/run_listing.hpp"
#include "util/text.hpp"

namespace mlsb::reports {
namespace {

using detail::fmt_num;
using detail::html_escape;

const char* const kExitCodes =
    "Exit status: 0 pass (also \"no baseline yet\"), 1 confirmed regression, 2 usage error, 3 unfit environment, "
    "4 build failure or failed case, 130 interrupted.";

// The change in the worse direction: > 0 is worse, whatever the metric's Better.
double worseness(const MetricComparison& m) { return m.better == Better::Lower ? m.ratio - 1 : 1 / m.ratio - 1; }

std::string medians(const MetricComparison& m) {
  return fmt_num(m.base_median) + " → " + fmt_num(m.cand_median) + (m.unit.empty() ? "" : " " + m.unit);
}

// The gate's detection power for this metric: the smallest worse step it catches with 95% probability.
std::string detects(const MetricComparison& m) {
  if (!std::isfinite(m.detectable)) return "needs 2 runs of history";
  if (m.deterministic) return "≥ " + fmt_num(100 * m.detectable, 2) + "% (counted)";
  return "≥ " + fmt_num(100 * m.detectable, 2) + "% (" + std::to_string(m.history_n) + " runs)";
}

// The newest 16 values as block characters, lowest to highest ("▁▃▂█"); a flat series sits in the middle.
std::string text_sparkline(const std::vector<double>& values) {
  static const char* const kBlocks[] = {"▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  const size_t from = values.size() > 16 ? values.size() - 16 : 0;
  const auto [lo, hi] = std::minmax_element(values.begin() + static_cast<std::ptrdiff_t>(from), values.end());
  std::string out;
  for (size_t i = from; i < values.size(); ++i) {
    const int level = *hi > *lo ? static_cast<int>(std::lround(7 * (values[i] - *lo) / (*hi - *lo))) : 3;
    out += kBlocks[level];
  }
  return out;
}

// A 120 x 28 px line of the history, the newest point marked, red when the change is "worse".
std::string svg_sparkline(const NightChange& c) {
  const auto& v = c.history;
  const auto& m = *c.metric;
  const double w = 120, h = 28, pad = 3;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const auto x = [&](size_t i) { return v.size() < 2 ? w / 2 : pad + (w - 2 * pad) * i / (v.size() - 1.0); };
  const auto y = [&](double value) { return *hi > *lo ? h - pad - (h - 2 * pad) * (value - *lo) / (*hi - *lo) : h / 2; };
  std::string points;
  for (size_t i = 0; i < v.size(); ++i) points += (i ? " " : "") + detail::svg_px(x(i)) + "," + detail::svg_px(y(v[i]));
  const std::string title = m.name + " " + m.metric + ": " + std::to_string(v.size()) + " nightly runs, " +
                            fmt_num(*lo) + " to " + fmt_num(*hi) + (m.unit.empty() ? "" : " " + m.unit) +
                            ", newest last";
  return detail::svg_open(w, h, title, std::string("spark") + (m.verdict == Verdict::Worse ? " worse" : "")) +
         "<polyline class=\"line\" points=\"" + points + "\"/><circle class=\"pt\" cx=\"" + detail::svg_px(x(v.size() - 1)) +
         "\" cy=\"" + detail::svg_px(y(v.back())) + "\" r=\"2.5\"/></svg>";
}

// The context line without Markdown's code marks.
std::string plain(std::string text) {
  std::erase(text, '`');
  return text;
}

std::string md_cell(const std::string& v) { return v.empty() ? "—" : detail::md_escape(v); }
std::string html_cell(const std::string& v) { return v.empty() ? "—" : html_escape(v); }

std::vector<std::string> all_notes(const NightlyResult& night, const std::vector<std::string>& extra_notes) {
  std::vector<std::string> notes = extra_notes;
  for (const auto& s : night.suites) notes.insert(notes.end(), s.notes.begin(), s.notes.end());
  if (night.stopped) notes.push_back("the night stopped early: the suites after the last one listed did not run");
  return notes;
}

std::string run_of(const SuiteNight& s) { return s.run ? std::to_string(s.run->run.id) : "—"; }

}  // namespace

std::vector<NightPage> night_pages(const SuiteNight& s) {
  std::vector<NightPage> out;
  const auto add = [&](bool wrote, const char* label, const char* kind) {
    if (wrote) out.push_back({label, night_file_stem(kind, s.suite) + ".html"});
  };
  add(s.run.has_value(), "report", "report");
  add(s.comparison.has_value(), "compare", "compare");
  add(s.rerun_comparison.has_value(), "re-run", "compare-confirm");
  add(s.history.has_value(), "history", "history");
  return out;
}

std::string night_commits(const SuiteNight& s) {
  const auto at = [](const RunRecord& r) {
    return git_label(r) + (r.started_at > 0 ? " of " + format_utc(r.started_at).substr(0, 10) : "");
  };
  if (s.comparison) {
    const RunRecord &base = s.comparison->base, &cand = s.comparison->cand;
    const bool same = !cand.git_sha.empty() && base.git_sha == cand.git_sha;
    return at(base) + " .. " + at(cand) + (same ? " (the same commit: an unchanged commit is judged too)" : "");
  }
  return s.run ? at(s.run->run) : "";
}

std::vector<NightChange> night_worst_changes(const NightlyResult& night, size_t n) {
  std::vector<NightChange> all;
  for (const auto& s : night.suites) {
    if (!s.comparison) continue;
    for (const auto& m : s.comparison->metrics) {
      if (!m.primary || !std::isfinite(m.ratio) || m.ratio <= 0) continue;
      NightChange c{&s, &m, {}};
      if (s.history)
        for (const auto& series : s.history->series)
          if (series.workload == m.workload && series.params_key == m.params_key && series.metric == m.metric) {
            for (const auto& p : series.points) c.history.push_back(p.median);
            break;
          }
      all.push_back(std::move(c));
    }
  }
  std::stable_sort(all.begin(), all.end(), [](const NightChange& a, const NightChange& b) {
    const bool wa = a.metric->verdict == Verdict::Worse, wb = b.metric->verdict == Verdict::Worse;
    return wa != wb ? wa : worseness(*a.metric) > worseness(*b.metric);
  });
  if (all.size() > n) all.resize(n);
  return all;
}

std::string render_night_summary(const NightlyResult& night, const std::string& context,
                                 const std::vector<std::string>& extra_notes) {
  std::string md = "# mlsysbench nightly: " + night_status_name(night.status) + " (exit " +
                   std::to_string(night.status) + ")\n\n" + (context.empty() ? "" : context + "\n\n");
  if (!night.suites.empty()) {
    md += "| suite | run | commits | cases | against the baseline | re-run | history | pages |\n"
          "|---|---|---|---|---|---|---|---|\n";
    for (const auto& s : night.suites) {
      std::vector<std::string> links;
      for (const auto& p : night_pages(s)) links.push_back("[" + p.label + "](" + p.file + ")");
      md += "| " + md_cell(s.name) + " | " + run_of(s) + " | " + md_cell(night_commits(s)) + " | " + md_cell(s.cases) +
            " | " + md_cell(s.against_baseline) + " | " + md_cell(s.rerun_verdict) + " | " + md_cell(s.history_verdict) +
            " | " + (links.empty() ? "—" : join(links, " · ")) + " |\n";
    }
    md += "\n";
  }
  if (const auto worst = night_worst_changes(night); !worst.empty()) {
    md += "## Worst changes of primary metrics\n\n| suite | case | metric | base → night | change | verdict | history | "
          "gate detects |\n|---|---|---|---|---|---|---|---|\n";
    for (const auto& c : worst) {
      const auto& m = *c.metric;
      md += "| " + md_cell(c.suite->name) + " | " + md_cell(utf8_truncate(m.name, 60, "…")) + " | " + md_cell(m.metric) +
            " | " + md_cell(medians(m)) + " | " + detail::fmt_signed_percent(m.ratio - 1) + " | " +
            (m.verdict == Verdict::Worse ? "**worse**" : std::string(to_string(m.verdict))) + " | " +
            (c.history.size() > 1 ? text_sparkline(c.history) : "—") + " | " + detects(m) + " |\n";
    }
    md += "\n";
  }
  const std::string tail = std::string(kExitCodes) +
                           "\n\nFiles: `index.html` (this summary with charts), each page above also as .json (and "
                           ".md), `env.json`, `store.db` (a copy of the store), `logs/`.\n";
  const auto notes = all_notes(night, extra_notes);
  if (!notes.empty()) {
    md += "## Notes\n\n";
    const size_t reserve = tail.size() + 64;  // the tail and the line naming what was cut
    size_t shown = 0;
    for (const auto& n : notes) {
      const std::string line = "- " + utf8_truncate(n, 400, "… (index.html has it whole)") + "\n";
      if (md.size() + line.size() + reserve > kMaxNightSummaryBytes) break;
      md += line;
      ++shown;
    }
    if (shown < notes.size())
      md += "- " + std::to_string(notes.size() - shown) + " more note(s) in `index.html`\n";
    md += "\n";
  }
  return md + tail;
}

std::string render_night_index(const NightlyResult& night, const std::string& context,
                               const std::vector<std::string>& extra_notes) {
  const char* tone = night.status == kNightPass                                             ? "pass"
                     : night.status == kNightRegression || night.status == kNightFailed ? "fail"
                                                                                          : "warn";
  std::string out = detail::html_page_head("mlsysbench nightly: " + night_status_name(night.status));
  out += "<h1>mlsysbench nightly</h1>\n<p class=\"banner " + std::string(tone) + "\">" +
         html_escape(night_status_name(night.status)) + " · exit " + std::to_string(night.status) + "</p>\n" +
         (context.empty() ? "" : "<p>" + html_escape(plain(context)) + "</p>\n");
  if (!night.suites.empty()) {
    out += "<table class=\"night\"><thead><tr><th>suite</th><th>run</th><th>commits</th><th>cases</th><th>against the "
           "baseline</th><th>re-run</th><th>history</th><th>pages</th></tr></thead><tbody>\n";
    for (const auto& s : night.suites) {
      std::string links;
      for (const auto& p : night_pages(s))
        links += (links.empty() ? "" : " ") + std::string("<a href=\"") + html_escape(p.file) + "\">" +
                 html_escape(p.label) + "</a>";
      out += "<tr><td>" + html_escape(s.name) + "</td><td class=\"num\">" + run_of(s) + "</td><td>" +
             html_cell(night_commits(s)) + "</td><td>" + html_cell(s.cases) + "</td><td>" +
             html_cell(s.against_baseline) + "</td><td>" + html_cell(s.rerun_verdict) + "</td><td>" +
             html_cell(s.history_verdict) + "</td><td class=\"links\">" + (links.empty() ? "—" : links) + "</td></tr>\n";
    }
    out += "</tbody></table>\n";
  }
  if (const auto worst = night_worst_changes(night); !worst.empty()) {
    out += "<h2>Worst changes of primary metrics</h2>\n<table class=\"night\"><thead><tr><th>suite</th><th>case</th>"
           "<th>metric</th><th>base → night</th><th>change</th><th>verdict</th><th>history</th><th>gate detects</th>"
           "</tr></thead><tbody>\n";
    for (const auto& c : worst) {
      const auto& m = *c.metric;
      const std::string verdict(to_string(m.verdict));
      out += std::string("<tr") + (m.verdict == Verdict::Worse ? " class=\"worse\"" : "") + "><td>" +
             html_escape(c.suite->name) + "</td><td class=\"case\">" + detail::html_breakable(m.name) + "</td><td>" +
             html_escape(m.metric) + "</td><td class=\"val\">" + html_escape(fmt_num(m.base_median)) + "&nbsp;→ " +
             html_escape(fmt_num(m.cand_median)) + (m.unit.empty() ? "" : "&nbsp;" + html_escape(m.unit)) +
             "</td><td class=\"num\">" +
             detail::fmt_signed_percent(m.ratio - 1) + "</td><td>" + html_escape(verdict) +
             (m.why.empty() ? "" : "<div class=\"why\">" + html_escape(m.why) + "</div>") + "</td><td>" +
             (c.history.size() > 1 ? svg_sparkline(c) : "—") + "</td><td>" + html_escape(detects(m)) + "</td></tr>\n";
    }
    out += "</tbody></table>\n<p class=\"why\">Gate detects: the smallest worse step of the primary metric that the "
           "gate catches with 95% probability, with the history it has (runs).</p>\n";
  }
  if (const auto notes = all_notes(night, extra_notes); !notes.empty()) {
    out += "<h2>Notes</h2><ul class=\"notes\">";
    for (const auto& n : notes) out += "<li>" + html_escape(n) + "</li>";
    out += "</ul>\n";
  }
  out += "<p>" + html_escape(kExitCodes) +
         "</p>\n<p>Also here: <a href=\"summary.md\">summary.md</a>, <a href=\"env.json\">env.json</a>, "
         "<a href=\"store.db\">store.db</a> (a copy of the store), <a href=\"logs/\">logs/</a>; each page also as "
         ".json (and .md).</p>\n</body></html>\n";
  return out;
}

}  // namespace mlsb::reports
