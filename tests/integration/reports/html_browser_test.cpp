// The HTML report in a real browser (headless Debian Chromium, 1400 x 2400 window): no console messages at
// all, the SVG charts and tables in the rendered DOM, every table within the window width even with long
// cells, and a screenshot. Console output is captured with
// --enable-logging=stderr, which logs every console message, uncaught error and CSP violation as a
// "CONSOLE" line; the self-check tests prove the capture catches deliberately broken pages.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <tuple>

#include "reports/compare.hpp"
#include "reports/detail/html_page.hpp"
#include "reports/history.hpp"
#include "reports/night_pages.hpp"
#include "reports/render.hpp"
#include "support/test_support.hpp"
#include "unit/reports/fixtures.hpp"

namespace mlsb::reports {
namespace {

namespace fs = std::filesystem;
using mlsb::test::CommandResult;
using mlsb::test::TempDir;

const fs::path kChromium = "/usr/bin/chromium";

// Runs headless Chromium on `html` with a fresh profile and a window `width` px wide; `action` is
// --dump-dom or --screenshot=PATH.
CommandResult chromium(const fs::path& html, const std::string& action, int width = 1400) {
  TempDir profile;
  return mlsb::test::run_shell(
      "timeout 120 " + kChromium.string() +
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking"
      " --disable-component-update --disable-sync --user-data-dir='" +
      profile.path().string() + "' --enable-logging=stderr --v=0 --window-size=" + std::to_string(width) + ",2400 " +
      action + " 'file://" + html.string() + "'");
}

// The fixture run with long cells: two cases share a label, so both fall back to their 230-character
// params_key, and a failure reason and a tool-call query run to hundreds of characters.
RunData wide_run() {
  RunData d = test::fixture_run();
  std::string key;
  for (int i = 0; i < 20; ++i) key += std::string(i ? "," : "") + "axis_number_" + std::to_string(i) + "=v";
  for (int variant : {1, 2}) {
    CaseRecord c = test::make_case("moe_train", {}, {{"time_ms", {10.0 + variant, 10.2 + variant}}});
    c.params_key = key + ",variant=" + std::to_string(variant);
    c.label = "same-label";
    d.cases.insert(d.cases.begin() + 1, std::move(c));
  }
  // Every kind of chart: a loss curve with its eval mark, columns per expert, a Pareto scatter, a breakdown.
  CaseRecord& first = d.cases.front();
  for (int i = 0; i < 50; ++i)
    first.items.push_back({"series/loss/" + std::to_string(i), {{"x", i}, {"y", 5.5 - i * 0.05}}});
  first.items.push_back(
      {"chart/loss", {{"y_label", "training loss (nats/byte)"}, {"marks", {{{"y", 3.4}, {"label", "eval loss"}}}}}});
  for (int e = 0; e < 64; ++e)
    first.items.push_back({"series/expert_load/" + std::to_string(e), {{"x", e}, {"y", 100 + e % 7 * 20}}});
  first.items.push_back(
      {"chart/expert_load",
       {{"x_label", "expert"}, {"kind", "columns"}, {"marks", {{{"y", 160}, {"label", "balanced"}}}}}});
  for (const auto& [metric, value] :
       {std::pair{"step_ms", 10.0}, {"forward_ms", 3.0}, {"backward_ms", 5.0}, {"optimizer_ms", 1.5}})
    first.summaries.push_back({metric, "ms", Better::Lower, summarize(std::vector<double>{value, value})});
  for (const auto& [codec, ratio, gbps] : {std::tuple{"zstd", 1.4, 0.8}, {"lz4", 1.1, 2.5}, {"topk", 16.7, 0.5}})
    d.cases.push_back(test::make_case("compress", {{"codec", codec}, {"elements", 1048576}},
                                      {{"ratio", {ratio, ratio}}, {"compress_gbps", {gbps, gbps}}}));
  for (auto& c : d.cases) {
    if (c.status == reports::CaseStatus::Failed) c.reason = "gradient mismatch: " + std::string(400, 'x') + " and more";
    for (auto& [key, item] : c.items)
      if (!item.value("pass", true)) item["query"] = "Read " + std::string(300, 'q') + " please";
  }
  return d;
}

// `base` measured again 1.5x slower: every time_ms is worse.
RunData slower_run(const RunData& base) {
  RunData cand = base;
  cand.run.id = base.run.id + 1;
  cand.run.git_sha = "fedcba9876543210";
  cand.run.started_at = base.run.started_at + 86400;
  for (auto& c : cand.cases) {
    for (double& v : c.samples["time_ms"]) v *= 1.5;
    for (auto& s : c.summaries) s.stats = summarize(c.samples[s.metric]);
  }
  return cand;
}

// A night with a confirmed regression of the wide run, a history of eight nights per case (the last one
// slower) and twenty long notes: what index.html shows after a bad night.
NightlyResult regression_night() {
  NightlyResult night;
  night.status = kNightRegression;
  SuiteNight& s = night.suites.emplace_back();
  s.suite = s.name = "smoke";
  const RunData base = wide_run();
  s.run = slower_run(base);
  s.comparison = compare_runs(base, *s.run);
  s.cases = "8 ok, 1 failed, 1 skipped";
  s.against_baseline = "3 case(s) worse than run 7 of 2026-01-01";
  s.rerun_verdict = "3 confirmed";
  s.history_verdict = "no standing regression";
  History h;
  for (const auto& m : s.comparison->metrics) {
    if (!m.primary) continue;
    HistorySeries& series = h.series.emplace_back();
    series.workload = m.workload, series.params_key = m.params_key, series.metric = m.metric;
    for (size_t i = 0; i < 8; ++i) series.points.push_back({i, (i == 7 ? 1.5 : 1.0 + 0.01 * (i % 3)) * m.base_median});
  }
  s.history = std::move(h);
  for (int i = 0; i < 20; ++i) s.notes.push_back("smoke: note " + std::to_string(i) + " " + std::string(200, 'n'));
  return night;
}

// The report with a script appended that measures, after layout, how far the page and its elements reach
// beyond the window (a wide table scrolls in its own box: its cells are not counted), the table cells
// whose text spills out of them, and the repeated bar labels of each chart ("fit: scroll=... client=...
// over=N spill=N dup=N" in the dumped DOM). The CSP is relaxed for that one inline script.
std::string with_layout_probe(std::string html) {
  const std::string csp = "default-src 'none'; style-src 'unsafe-inline'";
  html.replace(html.find(csp), csp.size(), csp + "; script-src 'unsafe-inline'");
  const std::string probe = R"(<script>
const w = document.documentElement.clientWidth;
const over = [...document.querySelectorAll('th,td,svg,p,h2,h3')]
  .filter(e => !e.closest('div.wide, figure') && e.getBoundingClientRect().right > w + 0.5)
  .map(e => e.tagName + ':' + e.textContent.slice(0, 40));
const spill = [...document.querySelectorAll('th,td')].filter(e => e.scrollWidth > e.clientWidth + 1)
  .map(e => e.tagName + ':' + e.textContent.slice(0, 40));
let dup = [];
for (const svg of document.querySelectorAll('svg.chart')) {
  const labels = [...svg.querySelectorAll('text.lbl')].map(t => t.textContent);
  dup = dup.concat(labels.filter((l, i) => labels.indexOf(l) != i));
}
// The right edge of the first verdict cell of a compare page (-1 without one), and the smallest font of any
// element that shows text of its own.
const verdict = document.querySelector('td.verdict');
const right = verdict ? Math.round(verdict.getBoundingClientRect().right) : -1;
let font = 1000;
for (const e of document.body.querySelectorAll('*'))
  if ([...e.childNodes].some(n => n.nodeType == 3 && n.textContent.trim()) && e.getClientRects().length)
    font = Math.min(font, parseFloat(getComputedStyle(e).fontSize));
// The bottom of the last table of a nightly index (-1 without one): what must fit the first screen.
const nights = document.querySelectorAll('table.night');
const night = nights.length ? Math.round(nights[nights.length - 1].getBoundingClientRect().bottom) : -1;
// A chart's text is drawn at its font size times the chart's scale: a chart shrunk to fit draws it smaller.
for (const svg of document.querySelectorAll('svg.chart')) {
  const scale = svg.getBoundingClientRect().width / svg.width.baseVal.value;
  for (const t of svg.querySelectorAll('text'))
    font = Math.min(font, parseFloat(getComputedStyle(t).fontSize) * scale);
}
// Chart text drawn outside its chart (clipped: "6083" drawn as "083").
let clip = 0;
for (const svg of document.querySelectorAll('svg.chart')) {
  const box = svg.getBoundingClientRect();
  for (const t of svg.querySelectorAll('text')) {
    const r = t.getBoundingClientRect();
    if (r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5) ++clip;
  }
}
const out = document.createElement('pre');
out.id = 'fit';
out.textContent = 'fit: scroll=' + document.documentElement.scrollWidth + ' client=' + w + ' over=' + over.length +
  ' spill=' + spill.length + ' dup=' + dup.length + ' verdict=' + right + ' font=' + Math.round(font) + ' night=' + night + ' clip=' + clip +
  (over.length ? ' first=' + over[0] : '') +
  (spill.length ? ' spilled=' + spill[0] : '') + (dup.length ? ' duplicate=' + dup[0] : '');
document.body.append(out);
</script>)";
  html.insert(html.rfind("</body>"), probe);
  return html;
}

// What the layout probe of with_layout_probe measured, read from the dumped DOM (ok false when it did not run).
struct Fit {
  bool ok = false;
  std::string line;
  int scroll = 0, client = 0, over = -1, spill = -1, dup = -1, verdict = -1, font = 0, night = -1, clip = -1;
};
Fit read_fit(const std::string& dom) {
  Fit f;
  const std::string marker = "<pre id=\"fit\">";
  auto at = dom.find(marker);
  if (at == std::string::npos) return f;
  at += marker.size();
  f.line = dom.substr(at, dom.find('<', at) - at);
  f.ok = std::sscanf(f.line.c_str(),
                     "fit: scroll=%d client=%d over=%d spill=%d dup=%d verdict=%d font=%d night=%d clip=%d", &f.scroll,
                     &f.client, &f.over, &f.spill, &f.dup, &f.verdict, &f.font, &f.night, &f.clip) == 9;
  return f;
}

// The console lines (messages, uncaught errors, CSP violations) Chromium logged.
std::string console_lines(const std::string& log) {
  std::string out, line;
  std::istringstream in(log);
  while (std::getline(in, line))
    if (line.find(":CONSOLE") != std::string::npos) out += line + "\n";
  return out;
}

class ReportsHtmlBrowserTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kChromium)) GTEST_SKIP() << kChromium << " absent";
  }
  // Writes `text` to a file in the temp dir and returns its path.
  fs::path page(const std::string& name, const std::string& text) {
    const fs::path p = tmp_ / name;
    mlsb::test::write_file(p, text);
    return p;
  }
  // Lays out page `name` (html) `width` px wide and expects what every page of ours keeps: no console
  // message, no sideways scroll, nothing beyond the window, no text under 11 px. Returns what the probe
  // measured. MLSB_KEEP_SCREENSHOT_DIR=DIR keeps a screenshot, DIR/<name>-<width>.png, for a person.
  Fit laid_out(const std::string& name, const std::string& html, int width) {
    const auto r = chromium(page(name + ".html", with_layout_probe(html)), "--dump-dom", width);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(console_lines(r.err), "");
    const Fit fit = read_fit(r.out);
    EXPECT_TRUE(fit.ok) << "the layout probe did not run: " << fit.line;
    EXPECT_LE(fit.scroll, fit.client) << width << ": " << fit.line;
    EXPECT_EQ(fit.over, 0) << width << ": " << fit.line;
    EXPECT_GE(fit.font, 11) << width << ": " << fit.line;
    EXPECT_EQ(fit.clip, 0) << width << ": " << fit.line;
    if (const char* keep = std::getenv("MLSB_KEEP_SCREENSHOT_DIR"))
      chromium(page(name + "-shot.html", html),
               "--screenshot=" + (fs::path(keep) / (name + "-" + std::to_string(width) + ".png")).string(), width);
    return fit;
  }
  TempDir tmp_;
};

