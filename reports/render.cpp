#include "reports/render.hpp"

#include <stdexcept>

#include "reports/detail/renderers.hpp"

namespace mlsb::reports {

Format parse_format(std::string_view text) {
  if (text == "json") return Format::Json;
  if (text == "html") return Format::Html;
  if (text == "md" || text == "markdown") return Format::Md;
  if (text == "gbench") return Format::Gbench;
  if (text == "bmf") return Format::Bmf;
  if (text == "gab") return Format::Gab;
  if (text == "gab-bigger") return Format::GabBigger;
  throw std::invalid_argument("unknown report format '" + std::string(text) +
                              "' (expected json, html, md, gbench, bmf, gab or gab-bigger)");
}

std::string_view to_string(Format f) {
  switch (f) {
    case Format::Json: return "json";
    case Format::Html: return "html";
    case Format::Md: return "md";
    case Format::Gbench: return "gbench";
    case Format::Bmf: return "bmf";
    case Format::Gab: return "gab";
    case Format::GabBigger: return "gab-bigger";
  }
  return "json";
}

std::string render(const RunData& run, Format f) {
  switch (f) {
    case Format::Json: return detail::render_json(run);
    case Format::Html: return detail::render_html(run);
    case Format::Md: return detail::render_md(run);
    case Format::Gbench: return detail::render_gbench(run);
    case Format::Bmf: return detail::render_bmf(run);
    case Format::Gab: return detail::render_gab(run, Better::Lower);
    case Format::GabBigger: return detail::render_gab(run, Better::Higher);
  }
  throw std::invalid_argument("render: unknown format");
}

}  // namespace mlsb::reports
