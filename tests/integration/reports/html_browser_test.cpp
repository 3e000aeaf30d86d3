// The HTML report in a real browser (headless Debian Chromium): no console messages at all, the SVG
// charts and tables in the rendered DOM, and a screenshot. Console output is captured with
// --enable-logging=stderr, which logs every console message, uncaught error and CSP violation as a
// "CONSOLE" line; the self-check tests prove the capture catches deliberately broken pages.
#include <gtest/gtest.h>

#include <filesystem>

#include "reports/render.hpp"
#include "support/test_support.hpp"
#include "unit/reports/fixtures.hpp"

namespace mlsb::reports {
namespace {

namespace fs = std::filesystem;
using mlsb::test::CommandResult;
using mlsb::test::TempDir;

const fs::path kChromium = "/usr/bin/chromium";

// Runs headless Chromium on `html` with a fresh profile; `action` is --dump-dom or --screenshot=PATH.
CommandResult chromium(const fs::path& html, const std::string& action) {
  TempDir profile;
  return mlsb::test::run_shell(
      "timeout 120 " + kChromium.string() +
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking"
      " --disable-component-update --disable-sync --user-data-dir='" + profile.path().string() +
      "' --enable-logging=stderr --v=0 --window-size=1280,1600 " + action + " 'file://" + html.string() + "'");
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
  const auto svg = chromium(page("svg.html", "<!DOCTYPE html><html><head><title>t</title></head><body>"
                                             "<svg><rect width=\"5\" height=\"x1\"/></svg></body></html>"),
                            "--dump-dom");
  EXPECT_NE(console_lines(svg.err).find("attribute height"), std::string::npos) << svg.err;
  const auto fetch = chromium(page("net.html", "<!DOCTYPE html><html><head>" + csp +
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
  EXPECT_NE(r.out.find("<td>experts=8,topk=2</td>"), std::string::npos);
  EXPECT_NE(r.out.find("gradient mismatch | max err &lt;0.5&gt; &amp; more"), std::string::npos);
  EXPECT_NE(r.out.find("<th>AST accuracy</th>"), std::string::npos);
}

TEST_F(ReportsHtmlBrowserTest, ReportScreenshotIsAPng) {
  const fs::path png = tmp_ / "report.png";
  const auto r = chromium(page("report.html", render(test::fixture_run(), Format::Html)), "--screenshot=" + png.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(console_lines(r.err), "");
  ASSERT_TRUE(fs::exists(png)) << r.err;
  EXPECT_GT(fs::file_size(png), 1000u);
  EXPECT_EQ(mlsb::test::read_file(png).substr(1, 3), "PNG");
}

}  // namespace
}  // namespace mlsb::reports
