#include "reports/detail/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "harness/text.hpp"
#include "reports/detail/report_text.hpp"

namespace mlsb::reports::detail {
namespace {

constexpr double kPlotWidth = 400, kValueWidth = 120, kRow = 18, kTop = 8, kAxis = 22;
constexpr double kCharWidth = 6.2;  // px of an 11 px label character, generously
constexpr size_t kMaxLabel = 96;

std::string px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// A label over kMaxLabel bytes keeps its start and its end (where case names differ most).
std::string shorten(const std::string& s) {
  if (s.size() <= kMaxLabel) return s;
  const size_t half = kMaxLabel / 2 - 1;
  size_t tail = s.size() - half;
  while (tail < s.size() && (static_cast<unsigned char>(s[tail]) & 0xC0) == 0x80) ++tail;
  return utf8_truncate(s, half, "") + "…" + s.substr(tail);
}

}  // namespace

std::vector<std::string> distinct_labels(const std::vector<std::string>& names) {
  if (names.size() < 2) return names;
  std::vector<std::vector<std::string>> tokens;
  std::map<std::string, size_t> names_with;  // axis=value -> how many names hold it
  for (const auto& n : names) {
    const size_t slash = n.find('/');
    if (slash == std::string::npos) return names;
    tokens.push_back(split(n.substr(slash + 1), ','));
    for (const auto& t : std::set<std::string>(tokens.back().begin(), tokens.back().end())) ++names_with[t];
  }
  std::vector<std::string> out;
  for (size_t i = 0; i < names.size(); ++i) {
    std::vector<std::string> own;
    for (const auto& t : tokens[i])
      if (names_with[t] < names.size()) own.push_back(t);
    out.push_back(own.empty() ? names[i] : join(own, ","));
  }
  return out;
}

std::string bar_chart_svg(const std::string& title, const std::string& unit, const std::vector<Bar>& bars) {
  double lo = 0, hi = 0;
  for (const auto& b : bars)
    for (double v : {b.value, b.lo, b.hi})
      if (std::isfinite(v)) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
  if (hi == lo) hi = lo + 1;
  size_t longest = 8;
  for (const auto& b : bars) longest = std::max(longest, shorten(b.label).size());
  const double label_width = 12 + kCharWidth * static_cast<double>(longest);
  const auto x = [&](double v) { return label_width + (v - lo) / (hi - lo) * kPlotWidth; };
  const double width = label_width + kPlotWidth + kValueWidth;
  const double height = kTop + kRow * static_cast<double>(bars.size()) + kAxis;
  const double zero = x(0), axis_y = kTop + kRow * static_cast<double>(bars.size());
  std::string out;
  out.reserve(200 * bars.size() + 600);
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" role=\"img\" width=\"" + px(width) +
         "\" height=\"" + px(height) + "\" viewBox=\"0 0 " + px(width) + " " + px(height) + "\"><title>" +
         html_escape(title) + "</title>";
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double y = kTop + kRow * static_cast<double>(i), mid = y + kRow / 2;
    out += "<g><title>" + html_escape(b.label + ": " + fmt_num(b.value) + " " + unit + ", 95% CI " +
                                      fmt_interval(b.lo, b.hi)) + "</title>";
    out += "<text class=\"lbl\" x=\"" + px(label_width - 6) + "\" y=\"" + px(mid + 4) + "\">" +
           html_escape(shorten(b.label)) + "</text>";
    if (std::isfinite(b.value)) {
      const double a = std::min(zero, x(b.value)), w = std::fabs(x(b.value) - zero);
      out += "<rect class=\"bar\" x=\"" + px(a) + "\" y=\"" + px(y + 3) + "\" width=\"" + px(w) +
             "\" height=\"" + px(kRow - 6) + "\"/>";
      if (std::isfinite(b.lo) && std::isfinite(b.hi)) {
        const std::string l = px(x(b.lo)), h = px(x(b.hi));
        out += "<path class=\"err\" d=\"M" + l + " " + px(mid) + "H" + h + "M" + l + " " + px(y + 5) + "V" +
               px(y + kRow - 5) + "M" + h + " " + px(y + 5) + "V" + px(y + kRow - 5) + "\"/>";
      }
      out += "<text class=\"val\" x=\"" + px(label_width + kPlotWidth + 6) + "\" y=\"" + px(mid + 4) + "\">" +
             html_escape(fmt_num(b.value)) + "</text>";
    }
    out += "</g>";
  }
  out += "<path class=\"axis\" d=\"M" + px(label_width) + " " + px(axis_y) + "H" + px(label_width + kPlotWidth) +
         "M" + px(zero) + " " + px(kTop) + "V" + px(axis_y) + "\"/>";
  out += "<text class=\"tick\" x=\"" + px(label_width) + "\" y=\"" + px(axis_y + 15) + "\">" + fmt_num(lo) + "</text>";
  out += "<text class=\"tick end\" x=\"" + px(label_width + kPlotWidth) + "\" y=\"" + px(axis_y + 15) + "\">" +
         html_escape(fmt_num(hi) + " " + unit) + "</text></svg>";
  return out;
}

