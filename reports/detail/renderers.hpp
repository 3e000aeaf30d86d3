#pragma once
// One function per report format (each in reports/render_<format>.cpp); reports/render.cpp dispatches.
#include <string>

#include "reports/model.hpp"

namespace mlsb::reports::detail {

std::string render_json(const RunData& run);
std::string render_html(const RunData& run);
std::string render_md(const RunData& run);
std::string render_gbench(const RunData& run);
std::string render_bmf(const RunData& run);
/// The metrics whose direction is `better`: Lower for customSmallerIsBetter, Higher for customBiggerIsBetter.
std::string render_gab(const RunData& run, Better better);

}  // namespace mlsb::reports::detail
