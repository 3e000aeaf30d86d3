#pragma once
// The harness as MCP tools (`mlsysbench mcp-serve`), so an agent can run and read benchmarks:
//   list_workloads  workloads with their axes (types, defaults, choices) and metrics (units, direction)
//   list_suites     the named suites
//   run             a suite or workload, as `mlsysbench run` (axis overrides, repetitions, seed, tags,
//                   filter, dry run); stored in the server's store; returns the run id and counts
//   list_runs       the stored runs, newest first
//   get_report      one run as the JSON report (reports/REPORT_SCHEMA.md) or Markdown
//   compare_runs    two runs case by case (ratio, CI, p-value, verdict) and whether anything regressed
// Tool failures (an unknown run, a bad axis value) are results with isError and the message.
#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "mcp/tool_server/tool_server.hpp"

namespace mlsb {

/// The tools over the store `db` (created by the first run) and suites from `suite_dirs`. `interrupt`
/// (Ctrl-C) cancels a run in flight, which is then stored as interrupted. Runs go one at a time.
std::vector<mcp::ServerTool> harness_tools(const std::string& db, const std::vector<std::filesystem::path>& suite_dirs,
                                           const std::atomic<bool>& interrupt);

}  // namespace mlsb