std::string line_chart_svg(const std::string& title, const std::string& x_label, const std::string& y_label,
                           const std::vector<std::pair<double, double>>& points) {
  constexpr double left = 70, plot_w = 560, plot_h = 220, top = 10, bottom = 36;
  double x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  bool any = false;
  for (const auto& [x, y] : points) {
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    if (!any) x0 = x1 = x, y0 = y1 = y, any = true;
    x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
  }
  if (x1 == x0) x1 = x0 + 1;
  if (y1 == y0) y1 = y0 + 1;
  const auto sx = [&](double x) { return left + (x - x0) / (x1 - x0) * plot_w; };
  const auto sy = [&](double y) { return top + (y1 - y) / (y1 - y0) * plot_h; };
  const double width = left + plot_w + 20, height = top + plot_h + bottom;
  // Steps and other whole-number x values are labelled as integers.
  const auto x_tick = [](double v) {
    return v == std::floor(v) && std::fabs(v) < 1e15 ? std::to_string(static_cast<long long>(v)) : fmt_num(v);
  };
  std::string path;
  for (const auto& [x, y] : points)
    if (std::isfinite(x) && std::isfinite(y)) path += (path.empty() ? "M" : "L") + px(sx(x)) + " " + px(sy(y));
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" role=\"img\" width=\"" + px(width) +
                    "\" height=\"" + px(height) + "\" viewBox=\"0 0 " + px(width) + " " + px(height) + "\"><title>" +
                    html_escape(title) + "</title>";
  if (!path.empty()) out += "<path class=\"line\" d=\"" + path + "\"/>";
  const std::string base = px(top + plot_h);
  out += "<path class=\"axis\" d=\"M" + px(left) + " " + px(top) + "V" + base + "H" + px(left + plot_w) + "\"/>";
  out += "<text class=\"lbl\" x=\"" + px(left - 4) + "\" y=\"" + px(top + 10) + "\">" + html_escape(fmt_num(y1)) + "</text>";
  out += "<text class=\"lbl\" x=\"" + px(left - 4) + "\" y=\"" + base + "\">" + html_escape(fmt_num(y0)) + "</text>";
  out += "<text class=\"tick\" x=\"" + px(left) + "\" y=\"" + px(top + plot_h + 14) + "\">" + html_escape(x_tick(x0)) + "</text>";
  out += "<text class=\"tick end\" x=\"" + px(left + plot_w) + "\" y=\"" + px(top + plot_h + 14) + "\">" +
         html_escape(x_tick(x1)) + "</text>";
  out += "<text class=\"tick\" x=\"" + px(left + plot_w / 2) + "\" y=\"" + px(top + plot_h + 30) + "\">" +
         html_escape(y_label + " vs " + x_label) + "</text></svg>";
  return out;
}

