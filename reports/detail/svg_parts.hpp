#pragma once
// Pieces every inline SVG chart of the reports writes: coordinates and the opening <svg> element.
#include <string>

namespace mlsb::reports::detail {

/// A coordinate in px with one decimal ("12.5").
std::string svg_px(double v);

/// `<svg ... class="chart[ extra_class]" role="img" width height viewBox><title>title</title>` (escaped).
std::string svg_open(double width, double height, const std::string& title, const std::string& extra_class = "");

}  // namespace mlsb::reports::detail
