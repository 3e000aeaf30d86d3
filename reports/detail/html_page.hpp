#pragma once
// The frame every HTML page of ours shares (run report, comparison, history): doctype, a
// Content-Security-Policy that forbids any fetch and script, the inline style sheet, the title.
#include <string>
#include <utility>
#include <vector>

namespace mlsb::reports::detail {

/// Everything up to and including "<body>\n", titled `title` (escaped here).
std::string html_page_head(const std::string& title);

/// "<figure><figcaption>caption</figcaption>svg</figure>\n", the caption escaped: every chart of ours.
std::string html_figure(const std::string& caption, const std::string& svg);

/// "<table class=\"meta\">" of (field, value) rows, escaped.
std::string html_meta_table(const std::vector<std::pair<std::string, std::string>>& rows);

}  // namespace mlsb::reports::detail
