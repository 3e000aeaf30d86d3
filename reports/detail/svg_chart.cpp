#include "reports/detail/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "util/text.hpp"
#include "reports/detail/report_text.hpp"
#include "reports/detail/svg_parts.hpp"
#include "reports/detail/xy_chart.hpp"

namespace mlsb::reports::detail {
namespace {

constexpr double kPlotWidth = 400, kValueWidth = 120, kRow = 18, kTop = 8, kAxis = 22;
constexpr double kCharWidth = 7.0;  // px of an 11 px label character, generously (digits and '=' are wide)
constexpr size_t kMaxLabel = 96;

// A label over kMaxLabel bytes keeps its start and its end (where case names differ most).
std::string shorten(const std::string& s) {
  if (s.size() <= kMaxLabel) return s;
  const size_t half = kMaxLabel / 2 - 1;
  return utf8_truncate(s, half, "") + "…" + s.substr(utf8_boundary_after(s, s.size() - half));
}

// The labels as drawn: shortened, unless that makes two distinct labels read alike (they differ only in
// the middle); then whole.
template <class Row>
std::vector<std::string> drawn_labels(const std::vector<Row>& rows) {
  std::vector<std::string> out;
  std::set<std::string> whole, cut;
  for (const auto& r : rows) {
    out.push_back(shorten(r.label));
    whole.insert(r.label);
    cut.insert(out.back());
  }
  if (cut.size() < whole.size())
    for (size_t i = 0; i < rows.size(); ++i) out[i] = rows[i].label;
  return out;
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

std::string bar_chart_svg(const std::string& title, const std::string& unit, const std::vector<Bar>& bars,
                          bool log_scale) {
  double lo = 0, hi = 0, smallest = INFINITY;
  for (const auto& b : bars)
    for (double v : {b.value, b.lo, b.hi})
      if (std::isfinite(v)) {
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        smallest = std::min(smallest, v);
      }
  log_scale = log_scale && smallest > 0;
  if (log_scale) {  // whole decades around the values; bars start at the left edge
    lo = std::pow(10, std::floor(std::log10(smallest)));
    hi = std::pow(10, std::ceil(std::log10(hi)));
  }
  if (hi == lo) hi = log_scale ? lo * 10 : lo + 1;
  size_t longest = 8;
  const std::vector<std::string> drawn = drawn_labels(bars);
  for (const auto& l : drawn) longest = std::max(longest, l.size());
  const double label_width = 12 + kCharWidth * static_cast<double>(longest);
  const auto x = [&](double v) {
    const double t = log_scale ? std::log10(v / lo) / std::log10(hi / lo) : (v - lo) / (hi - lo);
    return label_width + t * kPlotWidth;
  };
  // Row of each bar, after the group header rows before it.
  std::vector<double> row(bars.size());
  double rows = 0;
  for (size_t i = 0; i < bars.size(); ++i) {
    if (!bars[i].group.empty() && (i == 0 || bars[i].group != bars[i - 1].group)) ++rows;
    row[i] = rows++;
  }
  const double width = label_width + kPlotWidth + kValueWidth;
  const double height = kTop + kRow * rows + kAxis;
  const double zero = log_scale ? label_width : x(0), axis_y = kTop + kRow * rows;
  std::string out;
  out.reserve(200 * bars.size() + 600);
  out += svg_open(width, height, title);
  for (size_t i = 0; i < bars.size(); ++i) {
    const Bar& b = bars[i];
    const double y = kTop + kRow * row[i], mid = y + kRow / 2;
    if (!b.group.empty() && (i == 0 || b.group != bars[i - 1].group))
      out += "<text class=\"grp\" x=\"4\" y=\"" + svg_px(y - kRow / 2 + 4) + "\">" + html_escape(b.group) + "</text>";
    out += "<g><title>" +
           html_escape(b.label + ": " + fmt_num(b.value) + " " + unit + ", 95% CI " + fmt_interval(b.lo, b.hi)) +
           "</title>";
    out += "<text class=\"lbl\" x=\"" + svg_px(label_width - 6) + "\" y=\"" + svg_px(mid + 4) + "\">" +
           html_escape(drawn[i]) + "</text>";
    if (std::isfinite(b.value)) {
      const double a = std::min(zero, x(b.value)), w = std::fabs(x(b.value) - zero);
      out += "<rect class=\"bar\" x=\"" + svg_px(a) + "\" y=\"" + svg_px(y + 3) + "\" width=\"" + svg_px(w) +
             "\" height=\"" + svg_px(kRow - 6) + "\"/>";
      if (std::isfinite(b.lo) && std::isfinite(b.hi)) {
        const std::string l = svg_px(x(b.lo)), h = svg_px(x(b.hi));
        out += "<path class=\"err\" d=\"M" + l + " " + svg_px(mid) + "H" + h + "M" + l + " " + svg_px(y + 5) + "V" +
               svg_px(y + kRow - 5) + "M" + h + " " + svg_px(y + 5) + "V" + svg_px(y + kRow - 5) + "\"/>";
      }
      out += "<text class=\"val\" x=\"" + svg_px(label_width + kPlotWidth + 6) + "\" y=\"" + svg_px(mid + 4) + "\">" +
             html_escape(fmt_num(b.value)) + "</text>";
    }
    out += "</g>";
  }
  out += "<path class=\"axis\" d=\"M" + svg_px(label_width) + " " + svg_px(axis_y) + "H" +
         svg_px(label_width + kPlotWidth) + "M" + svg_px(zero) + " " + svg_px(kTop) + "V" + svg_px(axis_y) + "\"/>";
  out += "<text class=\"tick\" x=\"" + svg_px(label_width) + "\" y=\"" + svg_px(axis_y + 15) + "\">" + fmt_num(lo) +
         "</text>";
  out += "<text class=\"tick end\" x=\"" + svg_px(label_width + kPlotWidth) + "\" y=\"" + svg_px(axis_y + 15) + "\">" +
         html_escape(fmt_num(hi) + " " + unit + (log_scale ? " (log scale)" : "")) + "</text></svg>";
  return out;
}

std::string stacked_bar_chart_svg(const std::string& title, const std::string& unit,
                                  const std::vector<std::string>& part_names, const std::vector<StackedBar>& bars) {
  constexpr double kLegend = 20;
  double hi = 0;
  for (const auto& b : bars) {
    double total = 0;
    for (double v : b.parts) total += std::isfinite(v) && v > 0 ? v : 0;
    hi = std::max(hi, total);
  }
  if (hi == 0) hi = 1;
  size_t longest = 8;
  const std::vector<std::string> drawn = drawn_labels(bars);
  for (const auto& l : drawn) longest = std::max(longest, l.size());
  const double label_width = 12 + kCharWidth * static_cast<double>(longest);
  const auto w = [&](double v) { return v / hi * kPlotWidth; };
  const double top = kTop + kLegend, axis_y = top + kRow * static_cast<double>(bars.size());
  std::string out = svg_open(label_width + kPlotWidth + kValueWidth, axis_y + kAxis, title);
  double lx = label_width;
  for (size_t p = 0; p < part_names.size(); ++p) {  // the legend: a swatch and a name per part
    out += "<rect class=\"part p" + std::to_string(p % 4) + "\" x=\"" + svg_px(lx) + "\" y=\"" + svg_px(kTop) +
           "\" width=\"10\" height=\"10\"/><text class=\"tick\" x=\"" + svg_px(lx + 14) + "\" y=\"" + svg_px(kTop + 9) +
           "\">" + html_escape(part_names[p]) + "</text>";
    lx += 24 + kCharWidth * static_cast<double>(part_names[p].size());
  }
  for (size_t i = 0; i < bars.size(); ++i) {
    const StackedBar& b = bars[i];
    const double y = top + kRow * static_cast<double>(i), mid = y + kRow / 2;
    out += "<text class=\"lbl\" x=\"" + svg_px(label_width - 6) + "\" y=\"" + svg_px(mid + 4) + "\">" +
           html_escape(drawn[i]) + "</text>";
    double at = 0, total = 0;
    for (size_t p = 0; p < b.parts.size() && p < part_names.size(); ++p) {
      const double v = b.parts[p];
      if (!std::isfinite(v) || v <= 0) continue;
      out += "<g><title>" + html_escape(b.label + ": " + part_names[p] + " " + fmt_num(v) + " " + unit) +
             "</title><rect class=\"part p" + std::to_string(p % 4) + "\" x=\"" + svg_px(label_width + w(at)) +
             "\" y=\"" + svg_px(y + 3) + "\" width=\"" + svg_px(w(v)) + "\" height=\"" + svg_px(kRow - 6) + "\"/></g>";
      at += v, total += v;
    }
    out += "<text class=\"val\" x=\"" + svg_px(label_width + kPlotWidth + 6) + "\" y=\"" + svg_px(mid + 4) + "\">" +
           html_escape(fmt_num(total) + " " + unit) + "</text>";
  }
  out += "<path class=\"axis\" d=\"M" + svg_px(label_width) + " " + svg_px(axis_y) + "H" +
         svg_px(label_width + kPlotWidth) + "M" + svg_px(label_width) + " " + svg_px(top) + "V" + svg_px(axis_y) +
         "\"/>";
  out += "<text class=\"tick\" x=\"" + svg_px(label_width) + "\" y=\"" + svg_px(axis_y + 15) + "\">0</text>";
  out += "<text class=\"tick end\" x=\"" + svg_px(label_width + kPlotWidth) + "\" y=\"" + svg_px(axis_y + 15) + "\">" +
         html_escape(fmt_num(hi) + " " + unit) + "</text></svg>";
  return out;
}

std::string history_chart_svg(const std::string& title, const std::string& unit, const std::vector<HistoryMark>& marks,
                              const std::vector<HistoryLevel>& levels, const std::vector<HistoryStepMark>& steps) {
  constexpr double left = 80, plot_w = 640, plot_h = 200, top = 22, bottom = 24;
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& m : marks)
    for (double v : {m.y, m.lo, m.hi})
      if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  std::vector<double> ticks = nice_ticks(lo, hi, 5);
  if (lo >= 0)  // a non-negative metric's axis never goes below 0
    ticks.erase(std::remove_if(ticks.begin(), ticks.end(), [](double t) { return t < 0; }), ticks.end());
  if (ticks.size() < 2) ticks = {0, hi > 0 ? hi : 1};
  const double y0 = ticks.front(), y1 = ticks.back();
  const double n = static_cast<double>(std::max<size_t>(marks.size(), 2) - 1);
  const auto sx = [&](double i) { return left + i / n * plot_w; };
  const auto sy = [&](double y) { return top + (y1 - y) / (y1 - y0) * plot_h; };
  const double width = left + plot_w + 20, height = top + plot_h + bottom;
  std::string out = svg_open(width, height, title, "history");
  const std::string base = svg_px(top + plot_h);
  out += "<path class=\"axis\" d=\"M" + svg_px(left) + " " + svg_px(top) + "V" + base + "H" + svg_px(left + plot_w) +
         "\"/>";
  for (const auto& l : levels)
    if (l.end > l.begin && std::isfinite(l.value))
      out += "<path class=\"level\" d=\"M" + svg_px(sx(static_cast<double>(l.begin))) + " " + svg_px(sy(l.value)) +
             "H" + svg_px(sx(static_cast<double>(l.end - 1))) + "\"/>";
  for (const auto& s : steps) {
    const double x = sx(static_cast<double>(s.at) - 0.5);
    out += std::string("<path class=\"step") + (s.regression ? " regression" : "") + "\" d=\"M" + svg_px(x) + " " +
           svg_px(top) + "V" + base + "\"><title>" + html_escape(s.title) + "</title></path>";
  }
  std::string path;
  for (size_t i = 0; i < marks.size(); ++i)
    if (std::isfinite(marks[i].y))
      path += (path.empty() ? "M" : "L") + svg_px(sx(static_cast<double>(i))) + " " + svg_px(sy(marks[i].y));
  if (!path.empty()) out += "<path class=\"line\" d=\"" + path + "\"/>";
  for (size_t i = 0; i < marks.size(); ++i) {
    const HistoryMark& m = marks[i];
    if (!std::isfinite(m.y)) continue;
    const std::string x = svg_px(sx(static_cast<double>(i)));
    out += "<g><title>" + html_escape(m.title) + "</title>";
    if (std::isfinite(m.lo) && std::isfinite(m.hi))
      out += "<path class=\"err\" d=\"M" + x + " " + svg_px(sy(m.lo)) + "V" + svg_px(sy(m.hi)) + "\"/>";
    out += std::string("<circle class=\"pt") + (m.throttled ? " throttled" : "") + "\" cx=\"" + x + "\" cy=\"" +
           svg_px(sy(m.y)) + "\" r=\"3\"/></g>";
  }
  for (double t : ticks)  // inside the plot's left margin, right-aligned, with a grid line
    out += "<path class=\"grid\" d=\"M" + svg_px(left) + " " + svg_px(sy(t)) + "H" + svg_px(left + plot_w) +
           "\"/><text class=\"lbl\" x=\"" + svg_px(left - 4) + "\" y=\"" + svg_px(sy(t) + 4) + "\">" +
           html_escape(tick_label(t)) + "</text>";
  if (!unit.empty())
    out += "<text class=\"lbl\" x=\"" + svg_px(left - 4) + "\" y=\"" + svg_px(top - 8) + "\">" + html_escape(unit) +
           "</text>";
  // At most 8 runs labelled: the first, the last and evenly between.
  const size_t count = marks.size(), every = std::max<size_t>(1, (count + 6) / 7);
  for (size_t i = 0; i < count; ++i) {
    if (i % every != 0 && i + 1 != count) continue;
    if (i + 1 != count && count - 1 - i < every / 2 + 1 && i != 0) continue;  // too close to the last
    const char* anchor = count > 1 && i == 0 ? "start" : count > 1 && i + 1 == count ? "end" : "mid";  // inside
    out += "<text class=\"tick " + std::string(anchor) + "\" x=\"" + svg_px(sx(static_cast<double>(i))) + "\" y=\"" +
           svg_px(top + plot_h + 16) + "\">" + html_escape(marks[i].label) + "</text>";
  }
  out += "</svg>";
  return out;
}

}  // namespace mlsb::reports::detail
