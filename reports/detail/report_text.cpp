#include "reports/detail/report_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>

#include "util/text.hpp"
#include "reports/case_names.hpp"

namespace mlsb::reports::detail {

std::string fmt_num(double v, int sig) {
  if (!std::isfinite(v)) return "n/a";
  char buf[64];
  const double a = std::fabs(v);
  if (a != 0 && (a < 1e-3 || a >= 1e6)) {
    std::snprintf(buf, sizeof buf, "%.*g", sig, v);
  } else {
    const int magnitude = a == 0 ? 0 : static_cast<int>(std::floor(std::log10(a)));
    std::snprintf(buf, sizeof buf, "%.*f", std::max(0, sig - 1 - magnitude), v);
  }
  return buf;
}

std::string metric_with_unit(const std::string& metric, const std::string& unit) {
  return unit.empty() ? metric : metric + " (" + unit + ")";
}

std::string fmt_interval(double lo, double hi) { return "[" + fmt_num(lo) + ", " + fmt_num(hi) + "]"; }

nlohmann::ordered_json json_number(double v) { return std::isfinite(v) ? nlohmann::ordered_json(v) : nullptr; }

std::string fmt_ci(const Summary& s) { return s.n < 2 ? kNoEstimate : fmt_interval(s.ci_lo, s.ci_hi); }

std::string fmt_rel_stddev(const Summary& s) { return s.n < 2 ? kNoEstimate : fmt_num(100 * s.rel_stddev, 3) + "%"; }

std::string iso_time(double unix_s) {
  if (unix_s == 0) return "";
  const auto t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string fmt_percent(int part, int total) {
  if (total == 0) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * part / total);
  return buf;
}

std::string html_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string fmt_signed_percent(double change) {
  if (!std::isfinite(change)) return "n/a";
  return (change >= 0 ? "+" : "") + fmt_num(100 * change, 3) + "%";
}

std::string html_breakable(std::string_view s) {
  std::string out;
  for (size_t at = 0; at < s.size();) {
    const size_t next = s.find_first_of(",/", at);
    const size_t end = next == std::string_view::npos ? s.size() : next + 1;
    out += html_escape(s.substr(at, end - at));
    if (next != std::string_view::npos) out += "<wbr>";
    at = end;
  }
  return out;
}

std::string md_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '|': out += "\\|"; break;
      case '\\': out += "\\\\"; break;
      case '`': out += "\\`"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '\n': case '\r': out += ' '; break;
      default: out += ch;
    }
  }
  return out;
}

std::string status_text(const CaseRecord& c) {
  const std::string throttled = throttle_text(c);
  const std::string status = throttled.empty() ? status_name(c.status) : status_name(c.status) + ", " + throttled;
  return c.reason.empty() ? status : status + ": " + c.reason;
}

std::string throttle_text(const CaseRecord& c) {
  if (!c.throttled) return "";
  std::vector<std::string> reasons;
  if (const auto it = c.gpu.find("throttle_reasons"); it != c.gpu.end() && it->is_array())
    for (const auto& r : *it)
      if (r.is_string()) reasons.push_back(r.get<std::string>());
  return reasons.empty() ? "throttled" : "throttled (" + join(reasons, ", ") + ")";
}

std::string throttle_note(const WorkloadGroup& g) {
  if (std::none_of(g.cases.begin(), g.cases.end(), [](const CaseRecord* c) { return c->throttled; })) return "";
  return "throttled: the GPU slowed its clocks during the case (a clock event reason other than idle or a "
         "clock setting, or the SM clock below 75% of its max); compare calls such a case noisy, never worse.";
}

const SummaryRow* find_summary(const CaseRecord& c, std::string_view metric) {
  for (const auto& s : c.summaries)
    if (s.metric == metric) return &s;
  return nullptr;
}

std::string call_text(const nlohmann::json& call) {
  if (!call.is_object()) return call.dump();
  const std::string name = call.value("name", std::string("?"));
  const auto args = call.find("arguments");
  return name + "(" + (args == call.end() ? std::string() : args->dump()) + ")";
}

