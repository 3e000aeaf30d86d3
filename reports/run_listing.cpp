#include "reports/run_listing.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <optional>
#include <sstream>
#include <utility>

#include "util/json_parse.hpp"
#include "util/text.hpp"
#include "reports/case_names.hpp"
#include "reports/detail/report_text.hpp"

namespace mlsb::reports {
namespace {

// Wall time from start to finish ("42.0s", "3m07s", "1h05m"); "-" while the run has not finished.
std::string format_duration(const RunRecord& r) {
  if (r.finished_at <= 0 || r.started_at <= 0) return "-";
  const double s = std::max(0.0, r.finished_at - r.started_at);
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.1fs", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", static_cast<int>(s / 60), static_cast<int>(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", static_cast<int>(s / 3600), static_cast<int>(s / 60) % 60);
  return buf;
}

// The status with what keeps the run from being a reference: "ok/partial", "ok/suspect".
std::string status_label(const RunRecord& r) {
  return status_name(r.status) + (!r.suspect.empty() ? "/suspect" : r.partial ? "/partial" : "");
}

}  // namespace

std::string format_utc(double unix_seconds) {
  const std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", &tm);
  return buf;
}

std::string format_run_list(const std::vector<RunSummary>& runs) {
  std::ostringstream o;
  char line[512];
  std::snprintf(line, sizeof line, "%-6s %-8s %-19s %-8s %-11s %4s %6s %5s %-16s %-14s %s\n", "id", "uuid",
                "started (UTC)", "duration", "status", "ok", "failed", "other", "suite", "git", "tags");
  o << line;
  for (const auto& [r, counts] : runs) {
    std::snprintf(line, sizeof line, "%-6lld %-8s %-19s %-8s %-11s %4lld %6lld %5lld %-16s %-14s %s\n",
                  static_cast<long long>(r.id), r.uuid.substr(0, 8).c_str(), format_utc(r.started_at).c_str(),
                  format_duration(r).c_str(), status_label(r).c_str(), static_cast<long long>(counts.ok),
                  static_cast<long long>(counts.failed), static_cast<long long>(counts.other), r.suite.c_str(),
                  git_label(r).c_str(), join(r.tags, ",").c_str());
    o << line;
  }
  if (runs.empty()) o << "(no runs)\n";
  return o.str();
}

std::string format_run_detail(const RunData& d) {
  const RunRecord& r = d.run;
  std::ostringstream o;
  o << "run " << r.id << "  " << r.uuid << "\n"
    << "  suite:    " << r.suite << "\n"
    << "  status:   " << r.status << (r.reason.empty() ? "" : "  — " + r.reason) << "\n";
  if (r.partial) o << "  partial:  yes (holds part of its plan" << (r.confirms.empty() ? "" : "; re-runs " + r.confirms) << "): no reference\n";
  if (!r.suspect.empty()) o << "  suspect:  " << r.suspect << "\n";
  o << "  selection: " << dump_json(r.selection) << "\n"
    << "  process:  " << (r.pid > 0 ? std::to_string(r.pid) + " on " + r.host : "-") << "\n"
    << "  started:  " << format_utc(r.started_at) << " UTC\n"
    << "  finished: " << (r.finished_at > 0 ? format_utc(r.finished_at) + " UTC" : "-") << "\n"
    << "  seed:     " << r.seed << "\n"
    << "  tags:     " << join(r.tags, ",") << "\n"
    << "  git:      " << git_label(r) << "\n"
    << "  argv:     " << r.argv << "\n"
    << "  branch:   " << (r.branch.empty() ? "-" : r.branch) << "\n"
    << "  machine:  " << (r.machine_key.empty() ? "-" : r.machine_key) << "\n"
    << "  env:\n";
  for (const auto& [key, value] : r.env.items())  // one line per entry: the whole environment is ~1,000 characters
    o << "    " << key << ": " << (value.is_string() ? value.get<std::string>() : dump_json(value)) << "\n";
  o << "cases (" << d.cases.size() << "):\n";
  const std::vector<std::string> names = case_display_names(d.cases);
  for (size_t i = 0; i < d.cases.size(); ++i) {
    const CaseRecord& c = d.cases[i];
    o << "  [" << c.status << "] " << names[i];
    for (const auto& s : c.summaries)
      if (s.metric == c.primary_metric) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "  %s %.6g %s (n=%lld)", s.metric.c_str(), s.stats.median, s.unit.c_str(),
                      static_cast<long long>(s.stats.n));
        o << buf;
      }
    if (c.throttled) o << "  " << detail::throttle_text(c);
    if (!c.reason.empty()) o << "  — " << c.reason;
    o << "\n";
  }
  return o.str();
}

std::string git_label(const RunRecord& r) {
  if (r.git_sha.empty()) return "-";
  return r.git_sha.substr(0, 10) + (r.git_dirty ? "+dirty" : "");
}

std::string run_line(const RunRecord& r) {
  std::string s = r.uuid.substr(0, 8) + " (id " + std::to_string(r.id) + (r.suite.empty() ? "" : ", " + r.suite) +
                  "): git " + git_label(r);
  if (!r.branch.empty()) s += " on " + r.branch;
  if (r.started_at > 0) s += ", " + format_utc(r.started_at) + " UTC";
  if (!r.machine_key.empty()) s += ", machine " + r.machine_key.substr(0, 8);
  return s;
}

}  // namespace mlsb::reports