TEST_F(ReportsHtmlBrowserTest, ConsoleCheckCatchesAScriptError) {
  const auto r = chromium(page("broken.html",
                               "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>t</title></head><body>"
                               "<p>x</p><script>notDefined();</script></body></html>"),
                          "--dump-dom");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(console_lines(r.err).find("Uncaught ReferenceError"), std::string::npos) << r.err;
}

TEST_F(ReportsHtmlBrowserTest, ConsoleCheckCatchesABadSvgAttributeAndABlockedFetch) {
  const std::string csp = "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\">";
  const auto svg = chromium(page("svg.html",
                                 "<!DOCTYPE html><html><head><title>t</title></head><body>"
                                 "<svg><rect width=\"5\" height=\"x1\"/></svg></body></html>"),
                            "--dump-dom");
  EXPECT_NE(console_lines(svg.err).find("attribute height"), std::string::npos) << svg.err;
  const auto fetch =
      chromium(page("net.html", "<!DOCTYPE html><html><head>" + csp +
                                    "<title>t</title></head><body><img src=\"https://example.invalid/a.png\">"
                                    "</body></html>"),
               "--dump-dom");
  EXPECT_NE(console_lines(fetch.err).find("Content Security Policy"), std::string::npos) << fetch.err;
}

TEST_F(ReportsHtmlBrowserTest, ReportLoadsWithoutConsoleMessagesAndRendersTablesAndCharts) {
  const auto r = chromium(page("report.html", render(test::fixture_run(), Format::Html)), "--dump-dom");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(console_lines(r.err), "");
  EXPECT_NE(r.out.find("<svg"), std::string::npos);
  EXPECT_NE(r.out.find("class=\"bar\""), std::string::npos);
  EXPECT_NE(r.out.find("<table class=\"cases\">"), std::string::npos);
  EXPECT_NE(r.out.find("<td class=\"text\">moe_train/<wbr>experts=8</td>"), std::string::npos);
  EXPECT_NE(r.out.find("gradient mismatch | max err &lt;0.5&gt; &amp; more"), std::string::npos);
  EXPECT_NE(r.out.find("<th>AST accuracy</th>"), std::string::npos);
}