std::vector<WorkloadGroup> group_by_workload(const RunData& run) {
  std::vector<WorkloadGroup> groups;
  std::map<std::string, size_t, std::less<>> index;
  const std::vector<std::string> names = case_display_names(run.cases);
  for (size_t i = 0; i < run.cases.size(); ++i) {
    const CaseRecord& c = run.cases[i];
    auto [it, added] = index.try_emplace(c.workload, groups.size());
    if (added) groups.push_back({c.workload, {}, {}, {}});
    auto& g = groups[it->second];
    g.cases.push_back(&c);
    g.names.push_back(names[i]);
    for (const auto& s : c.summaries) {
      bool seen = false;
      for (const auto& m : g.metrics) seen = seen || m.first == s.metric;
      if (!seen) g.metrics.emplace_back(s.metric, s.unit);
    }
  }
  return groups;
}

std::vector<TrendPoint> trend_points(const RunData& run) {
  std::vector<TrendPoint> points;
  const std::vector<std::string> names = case_display_names(run.cases);
  for (size_t i = 0; i < run.cases.size(); ++i) {
    const CaseRecord& c = run.cases[i];
    if (c.status != CaseStatus::Ok) continue;
    for (const auto& s : c.summaries) {
      const auto samples = c.samples.find(s.metric);
      const bool finite = std::isfinite(s.stats.median) && std::isfinite(s.stats.p05) && std::isfinite(s.stats.p95);
      if (samples != c.samples.end() && !samples->second.empty() && finite) points.push_back({&c, names[i], &s});
    }
  }
  return points;
}

std::string status_counts(const WorkloadGroup& g) {
  std::vector<std::pair<CaseStatus, int>> counts;
  for (const CaseRecord* c : g.cases) {
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& p) { return p.first == c->status; });
    if (it == counts.end()) counts.emplace_back(c->status, 1);
    else ++it->second;
  }
  std::string out = std::to_string(g.cases.size()) + (g.cases.size() == 1 ? " case: " : " cases: ");
  for (size_t i = 0; i < counts.size(); ++i)
    out += (i ? ", " : "") + std::to_string(counts[i].second) + " " + status_name(counts[i].first);
  return out;
}

namespace {
void flatten_into(const nlohmann::json& j, const std::string& prefix,
                  std::vector<std::pair<std::string, std::string>>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten_into(v, prefix.empty() ? k : prefix + "." + k, out);
    return;
  }
  if (j.is_array()) {
    std::string joined;
    for (const auto& v : j) {
      if (!v.is_primitive()) {
        out.emplace_back(prefix, j.dump());
        return;
      }
      joined += (joined.empty() ? "" : ", ") + (v.is_string() ? v.get<std::string>() : v.dump());
    }
    out.emplace_back(prefix, joined);
    return;
  }
  out.emplace_back(prefix, j.is_string() ? j.get<std::string>() : j.dump());
}
}  // namespace

std::vector<std::pair<std::string, std::string>> flatten_env(const nlohmann::json& env) {
  std::vector<std::pair<std::string, std::string>> out;
  flatten_into(env, "", out);
  return out;
}

std::vector<std::pair<std::string, std::string>> run_fields(const RunRecord& run) {
  std::string tags;
  for (const auto& t : run.tags) tags += (tags.empty() ? "" : ", ") + t;
  std::string duration;
  if (run.finished_at > 0 && run.started_at > 0) duration = fmt_num(run.finished_at - run.started_at) + " s";
  return {{"run", run.uuid + " (id " + std::to_string(run.id) + ")"},
          {"suite", run.suite},
          {"status", status_name(run.status)},
          {"started", iso_time(run.started_at)},
          {"finished", iso_time(run.finished_at)},
          {"duration", duration},
          {"seed", std::to_string(run.seed)},
          {"tags", tags},
          {"git", run.git_sha + (run.git_dirty ? " (dirty)" : "")},
          {"command", run.argv}};
}

}  // namespace mlsb::reports::detail
