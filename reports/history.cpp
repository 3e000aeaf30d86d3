#include "reports/history.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <regex>
#include <unordered_map>
#include <stdexcept>

#include "util/text.hpp"
#include "reports/case_names.hpp"
#include "reports/baseline.hpp"
#include "reports/compare.hpp"

namespace mlsb::reports {
namespace {

// "a (3 runs), b (1 run)" for the values `key` takes over `runs`, most runs first.
template <class Key>
std::string census(const std::vector<RunRecord>& runs, Key key) {
  std::map<std::string, int> counts;
  for (const auto& r : runs) ++counts[key(r)];
  std::vector<std::pair<int, std::string>> sorted;
  for (const auto& [k, n] : counts) sorted.push_back({-n, k});
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::string> parts;
  for (const auto& [n, k] : sorted)
    parts.push_back((k.empty() ? std::string("(none)") : "'" + k + "'") + " (" + std::to_string(-n) +
                    (n == -1 ? " run)" : " runs)"));
  return parts.empty() ? "none" : join(parts, ", ");
}

// Keeps the runs for which `keep` holds; throws naming `what` and the census of `key` when none does.
template <class Keep, class Key>
void narrow(std::vector<RunRecord>& runs, Keep keep, const std::string& what, Key key, const std::string& kind) {
  std::vector<RunRecord> kept;
  for (auto& r : runs)
    if (keep(r)) kept.push_back(r);
  if (kept.empty()) throw std::invalid_argument("no run matches " + what + " (" + kind + ": " + census(runs, key) + ")");
  runs = std::move(kept);
}

}  // namespace

History load_history(Store& store, const HistoryQuery& q) {
  std::vector<RunRecord> runs;
  for (auto& r : store.list_runs())
    if (r.status != RunStatus::Running) runs.push_back(std::move(r));
  sort_newest_first(runs);  // by start time: runs imported from CI artifacts come in any order
  if (runs.empty()) throw std::invalid_argument(store.path().string() + " holds no finished run yet");
  const auto suite = [](const RunRecord& r) { return r.suite; };
  const auto machine = [](const RunRecord& r) { return r.machine_key; };
  const auto branch = [](const RunRecord& r) { return r.branch; };
  if (!q.suite.empty()) narrow(runs, [&](const RunRecord& r) { return r.suite == q.suite; }, "--suite '" + q.suite + "'", suite, "suites");
  if (!q.tag.empty())
    narrow(runs, [&](const RunRecord& r) { return std::find(r.tags.begin(), r.tags.end(), q.tag) != r.tags.end(); },
           "--tag '" + q.tag + "'", [](const RunRecord& r) { return join(r.tags, ","); }, "tags");
  // runs are newest first: "auto" takes the newest run's machine and branch.
  const std::string machine_key = q.machine == "auto" ? runs.front().machine_key : q.machine;
  const std::string br = q.branch == "auto" ? runs.front().branch : q.branch;
  if (machine_key.empty()) {  // a run stored before machine keys were recorded is a machine of its own
    const RunRecord newest = runs.front();
    runs = {newest};
  } else {
    narrow(runs, [&](const RunRecord& r) { return r.machine_key == machine_key; }, "--machine " + machine_key, machine,
           "machines");
  }
  narrow(runs, [&](const RunRecord& r) { return r.branch == br; }, "--branch '" + br + "'", branch, "branches");
  if (q.like)
    narrow(runs, [&](const RunRecord& r) { return r.status == RunStatus::Ok && same_runner_options(r, *q.like); },
           "status ok and the runner options of run " + std::to_string(q.like->id),
           [](const RunRecord& r) { return status_name(r.status); }, "statuses");
  if (q.suite.empty()) {
    std::map<std::string, int> suites;
    for (const auto& r : runs) ++suites[r.suite];
    if (suites.size() > 1)
      throw std::invalid_argument("the matching runs are of " + std::to_string(suites.size()) + " suites (" +
                                  census(runs, suite) + "): a history follows one; choose it with --suite");
  }
  if (q.last > 0 && static_cast<int>(runs.size()) > q.last) runs.resize(static_cast<size_t>(q.last));
  if (runs.size() < 2)
    throw HistoryTooShort("a history needs 2 runs or more; 1 run matches (id " + std::to_string(runs.front().id) +
                                ", suite '" + runs.front().suite + "', machine " +
                                (machine_key.empty() ? std::string("(none recorded)") : machine_key) + ", branch '" + br + "')");
  std::reverse(runs.begin(), runs.end());  // oldest first

  History h;
  h.suite = runs.back().suite;
  h.machine_key = machine_key;
  h.branch = br;
  std::unordered_map<int64_t, size_t> run_index;
  std::vector<int64_t> ids;
  for (size_t i = 0; i < runs.size(); ++i) run_index[runs[i].id] = i, ids.push_back(runs[i].id);
  h.runs = std::move(runs);

  std::optional<std::regex> filter;
  if (!q.filter.empty()) {
    try {
      filter.emplace(q.filter);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("--filter '" + q.filter + "' is not a valid regular expression: " + e.what());
    }
  }
  const std::string metric = q.metric == "all" ? "" : q.metric;
  // Rows come in run order; a series is found by its pairing key and metric (npos: filtered out).
  constexpr size_t kExcluded = SIZE_MAX;
  std::unordered_map<std::string, size_t> series_index;
  std::vector<size_t> series_case;           // per series: its index into `named`
  std::vector<CaseRecord> named;             // one per case, for display names
  std::unordered_map<std::string, size_t> case_index;
  std::string key;
  for (auto& p : store.load_metric_points(ids, metric)) {
    key = case_pair_key(p.workload, p.params_key, p.comm, p.ranks);
    const size_t pair_size = key.size();
    key += '\n';
    key += p.metric;
    auto it = series_index.find(key);
    if (it == series_index.end()) {
      const bool kept = !filter || std::regex_search(p.workload + "/" + p.params_key, *filter);
      it = series_index.emplace(key, kept ? h.series.size() : kExcluded).first;
      if (kept) {
        HistorySeries s;
        s.workload = p.workload, s.params_key = p.params_key, s.comm = p.comm, s.ranks = p.ranks, s.metric = p.metric;
        h.series.push_back(std::move(s));
        const auto [ci, new_case] = case_index.try_emplace(key.substr(0, pair_size), named.size());
        if (new_case) {
          CaseRecord c;
          c.workload = p.workload, c.params_key = p.params_key, c.backend = p.backend, c.comm = p.comm, c.ranks = p.ranks;
          named.push_back(std::move(c));
        }
        series_case.push_back(ci->second);
      }
    }
    if (it->second == kExcluded) continue;
    HistorySeries& s = h.series[it->second];
    // The newest run's declaration and label win.
    s.primary = p.metric == p.primary_metric;
    s.deterministic = p.deterministic;
    if (s.unit != p.unit) s.unit = p.unit;
    s.better = p.better;
    const size_t run = run_index.at(p.run_id);
    s.points.push_back({run, p.median, p.ci_lo, p.ci_hi, p.n, p.throttled, h.runs[run].partial || !h.runs[run].suspect.empty()});
    CaseRecord& c = named[series_case[it->second]];
    if (c.label != p.label) c.label = p.label;
  }
  if (h.series.empty())
    throw std::invalid_argument("no ok case" + (filter ? " matching --filter '" + q.filter + "'" : std::string()) +
                                (metric.empty() ? std::string() : " with metric '" + q.metric + "'") + " in the " +
                                std::to_string(h.runs.size()) + " runs of suite '" + h.suite + "'");
  for (auto& s : h.series)  // rows come in store order; a series follows the runs' start times
    std::stable_sort(s.points.begin(), s.points.end(),
                     [](const HistoryPoint& a, const HistoryPoint& b) { return a.run < b.run; });
  const std::vector<std::string> names = case_display_names(named);
  for (size_t i = 0; i < h.series.size(); ++i) h.series[i].name = names[series_case[i]];
  return h;
}

void detect_history(History& h, const StepOptions& options) {
  h.detected = true;
  h.options = options;
  for (auto& s : h.series) {
    std::vector<double> values, ci_half;
    s.fitted.clear();
    for (size_t i = 0; i < s.points.size(); ++i) {
      const HistoryPoint& p = s.points[i];
      if (p.throttled || p.unclean || !std::isfinite(p.median)) continue;
      s.fitted.push_back(i);
      values.push_back(p.median);
      ci_half.push_back(p.n >= 2 ? (p.ci_hi - p.ci_lo) / 2 : NAN);
    }
    StepOptions o = options;
    if (s.deterministic) o.threshold = options.deterministic_threshold;
    s.analysis = detect_steps(values, ci_half, s.better, o);
  }
}

std::vector<HistoryRegression> standing_regressions(const History& h, bool primary_only) {
  std::vector<HistoryRegression> out;
  for (const auto& s : h.series) {
    if (primary_only && !s.primary) continue;
    for (const Step* st : s.analysis.regressions()) {
      const auto run = [&](size_t fitted) { return &h.runs[s.points[s.fitted[fitted]].run]; };
      if (st->drift) out.push_back({&s, st, run(st->begin), run(st->begin), run(st->end - 1)});
      else out.push_back({&s, st, run(st->at), run(st->at - 1), nullptr});
    }
  }
  return out;
}

}  // namespace mlsb::reports
