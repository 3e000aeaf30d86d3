#pragma once
// Renders one stored run as a report: JSON (schema "mlsysbench.report/1", see REPORT_SCHEMA.md),
// self-contained HTML (inline CSS and SVG, no scripts, no network), GitHub-flavoured Markdown,
// Google-Benchmark-compatible JSON readable by Google Benchmark's tools/compare.py, or the trend formats
// of CI dashboards: Bencher Metric Format (bmf) and github-action-benchmark's custom JSON (gab, gab-bigger).
#include <string>
#include <string_view>

#include "reports/model.hpp"

namespace mlsb::reports {

/// Gab: the lower-is-better metrics (tool customSmallerIsBetter); GabBigger: the higher-is-better ones
/// (customBiggerIsBetter).
enum class Format { Json, Html, Md, Gbench, Bmf, Gab, GabBigger };

/// Parses "json" | "html" | "md" (or "markdown") | "gbench" | "bmf" | "gab" | "gab-bigger"; throws
/// std::invalid_argument listing the formats.
Format parse_format(std::string_view text);
std::string_view to_string(Format f);

/// The longest Markdown report, in bytes: a pull-request comment holds 65,536 characters. A longer report is
/// cut at a line before it, with a marker that points to the HTML report.
inline constexpr size_t kMaxMarkdownBytes = 60000;

/// The report text (UTF-8). Deterministic: the same RunData gives the same bytes.
std::string render(const RunData& run, Format f);

}  // namespace mlsb::reports
