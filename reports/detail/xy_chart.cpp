#include "reports/detail/xy_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "reports/detail/report_text.hpp"
#include "reports/detail/svg_parts.hpp"

namespace mlsb::reports::detail {
namespace {

constexpr double kXyLeft = 70, kXyPlotW = 560, kXyPlotH = 220, kXyTop = 12, kXyBottom = 44;
constexpr double kCharPx = 6.5;  // the width of an 11 px label's character, for placing it

struct Range {
  double lo = 0, hi = 1;
};

// The frame of an x-y chart: the scales, the ticks of both axes and the svg text drawn around a plot.
struct Frame {
  Range x, y;
  std::vector<double> x_ticks, y_ticks;
  bool log2_x = false, log10_y = false;  // the ticks and ranges are then in log units
  double sx(double v) const {
    const double t = log2_x ? std::log2(v) : v;
    return kXyLeft + (t - x.lo) / (x.hi - x.lo) * kXyPlotW;
  }
  double py(double t) const { return kXyTop + (y.hi - t) / (y.hi - y.lo) * kXyPlotH; }  // t in tick units
  double sy(double v) const { return py(log10_y ? std::log10(v) : v); }
};

Range span(const std::vector<double>& ticks) {
  Range r{ticks.front(), ticks.back()};
  if (r.hi == r.lo) r.hi = r.lo + 1;
  return r;
}

// Power-of-two ticks covering [lo, hi] (log2 values), at most 8: every k-th exponent.
std::vector<double> log2_ticks(double lo, double hi) {
  const double first = std::floor(lo), last = std::ceil(hi);
  const double every = std::max(1.0, std::ceil((last - first) / 7));
  std::vector<double> t;
  for (double e = first; e <= last + 1e-9; e += every) t.push_back(e);
  if (t.back() < hi) t.push_back(t.back() + every);
  return t;
}

// Ticks (log10 values) covering [lo, hi] (values > 0): the powers of ten, and 2 and 5 times them when
// the span has fewer than 3 decades (so that there are at least 3 labelled ticks).
std::vector<double> log10_ticks(double lo, double hi) {
  const double first = std::floor(std::log10(lo)), last = std::max(first + 1, std::ceil(std::log10(hi)));
  std::vector<double> t;
  for (double e = first; e <= last + 1e-9; ++e) {
    t.push_back(e);
    if (last - first < 3 && e < last)
      for (double m : {2.0, 5.0})
        if (const double v = e + std::log10(m); std::pow(10, v) > lo / 2 && std::pow(10, v) < hi * 2) t.push_back(v);
  }
  // The decades beyond the data are kept only as the range's ends.
  while (t.size() > 3 && std::pow(10, t[1]) <= lo) t.erase(t.begin());
  while (t.size() > 3 && std::pow(10, t[t.size() - 2]) >= hi) t.pop_back();
  return t;
}

// Whether a segment from a to b (px) passes through the box [x0, x1] x [y0, y1] (px), sampled finely
// enough for a label's box.
bool crosses(std::pair<double, double> a, std::pair<double, double> b, double x0, double x1, double y0, double y1) {
  for (int i = 0; i <= 16; ++i) {
    const double t = i / 16.0, x = a.first + t * (b.first - a.first), y = a.second + t * (b.second - a.second);
    if (x >= x0 && x <= x1 && y >= y0 && y <= y1) return true;
  }
  return false;
}

// Grid lines and tick labels of both axes, the axes, and the axis names.
std::string axes(const Frame& f, const std::string& x_label, const std::string& y_label) {
  std::string out;
  const double bottom = kXyTop + kXyPlotH;
  for (double t : f.y_ticks) {
    const std::string y = svg_px(f.py(t));
    out += "<path class=\"grid\" d=\"M" + svg_px(kXyLeft) + " " + y + "H" + svg_px(kXyLeft + kXyPlotW) + "\"/>";
    out += "<text class=\"tick end\" x=\"" + svg_px(kXyLeft - 4) + "\" y=\"" + svg_px(f.py(t) + 4) + "\">" +
           html_escape(tick_label(f.log10_y ? std::pow(10, t) : t)) + "</text>";
  }
  for (double t : f.x_ticks) {
    const double x = kXyLeft + (t - f.x.lo) / (f.x.hi - f.x.lo) * kXyPlotW;
    out += "<text class=\"tick mid\" x=\"" + svg_px(x) + "\" y=\"" + svg_px(bottom + 14) + "\">" +
           html_escape(tick_label(f.log2_x ? std::exp2(t) : t)) + "</text>";
  }
  out += "<path class=\"axis\" d=\"M" + svg_px(kXyLeft) + " " + svg_px(kXyTop) + "V" + svg_px(bottom) + "H" +
         svg_px(kXyLeft + kXyPlotW) + "\"/>";
  out += "<text class=\"tick mid\" x=\"" + svg_px(kXyLeft + kXyPlotW / 2) + "\" y=\"" + svg_px(bottom + 32) + "\">" +
         html_escape(x_label + (f.log2_x ? " (log2 scale)" : "")) + "</text>";
  const std::string yl = svg_px(14), ym = svg_px(kXyTop + kXyPlotH / 2);
  out += "<text class=\"tick mid\" x=\"" + yl + "\" y=\"" + ym + "\" transform=\"rotate(-90 " + yl + " " + ym + ")\">" +
         html_escape(y_label + (f.log10_y ? " (log scale)" : "")) + "</text>";
  return out;
}

// The classes of series k of several: six colours (s0..s5), then the same six dashed (alt), so 12 lines stay apart.
std::string series_class(size_t k) { return " s" + std::to_string(k % 6) + (k / 6 % 2 ? " alt" : ""); }

}  // namespace

std::string tick_label(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    const auto n = static_cast<long long>(v);
    static const char* suffix[] = {"Ki", "Mi", "Gi", "Ti"};
    if (n >= 1024 && (n & (n - 1)) == 0) {
      int s = -1;
      long long m = n;
      while (m >= 1024 && m % 1024 == 0 && s < 3) m /= 1024, ++s;
      return std::to_string(m) + suffix[s];
    }
    if (std::fabs(v) < 1e6) return std::to_string(n);
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::vector<double> nice_ticks(double lo, double hi, int max_ticks, bool integers) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {0, 1};
  if (hi < lo) std::swap(lo, hi);
  const double size = std::max(std::fabs(lo), std::fabs(hi));
  if (hi - lo <= 1e-9 * size || hi == lo) {  // one value (or values apart by rounding only): a span around it
    const double d = size == 0 ? 1 : size * 0.1;
    lo -= d, hi += d;
  }
  if (!std::isfinite(hi - lo)) return {lo, hi};  // beyond what a step can cover: the ends alone
  const double raw = (hi - lo) / std::max(1, max_ticks - 1);
  const double mag = std::pow(10, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  const double nice = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
  const double step = integers ? std::max(1.0, nice) : nice;
  const double first = std::floor(lo / step + 1e-9), last = std::ceil(hi / step - 1e-9);
  if (!(last - first >= 1 && last - first <= 100)) return {lo, hi};
  std::vector<double> ticks;
  for (double k = first; k <= last; ++k) {
    const double v = k * step;
    ticks.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  }
  return ticks;
}

std::string line_chart_svg(const std::string& title, const std::string& x_label, const std::string& y_label,
                           const std::vector<std::pair<double, double>>& points, const XyOptions& options) {
  return line_chart_svg(title, x_label, y_label, std::vector<XySeries>{{"", points}}, options);
}

std::string line_chart_svg(const std::string& title, const std::string& x_label, const std::string& y_label,
                           const std::vector<XySeries>& series, const XyOptions& options) {
  std::vector<std::vector<std::pair<double, double>>> shown(series.size());
  Frame f;
  f.log2_x = options.log2_x;
  double x0 = INFINITY, x1 = -INFINITY, y0 = options.columns ? 0 : INFINITY, y1 = options.columns ? 0 : -INFINITY;
  for (size_t k = 0; k < series.size(); ++k)
    for (const auto& [x, y] : series[k].points)
      if (std::isfinite(x) && std::isfinite(y) && (!options.log2_x || x > 0)) {
        shown[k].emplace_back(x, y);
        const double t = f.log2_x ? std::log2(x) : x;
        x0 = std::min(x0, t), x1 = std::max(x1, t), y0 = std::min(y0, y), y1 = std::max(y1, y);
      }
  for (const auto& m : options.marks)
    if (std::isfinite(m.y)) y0 = std::min(y0, m.y), y1 = std::max(y1, m.y);
  if (!std::isfinite(x0)) x0 = 0, x1 = 1;
  if (!std::isfinite(y0)) y0 = 0, y1 = 1;
  f.log10_y = options.log10_y && !options.columns && y0 > 0 && y1 / y0 >= 10;
  double half = 0;  // columns: half a column's slot on each side of the outer columns
  std::vector<std::pair<double, double>> all;
  for (const auto& line : shown) all.insert(all.end(), line.begin(), line.end());
  if (options.columns) {
    half = 0.5;
    for (size_t i = 1; i < all.size(); ++i)
      if (const double gap = std::fabs(all[i].first - all[i - 1].first); gap > 0) half = std::min(half, gap / 2);
  }
  const bool whole = std::all_of(all.begin(), all.end(), [](const auto& p) { return p.first == std::floor(p.first); });
  f.x_ticks = f.log2_x ? log2_ticks(x0, x1) : nice_ticks(x0, x1, 8, whole);
  f.x =
      f.log2_x ? span(f.x_ticks) : Range{std::min(f.x_ticks.front(), x0 - half), std::max(f.x_ticks.back(), x1 + half)};
  if (f.x.hi == f.x.lo) f.x.hi = f.x.lo + 1;
  f.y_ticks = f.log10_y ? log10_ticks(y0, y1) : nice_ticks(y0, y1, 6);
  if (y0 >= 0) {  // a non-negative series' axis never goes below 0 (a constant 0 widened both ways)
    std::erase_if(f.y_ticks, [](double t) { return t < 0; });
    if (f.y_ticks.size() < 2) f.y_ticks = {0, y1 > 0 ? y1 : 1};
  }
  f.y = span(f.y_ticks);
  const auto slot_of = [&](size_t k) { return series[k].slot >= 0 ? static_cast<size_t>(series[k].slot) : k; };
  // The legend: a swatch and a label per named line, flowing in rows under the axis name.
  const double width = kXyLeft + kXyPlotW + 20, legend_top = kXyTop + kXyPlotH + kXyBottom;
  std::string legend;
  double lx = kXyLeft, rows = 0;
  for (size_t k = 0; k < series.size(); ++k) {
    if (series[k].label.empty()) continue;
    const double w = 30 + kCharPx * static_cast<double>(series[k].label.size());
    if (rows == 0 || (lx + w > width && lx > kXyLeft)) lx = kXyLeft, ++rows;
    const double y = legend_top + 16 * rows - 4;
    legend += "<path class=\"line" + series_class(slot_of(k)) + "\" d=\"M" + svg_px(lx) + " " + svg_px(y - 4) + "h18\"/>";
    legend += "<text class=\"start\" x=\"" + svg_px(lx + 22) + "\" y=\"" + svg_px(y) + "\">" +
              html_escape(series[k].label) + "</text>";
    lx += w;
  }
  std::string out = svg_open(width, legend_top + (rows > 0 ? 16 * rows + 6 : 0), title);
  out += axes(f, x_label, y_label);
  std::vector<std::vector<std::pair<double, double>>> drawn(series.size());  // px, for the mark labels
  for (size_t k = 0; k < shown.size(); ++k) {
    const std::string cls = series.size() > 1 ? series_class(slot_of(k)) : "";
    const std::string name = series[k].label.empty() ? "" : series[k].label + ": ";
    if (options.columns) {
      const double w = std::max(1.0, 2 * half / (f.x.hi - f.x.lo) * kXyPlotW * 0.8);
      for (const auto& [x, y] : shown[k]) {
        const double top = std::min(f.sy(y), f.sy(0)), h = std::fabs(f.sy(y) - f.sy(0));
        out += "<g><title>" + html_escape(name + x_label + " " + tick_label(x) + ": " + fmt_num(y)) +
               "</title><rect class=\"bar\" x=\"" + svg_px(f.sx(x) - w / 2) + "\" y=\"" + svg_px(top) +
               "\" width=\"" + svg_px(w) + "\" height=\"" + svg_px(h) + "\"/></g>";
        drawn[k].emplace_back(f.sx(x), top);
      }
      continue;
    }
    std::string path;
    double last_x = -INFINITY;
    for (const auto& [x, y] : shown[k]) {  // x going back starts a new line: the series' next repetition
      const bool restart = x < last_x;
      path += (path.empty() || restart ? "M" : "L") + svg_px(f.sx(x)) + " " + svg_px(f.sy(y));
      if (restart) drawn[k].emplace_back(NAN, NAN);  // no segment across a restart
      drawn[k].emplace_back(f.sx(x), f.sy(y));
      last_x = x;
    }
    if (!path.empty()) out += "<path class=\"line" + cls + "\" d=\"" + path + "\"/>";
    if (shown[k].size() <= 40)  // a sweep's points, each with its value on hover; a long curve stays a line
      for (const auto& [x, y] : shown[k])
        out += "<g><title>" + html_escape(name + x_label + " " + tick_label(x) + ": " + fmt_num(y)) +
               "</title><circle class=\"pt" + cls + "\" cx=\"" + svg_px(f.sx(x)) + "\" cy=\"" + svg_px(f.sy(y)) +
               "\" r=\"2.5\"/></g>";
  }
  for (const auto& m : options.marks) {
    if (!std::isfinite(m.y) || (f.log10_y && m.y <= 0)) continue;
    const double my = f.sy(m.y);
    const std::string text = m.label + " " + fmt_num(m.y);
    out += "<path class=\"mark\" d=\"M" + svg_px(kXyLeft) + " " + svg_px(my) + "H" + svg_px(kXyLeft + kXyPlotW) + "\"/>";
    // The first of right-above, right-below, left-above, left-below where no line passes under the text.
    const double tw = kCharPx * static_cast<double>(text.size());
    struct Spot {
      double x0, baseline;
      const char* anchor;
    };
    const double right = kXyLeft + kXyPlotW - 4, left = kXyLeft + 4;
    const Spot spots[] = {{right - tw, my - 4, "end"}, {right - tw, my + 13, "end"}, {left, my - 4, "start"},
                          {left, my + 13, "start"}};
    Spot chosen = spots[0];
    for (const Spot& spot : spots) {
      const double bx0 = spot.x0, bx1 = spot.x0 + tw, by0 = spot.baseline - 11, by1 = spot.baseline + 2;
      bool hit = false;
      for (const auto& line : drawn)
        for (size_t i = 0; i < line.size() && !hit; ++i) {
          const auto& p = line[i];
          if (!std::isfinite(p.first)) continue;
          hit = p.first >= bx0 && p.first <= bx1 && p.second >= by0 && p.second <= by1;
          if (!hit && i > 0 && std::isfinite(line[i - 1].first)) hit = crosses(line[i - 1], p, bx0, bx1, by0, by1);
        }
      if (!hit) {
        chosen = spot;
        break;
      }
    }
    out += std::string("<text class=\"tick ") + chosen.anchor + " mark-label\" x=\"" +
           svg_px(chosen.anchor[0] == 'e' ? right : left) + "\" y=\"" + svg_px(chosen.baseline) + "\">" +
           html_escape(text) + "</text>";
  }
  return out + legend + "</svg>";
}

std::vector<size_t> pareto_frontier(const std::vector<ScatterPoint>& points, bool x_higher, bool y_higher) {
  const auto better_or_equal = [](double a, double b, bool higher) { return higher ? a >= b : a <= b; };
  std::vector<size_t> front;
  for (size_t i = 0; i < points.size(); ++i) {
    const ScatterPoint& p = points[i];
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    bool dominated = false;
    for (size_t j = 0; j < points.size() && !dominated; ++j) {
      const ScatterPoint& q = points[j];
      if (j == i || !std::isfinite(q.x) || !std::isfinite(q.y)) continue;
      dominated =
          better_or_equal(q.x, p.x, x_higher) && better_or_equal(q.y, p.y, y_higher) && (q.x != p.x || q.y != p.y);
    }
    if (!dominated) front.push_back(i);
  }
  std::sort(front.begin(), front.end(), [&](size_t a, size_t b) { return points[a].x < points[b].x; });
  return front;
}

std::string scatter_chart_svg(const std::string& title, const std::string& x_label, const std::string& y_label,
                              const std::vector<ScatterPoint>& points, bool x_higher, bool y_higher) {
  size_t longest = 8;  // room right of the plot for the labels of the rightmost points, never cut
  for (const auto& p : points) longest = std::max(longest, p.label.size());
  const double label_room = 16 + 7.0 * static_cast<double>(longest);
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (const auto& p : points)
    if (std::isfinite(p.x) && std::isfinite(p.y))
      x0 = std::min(x0, p.x), x1 = std::max(x1, p.x), y0 = std::min(y0, p.y), y1 = std::max(y1, p.y);
  if (!std::isfinite(x0)) x0 = 0, x1 = 1, y0 = 0, y1 = 1;
  Frame f;
  f.x_ticks = nice_ticks(std::min(0.0, x0), x1, 7);
  f.x = span(f.x_ticks);
  f.log10_y = y0 > 0 && y1 / y0 >= 10;  // ratios of 1.1 and 16: the small ones stay apart
  f.y_ticks = f.log10_y ? log10_ticks(y0, y1) : nice_ticks(std::min(0.0, y0), y1, 6);
  f.y = span(f.y_ticks);
  const std::vector<size_t> front = pareto_frontier(points, x_higher, y_higher);
  std::vector<bool> on_front(points.size());
  for (size_t i : front) on_front[i] = true;
  std::string out = svg_open(kXyLeft + kXyPlotW + label_room, kXyTop + kXyPlotH + kXyBottom, title);
  out += axes(f, x_label, y_label);
  std::string path;
  for (size_t i : front)
    path += (path.empty() ? "M" : "L") + svg_px(f.sx(points[i].x)) + " " + svg_px(f.sy(points[i].y));
  if (front.size() > 1) out += "<path class=\"frontier\" d=\"" + path + "\"/>";
  struct Placed {
    double x0, x1, y;
  };
  std::vector<Placed> placed;  // labels drawn so far: a label moves above or below its point to miss them
  for (size_t i = 0; i < points.size(); ++i) {
    const ScatterPoint& p = points[i];
    if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
    const double cx = f.sx(p.x), cy = f.sy(p.y);
    out += "<g><title>" +
           html_escape(p.label + ": " + x_label + " " + fmt_num(p.x) + ", " + y_label + " " + fmt_num(p.y) +
                       (on_front[i] ? " (on the Pareto frontier)" : "")) +
           "</title>";
    out += std::string("<circle class=\"pt") + (on_front[i] ? " front" : " other") + "\" cx=\"" + svg_px(cx) +
           "\" cy=\"" + svg_px(cy) + "\" r=\"3.5\"/>";
    const double lx0 = cx + 6, lx1 = lx0 + 7.0 * static_cast<double>(p.label.size());
    double ly = cy - 5;
    for (double dy : {-5.0, 9.0, -19.0, 23.0, -33.0, 37.0, -47.0, 51.0}) {
      ly = cy + dy;
      if (std::none_of(placed.begin(), placed.end(),
                       [&](const Placed& q) { return std::fabs(q.y - ly) < 12 && q.x0 < lx1 && lx0 < q.x1; }))
        break;
    }
    placed.push_back({lx0, lx1, ly});
    out += "<text class=\"lbl start\" x=\"" + svg_px(lx0) + "\" y=\"" + svg_px(ly) + "\">" + html_escape(p.label) +
           "</text></g>";
  }
  return out + "</svg>";
}

}  // namespace mlsb::reports::detail
