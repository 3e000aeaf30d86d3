#pragma once
// Renders one stored run as a report: JSON (schema "mlsysbench.report/1", see REPORT_SCHEMA.md),
// self-contained HTML (inline CSS and SVG, no scripts, no network), GitHub-flavoured Markdown, or
// Google-Benchmark-compatible JSON readable by Google Benchmark's tools/compare.py.
#include <string>
#include <string_view>

#include "reports/model.hpp"

namespace mlsb::reports {

enum class Format { Json, Html, Md, Gbench };

/// Parses "json" | "html" | "md" (or "markdown") | "gbench"; throws std::invalid_argument listing the formats.
Format parse_format(std::string_view text);
std::string_view to_string(Format f);

/// The report text (UTF-8). Deterministic: the same RunData gives the same bytes.
std::string render(const RunData& run, Format f);

}  // namespace mlsb::reports