std::string history_chart_svg(const std::string& title, const std::string& unit, const std::vector<HistoryMark>& marks,
                              const std::vector<HistoryLevel>& levels, const std::vector<HistoryStepMark>& steps) {
  constexpr double left = 80, plot_w = 640, plot_h = 200, top = 10, bottom = 24;
  double y0 = INFINITY, y1 = -INFINITY;
  for (const auto& m : marks)
    for (double v : {m.y, m.lo, m.hi})
      if (std::isfinite(v)) y0 = std::min(y0, v), y1 = std::max(y1, v);
  if (!std::isfinite(y0)) y0 = 0, y1 = 1;
  if (y1 == y0) y0 -= std::fabs(y0) * 0.05 + 0.5, y1 += std::fabs(y1) * 0.05 + 0.5;
  const double pad = (y1 - y0) * 0.05;
  y0 = y0 >= 0 ? std::max(0.0, y0 - pad) : y0 - pad;  // a positive metric's axis never goes below 0
  y1 += pad;
  const double n = static_cast<double>(std::max<size_t>(marks.size(), 2) - 1);
  const auto sx = [&](double i) { return left + i / n * plot_w; };
  const auto sy = [&](double y) { return top + (y1 - y) / (y1 - y0) * plot_h; };
  const double width = left + plot_w + 20, height = top + plot_h + bottom;
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart history\" role=\"img\" width=\"" +
                    px(width) + "\" height=\"" + px(height) + "\" viewBox=\"0 0 " + px(width) + " " + px(height) +
                    "\"><title>" + html_escape(title) + "</title>";
  const std::string base = px(top + plot_h);
  out += "<path class=\"axis\" d=\"M" + px(left) + " " + px(top) + "V" + base + "H" + px(left + plot_w) + "\"/>";
  for (const auto& l : levels)
    if (l.end > l.begin && std::isfinite(l.value))
      out += "<path class=\"level\" d=\"M" + px(sx(static_cast<double>(l.begin))) + " " + px(sy(l.value)) + "H" +
             px(sx(static_cast<double>(l.end - 1))) + "\"/>";
  for (const auto& s : steps) {
    const double x = sx(static_cast<double>(s.at) - 0.5);
    out += std::string("<path class=\"step") + (s.regression ? " regression" : "") + "\" d=\"M" + px(x) + " " +
           px(top) + "V" + base + "\"><title>" + html_escape(s.title) + "</title></path>";
  }
  std::string path;
  for (size_t i = 0; i < marks.size(); ++i)
    if (std::isfinite(marks[i].y)) path += (path.empty() ? "M" : "L") + px(sx(static_cast<double>(i))) + " " + px(sy(marks[i].y));
  if (!path.empty()) out += "<path class=\"line\" d=\"" + path + "\"/>";
  for (size_t i = 0; i < marks.size(); ++i) {
    const HistoryMark& m = marks[i];
    if (!std::isfinite(m.y)) continue;
    const std::string x = px(sx(static_cast<double>(i)));
    out += "<g><title>" + html_escape(m.title) + "</title>";
    if (std::isfinite(m.lo) && std::isfinite(m.hi))
      out += "<path class=\"err\" d=\"M" + x + " " + px(sy(m.lo)) + "V" + px(sy(m.hi)) + "\"/>";
    out += std::string("<circle class=\"pt") + (m.throttled ? " throttled" : "") + "\" cx=\"" + x + "\" cy=\"" +
           px(sy(m.y)) + "\" r=\"3\"/></g>";
  }
  out += "<text class=\"lbl\" x=\"" + px(left - 4) + "\" y=\"" + px(top + 10) + "\">" + html_escape(fmt_num(y1)) + "</text>";
  out += "<text class=\"lbl\" x=\"" + px(left - 4) + "\" y=\"" + base + "\">" + html_escape(fmt_num(y0) + " " + unit) + "</text>";
  out += "<text class=\"tick\" x=\"" + px(left) + "\" y=\"" + px(top + plot_h + 16) + "\">oldest</text>";
  out += "<text class=\"tick end\" x=\"" + px(left + plot_w) + "\" y=\"" + px(top + plot_h + 16) + "\">newest (" +
         std::to_string(marks.size()) + " runs)</text></svg>";
  return out;
}

}  // namespace mlsb::reports::detail