// At 1400 and at 800 px: no horizontal page scroll, nothing beyond the window, no table cell whose text
// spills over its neighbours, and no chart with two bars of one label.
TEST_F(ReportsHtmlBrowserTest, TablesWithLongCellsFitTheWindowAndChartLabelsAreDistinct) {
  for (int width : {1400, 800}) {
    const auto r =
        chromium(page("wide.html", with_layout_probe(render(wide_run(), Format::Html))), "--dump-dom", width);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(console_lines(r.err), "");
    const Fit fit = read_fit(r.out);
    ASSERT_TRUE(fit.ok) << "the layout probe did not run: " << fit.line;
    EXPECT_GT(fit.client, width - 100) << fit.line;               // the window is really that wide
    EXPECT_LE(fit.scroll, fit.client) << fit.line;                // no horizontal page scroll
    EXPECT_EQ(fit.over, 0) << fit.line;                           // no cell, chart or heading beyond the window
    EXPECT_EQ(fit.spill, 0) << fit.line;                          // no cell's text printed over its neighbours
    EXPECT_EQ(fit.dup, 0) << fit.line;                            // every bar of a chart tells its case apart
    EXPECT_GE(fit.font, 11) << fit.line;                          // a wide chart scrolls, its text never shrinks
    EXPECT_NE(r.out.find("axis_number_0=v"), std::string::npos);  // the colliding names fell back to params_key
    for (const char* chart : {"class=\"frontier\"", "class=\"mark\"", "class=\"part p2\"", "log scale"})
      EXPECT_NE(r.out.find(chart), std::string::npos) << chart;  // every kind of chart was laid out
  }
}

