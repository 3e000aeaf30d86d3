// Writes a History as text, JSON ("mlsysbench.history/1"), Markdown or one self-contained HTML page.
#include <stdexcept>

#include "util/json_parse.hpp"
#include "util/text.hpp"
#include "reports/detail/html_page.hpp"
#include "reports/detail/report_text.hpp"
#include "reports/detail/svg_chart.hpp"
#include "reports/history.hpp"
#include "reports/run_listing.hpp"

namespace mlsb::reports {
namespace {

using detail::fmt_num;
using detail::fmt_signed_percent;
using detail::json_number;
using ojson = nlohmann::ordered_json;

// The runs in time order (by start time: ids follow the order of storing, which imports can change).
// Two lines of at most 100 columns: the suite, machine and branch; then the runs and their dates.
std::string heading(const History& h) {
  return "history of suite '" + h.suite + "' on machine " + h.machine_key.substr(0, 16) + ", branch '" + h.branch +
         "'\n" + std::to_string(h.runs.size()) + " runs, " + format_utc(h.runs.front().started_at) + " .. " +
         format_utc(h.runs.back().started_at) + " UTC";
}

}  // namespace

std::string describe(const HistoryRegression& r) {
  const HistorySeries& s = *r.series;
  if (r.drift_end)
    return s.name + " " + s.metric + ": a drift of " + fmt_signed_percent(r.step->change) + " over runs " +
           std::to_string(r.first_run->id) + ".." + std::to_string(r.drift_end->id) + " (" +
           format_utc(r.first_run->started_at) + " .. " + format_utc(r.drift_end->started_at) + " UTC, git " +
           git_label(*r.first_run) + " -> " + git_label(*r.drift_end) + "): " + fmt_num(r.step->before) + " -> " +
           fmt_num(r.step->after) + (s.unit.empty() ? "" : " " + s.unit);
  return s.name + " " + s.metric + ": " + fmt_signed_percent(r.step->change) + " from run " +
         std::to_string(r.first_run->id) + " (" + format_utc(r.first_run->started_at) + " UTC, git " +
         git_label(*r.last_good) + " -> " + git_label(*r.first_run) + "): " + fmt_num(r.step->before) + " -> " +
         fmt_num(r.step->after) + (s.unit.empty() ? "" : " " + s.unit);
}

namespace {

// What the series' detection says in a few words.
std::string verdict(const History& h, const HistorySeries& s) {
  if (!h.detected) return "";
  if (!s.analysis.enough_history)
    return "not enough history (" + std::to_string(s.fitted.size()) + " runs; a step needs " +
           std::to_string(h.options.min_level) + " on each side)";
  int standing = 0, changes = 0;
  for (const auto& st : s.analysis.steps) {
    standing += st.standing;
    changes += st.significant;
  }
  if (standing) return std::to_string(standing) + " regression(s) standing";
  if (changes) return std::to_string(changes) + " change(s), none a standing regression";
  return "no change";
}

// A run on the x axis of a history chart: its short git sha, else the day it ran.
std::string run_label(const RunRecord& r) {
  return !r.git_sha.empty() ? r.git_sha.substr(0, 7) : format_utc(r.started_at).substr(5, 5);
}

std::string point_title(const History& h, const HistorySeries& s, const HistoryPoint& p) {
  const RunRecord& r = h.runs[p.run];
  return "run " + std::to_string(r.id) + " (" + r.uuid.substr(0, 8) + "), git " + git_label(r) + ", " +
         format_utc(r.started_at) + " UTC: " + fmt_num(p.median) + (s.unit.empty() ? "" : " " + s.unit) +
         (p.n >= 2 ? ", 95% CI " + detail::fmt_interval(p.ci_lo, p.ci_hi) : "") + (p.throttled ? " (throttled)" : "");
}

std::string render_text(const History& h) {
  std::string out = heading(h) + "\n";
  for (const auto& s : h.series) {
    const HistoryPoint &first = s.points.front(), &last = s.points.back();
    out += "  " + s.name + "  " + s.metric + (s.primary ? " *" : "") + "  " + std::to_string(s.points.size()) +
           " runs  " + fmt_num(first.median) + " -> " + fmt_num(last.median) + (s.unit.empty() ? "" : " " + s.unit);
    if (h.detected) out += "  " + verdict(h, s);
    out += "\n";
  }
  if (h.detected) {
    const auto regs = standing_regressions(h);
    out += regs.empty() ? "no standing regression of a primary metric\n" : "standing regressions of primary metrics:\n";
    for (const auto& r : regs) out += "  " + describe(r) + "\n";
  }
  return out;
}

std::string render_json(const History& h) {
  ojson runs = ojson::array();
  for (const auto& r : h.runs)
    runs.push_back({{"id", r.id}, {"uuid", r.uuid}, {"started_at", r.started_at}, {"git_sha", r.git_sha},
                    {"tags", r.tags}});
  ojson series = ojson::array();
  for (const auto& s : h.series) {
    ojson points = ojson::array();
    for (const auto& p : s.points)
      points.push_back({{"run_id", h.runs[p.run].id}, {"median", json_number(p.median)}, {"ci_lo", json_number(p.ci_lo)},
                        {"ci_hi", json_number(p.ci_hi)}, {"n", p.n}, {"throttled", p.throttled}});
    ojson entry = {{"workload", s.workload}, {"params_key", s.params_key}, {"comm", s.comm}, {"ranks", s.ranks},
                   {"name", s.name},         {"metric", s.metric},         {"unit", s.unit}, {"better", to_string(s.better)},
                   {"primary", s.primary},   {"points", std::move(points)}};
    if (h.detected) {
      const auto run_id = [&](size_t fitted_index) { return h.runs[s.points[s.fitted[fitted_index]].run].id; };
      ojson levels = ojson::array(), steps = ojson::array();
      for (const auto& l : s.analysis.levels)
        levels.push_back({{"first_run_id", run_id(l.begin)}, {"last_run_id", run_id(l.end - 1)},
                          {"value", json_number(l.value)}, {"noise", json_number(l.noise)}});
      for (const auto& st : s.analysis.steps) {
        steps.push_back({{"run_id", run_id(st.at)}, {"before", json_number(st.before)}, {"after", json_number(st.after)},
                         {"change", json_number(st.change)}, {"worse", st.worse}, {"significant", st.significant},
                         {"standing", st.standing}, {"drift", st.drift}});
        if (st.drift) steps.back()["first_run_id"] = run_id(st.begin), steps.back()["last_run_id"] = run_id(st.end - 1);
      }
      entry["detection"] = {{"enough_history", s.analysis.enough_history}, {"noise", json_number(s.analysis.noise)},
                            {"levels", std::move(levels)}, {"steps", std::move(steps)}};
    }
    series.push_back(std::move(entry));
  }
  ojson out = {{"schema", "mlsysbench.history/1"}, {"suite", h.suite}, {"machine_key", h.machine_key},
               {"branch", h.branch}, {"runs", std::move(runs)}, {"series", std::move(series)}};
  if (h.detected) {
    ojson regs = ojson::array();
    for (const auto& r : standing_regressions(h)) {
      regs.push_back({{"workload", r.series->workload}, {"params_key", r.series->params_key}, {"name", r.series->name},
                      {"metric", r.series->metric}, {"first_run_id", r.first_run->id},
                      {"git_before", r.last_good->git_sha}, {"git_after", r.first_run->git_sha},
                      {"before", json_number(r.step->before)}, {"after", json_number(r.step->after)},
                      {"change", json_number(r.step->change)}, {"drift", r.drift_end != nullptr}});
      if (r.drift_end) regs.back()["last_run_id"] = r.drift_end->id;
    }
    out["options"] = {{"threshold", h.options.threshold}, {"min_level", h.options.min_level},
                      {"penalty", h.options.penalty}, {"noise_factor", h.options.noise_factor}};
    out["regressions"] = std::move(regs);
  }
  return dump_json(out, 2) + "\n";
}

std::string render_md(const History& h) {
  std::string out = "## " + detail::md_escape(heading(h)) + "\n\n";
  if (h.detected) {
    const auto regs = standing_regressions(h);
    out += regs.empty() ? "No standing regression of a primary metric.\n\n" : "**Standing regressions:**\n\n";
    for (const auto& r : regs) out += "- " + detail::md_escape(describe(r)) + "\n";
    if (!regs.empty()) out += "\n";
  }
  out += "| case | metric | runs | oldest | newest |" + std::string(h.detected ? " detection |" : "") + "\n";
  out += "|---|---|---:|---:|---:|" + std::string(h.detected ? "---|" : "") + "\n";
  for (const auto& s : h.series) {
    const std::string unit = s.unit.empty() ? "" : " " + s.unit;
    out += "| " + detail::md_escape(s.name) + " | " + detail::md_escape(s.metric + (s.primary ? " *" : "")) + " | " +
           std::to_string(s.points.size()) + " | " + fmt_num(s.points.front().median) + unit + " | " +
           fmt_num(s.points.back().median) + unit + " |" + (h.detected ? " " + detail::md_escape(verdict(h, s)) + " |" : "") +
           "\n";
  }
  return out;
}

std::string render_html(const History& h) {
  std::string out = detail::html_page_head("mlsysbench history: " + h.suite);
  out += "<header><h1>mlsysbench history</h1>\n<p>" + detail::html_escape(heading(h)) + "</p></header>\n";
  if (h.detected) {
    const auto regs = standing_regressions(h);
    out += "<section><h2>Standing regressions</h2>\n";
    if (regs.empty()) out += "<p>No standing regression of a primary metric.</p>\n";
    else {
      out += "<ul class=\"regressions\">";
      for (const auto& r : regs) out += "<li>" + detail::html_escape(describe(r)) + "</li>";
      out += "</ul>\n";
    }
    out += "</section>\n";
  }
  out += "<section><h2>Series</h2>\n";
  for (const auto& s : h.series) {
    std::vector<detail::HistoryMark> marks;
    for (const auto& p : s.points)
      marks.push_back({p.median, p.n >= 2 ? p.ci_lo : NAN, p.n >= 2 ? p.ci_hi : NAN, point_title(h, s, p), p.throttled,
                       run_label(h.runs[p.run])});
    std::vector<detail::HistoryLevel> levels;
    std::vector<detail::HistoryStepMark> steps;
    if (h.detected) {
      for (const auto& l : s.analysis.levels) levels.push_back({s.fitted[l.begin], s.fitted[l.end - 1] + 1, l.value});
      for (const auto& st : s.analysis.steps) {
        if (!st.significant) continue;
        const RunRecord& r = h.runs[s.points[s.fitted[st.at]].run];
        steps.push_back({s.fitted[st.at], st.standing,
                         std::string(st.standing ? "regression " : st.worse ? "worse (not standing) " : "better ") +
                             (st.drift ? "drift " : "") +
                             fmt_signed_percent(st.change) + " from run " + std::to_string(r.id) + ", git " + git_label(r)});
      }
    }
    const std::string caption = s.name + " — " + detail::metric_with_unit(s.metric, s.unit) + ", " +
                                std::string(to_string(s.better)) + " is better" +
                                (h.detected ? ": " + verdict(h, s) : std::string());
    out += detail::html_figure(caption,
                               detail::history_chart_svg(s.name + " " + s.metric, s.unit, marks, levels, steps));
  }
  out += "</section>\n</body></html>\n";
  return out;
}

}  // namespace

std::string render_history(const History& h, std::string_view format) {
  if (format == "text") return render_text(h);
  if (format == "json") return render_json(h);
  if (format == "md") return render_md(h);
  if (format == "html") return render_html(h);
  throw std::invalid_argument("unknown history format '" + std::string(format) + "' (expected text, json, md or html)");
}

}  // namespace mlsb::reports
