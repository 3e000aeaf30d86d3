#include "reports/detail/svg_parts.hpp"

#include <cstdio>

#include "reports/detail/report_text.hpp"

namespace mlsb::reports::detail {

std::string svg_px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string svg_open(double width, double height, const std::string& title, const std::string& extra_class) {
  const std::string w = svg_px(width), h = svg_px(height);
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart" + (extra_class.empty() ? "" : " " + extra_class) +
         "\" role=\"img\" width=\"" + w + "\" height=\"" + h + "\" viewBox=\"0 0 " + w + " " + h + "\"><title>" +
         html_escape(title) + "</title>";
}

}  // namespace mlsb::reports::detail