// A compare page with a regression, every row shown and case names of 230 characters: at 1400 and at 800 px
// the page does not scroll sideways, the verdict column lies inside the window, and no text is drawn smaller
// than 11 px.
TEST_F(ReportsHtmlBrowserTest, ComparePageShowsTheVerdictWithinTheWindowAtBothWidths) {
  const RunData base = wide_run();
  const std::string html = render_comparison(compare_runs(base, slower_run(base)), "html", /*all=*/true);
  ASSERT_NE(html.find("REGRESSION"), std::string::npos);
  for (int width : {1400, 800}) {
    const Fit fit = laid_out("compare", html, width);
    EXPECT_GT(fit.verdict, 0) << width << ": " << fit.line;
    EXPECT_LE(fit.verdict, fit.client) << width << ": " << fit.line;
  }
}

// The nightly's index.html after a bad night: at 1400 px the banner, the suite row and the worst changes
// fit the first screen (900 px); at both widths nothing scrolls sideways or lies beyond the window, and no
// text is under 11 px.
TEST_F(ReportsHtmlBrowserTest, NightlyIndexFitsOneScreenAtBothWidths) {
  const std::string html = render_night_index(regression_night(), "2026-01-02T02:00:00Z · commit `fedcba9876`");
  ASSERT_NE(html.find("banner fail"), std::string::npos);
  ASSERT_NE(html.find("<svg"), std::string::npos);  // the sparklines
  for (int width : {1400, 800}) {
    const Fit fit = laid_out("index", html, width);
    EXPECT_EQ(fit.spill, 0) << width << ": " << fit.line;
    EXPECT_GT(fit.night, 0) << width << ": " << fit.line;
    if (width == 1400) {
      EXPECT_LE(fit.night, 900) << fit.line;
    }
  }
}

// The layout probe itself: a label drawn left of its chart counts as clipped, and a chart shrunk to fit the
// window counts its text at the size it is drawn.
TEST_F(ReportsHtmlBrowserTest, LayoutProbeCatchesClippedAndShrunkChartText) {
  const std::string page_html =
      detail::html_page_head("probe") +
      "<figure><svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"100\" height=\"40\">"
      "<text x=\"-20\" y=\"20\">6083</text></svg></figure>"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" style=\"max-width:50%;height:auto\" width=\"2000\" "
      "height=\"40\" viewBox=\"0 0 2000 40\"><text x=\"100\" y=\"20\">small</text></svg></body></html>\n";
  const auto r = chromium(page("probe.html", with_layout_probe(page_html)), "--dump-dom", 800);
  const Fit fit = read_fit(r.out);
  ASSERT_TRUE(fit.ok) << fit.line;
  EXPECT_EQ(fit.clip, 1) << fit.line;
  EXPECT_LT(fit.font, 11) << fit.line;
}

// A history page with a step in a series of four-digit values and a constant series: every tick label lies
// inside its chart at both widths (none clipped), and no text is under 11 px.
TEST_F(ReportsHtmlBrowserTest, HistoryPageKeepsItsLabelsInsideTheCharts) {
  History h;
  h.suite = "smoke", h.machine_key = "ci-gpu-1", h.branch = "main";
  for (int i = 0; i < 20; ++i) {
    RunRecord r;
    r.id = i + 1;
    r.uuid = "00000000-0000-4000-8000-0000000000" + std::to_string(10 + i);
    r.git_sha = std::to_string(1000000 + i) + "abcdef";
    r.started_at = 1767225600 + 86400.0 * i;
    h.runs.push_back(r);
  }
  for (const auto& [name, base, jump] : {std::tuple{"codec=zstd", 6083.0, 1.3}, {"codec=lz4", 42.0, 1.0}}) {
    HistorySeries& s = h.series.emplace_back();
    s.workload = "compress", s.params_key = name, s.name = std::string("compress/") + name;
    s.metric = "time_ms", s.unit = "ms", s.primary = true;
    for (size_t i = 0; i < h.runs.size(); ++i) {
      const double v = base * (i >= 12 ? jump : 1.0) * (1 + 0.002 * static_cast<double>(i % 3));
      s.points.push_back({i, v, v * 0.99, v * 1.01, 5});
    }
  }
  detect_history(h, {});
  const std::string html = render_history(h, "html");
  for (int width : {1400, 800}) laid_out("history", html, width);
}

// A size sweep's report (two codecs over 64Ki..4Mi elements): the log-log chart with a line per codec, the
// GB/s chart and a Pareto frontier per size keep their labels inside the charts and at 11 px or more at both
// widths (a chart wider than the window scrolls), and the page does not scroll sideways.
TEST_F(ReportsHtmlBrowserTest, SizeSweepReportKeepsItsChartsReadableAtBothWidths) {
  RunData d = test::fixture_run();
  d.cases.clear();
  for (const auto& [codec, ratio, gbps] : {std::tuple{"exponent", 1.3, 1.5}, {"int8-block", 3.9, 4.0}})
    for (int e = 65536; e <= 4194304; e *= 4) {
      const double ms = e * 4 / (gbps * 1e6);
      d.cases.push_back(test::make_case("compress.codec", {{"codec", codec}, {"elements", e}},
                                        {{"time_ms", {ms, ms * 1.01}}, {"ratio", {ratio, ratio}},
                                         {"compress_gbps", {gbps, gbps * 0.99}}}));
      for (auto& s : d.cases.back().summaries)
        s.unit = s.metric == "time_ms" ? "ms" : s.metric == "compress_gbps" ? "GB/s" : "ratio";
    }
  const std::string html = render(d, Format::Html);
  ASSERT_NE(html.find("a line per codec"), std::string::npos);
  ASSERT_NE(html.find("compress_gbps (GB/s) against elements"), std::string::npos);
  for (int width : {1400, 800}) laid_out("sweep", html, width);
}

TEST_F(ReportsHtmlBrowserTest, ReportScreenshotIsAPng) {
  const fs::path png = tmp_ / "report.png";
  const auto r = chromium(page("report.html", render(wide_run(), Format::Html)), "--screenshot=" + png.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(console_lines(r.err), "");
  ASSERT_TRUE(fs::exists(png)) << r.err;
  EXPECT_GT(fs::file_size(png), 1000u);
  EXPECT_EQ(mlsb::test::read_file(png).substr(1, 3), "PNG");
  // MLSB_KEEP_SCREENSHOT=FILE keeps a copy of the screenshot for a person to look at.
  if (const char* keep = std::getenv("MLSB_KEEP_SCREENSHOT"))
    fs::copy_file(png, keep, fs::copy_options::overwrite_existing);
}

}  // namespace
}  // namespace mlsb::reports
