#include "reports/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <span>
#include <stdexcept>

#include "reports/case_names.hpp"
#include "reports/detection_power.hpp"

namespace mlsb::reports {
namespace {

bool has_samples(const CaseRecord& c) {
  for (const auto& [metric, values] : c.samples)
    if (!values.empty()) return true;
  return false;
}

// Whether samples vary within their run: a measured quantity, as opposed to a count or a score that
// every sample repeats (the run-to-run noise floor applies only to the former).
bool varies(const std::vector<double>& v) {
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return v.size() >= 2 && *lo != *hi;
}

// A probability as a short percentage: 0.001 -> "0.1%".
std::string percent(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g%%", 100 * p);
  return buf;
}

// The smallest p-value the U test can give for samples of these sizes (fully separated samples).
double min_achievable_p(size_t n1, size_t n2) {
  std::vector<double> a(n1), b(n2);
  std::iota(a.begin(), a.end(), 0.0);
  std::iota(b.begin(), b.end(), static_cast<double>(n1));
  return mann_whitney_p(a, b);
}

Significance significance_for(size_t base_n, size_t cand_n, const CompareOptions& o) {
  if (base_n < 2 || cand_n < 2) return Significance::None;
  return min_achievable_p(base_n, cand_n) < o.alpha ? Significance::UTest : Significance::RatioCI;
}

Verdict decide(const MetricComparison& m, const CompareOptions& o) {
  const double change = m.cand_median - m.base_median;
  if (std::fabs(change) <= o.threshold * std::fabs(m.base_median)) return Verdict::Same;
  const bool improved = (change < 0) == (m.better == Better::Lower);
  const Verdict direction = improved ? Verdict::Better : Verdict::Worse;
  switch (m.significance) {
    case Significance::None: return direction;  // no noise estimate: the threshold alone decides
    case Significance::UTest: return m.p_value < o.alpha ? direction : Verdict::Noisy;
    case Significance::RatioCI: break;
  }
  if (!std::isfinite(m.ci_lo) || !std::isfinite(m.ci_hi)) return Verdict::Noisy;
  const bool ratio_up = (change > 0) == (m.base_median > 0);  // the ratio moves above 1
  const bool beyond = ratio_up ? m.ci_lo > 1 + o.threshold : m.ci_hi < 1 - o.threshold;
  return beyond ? direction : Verdict::Noisy;
}

// Whether both sides declare `metric` deterministic.
bool deterministic(const CaseRecord& base, const CaseRecord& cand, const std::string& metric) {
  const auto declared = [&](const CaseRecord& rec) {
    for (const auto& s : rec.summaries)
      if (s.metric == metric) return s.deterministic;
    return false;
  };
  return declared(base) && declared(cand);
}

// The deterministic rule (see compare.hpp): the threshold alone, or a determinism defect within one commit.
void decide_deterministic(MetricComparison& m, const CompareOptions& o, bool same_commit) {
  const double change = std::isfinite(m.ratio) ? std::fabs(m.ratio - 1) : INFINITY;
  if (same_commit) {
    if (change > o.determinism_tolerance) {
      m.verdict = Verdict::Noisy;
      m.why = "determinism defect: two runs of one commit differ by " + std::to_string(100 * change).substr(0, 6) + "%";
    } else {
      m.verdict = Verdict::Same;
    }
    return;
  }
  if (change <= o.deterministic_threshold) {
    m.verdict = Verdict::Same;
    return;
  }
  m.verdict = (m.cand_median < m.base_median) == (m.better == Better::Lower) ? Verdict::Better : Verdict::Worse;
}

MetricComparison compare_metric(const CaseRecord& base, const CaseRecord& cand, const std::string& name,
                                const std::string& metric, const std::vector<double>& b, const std::vector<double>& c,
                                const CompareOptions& o, const HistoryMedians& history, bool same_commit) {
  MetricComparison m;
  m.workload = base.workload;
  m.params_key = base.params_key;
  m.name = name;
  m.metric = metric;
  for (const CaseRecord* rec : {&base, &cand})  // the candidate's declaration wins
    for (const auto& s : rec->summaries)
      if (s.metric == metric) {
        m.unit = s.unit;
        m.better = s.better;
      }
  m.primary = metric == base.primary_metric || metric == cand.primary_metric;  // the base's stays judged
  m.base_run = base.run_id;
  m.base_n = static_cast<int64_t>(b.size());
  m.cand_n = static_cast<int64_t>(c.size());
  m.base_median = median(b);
  m.cand_median = median(c);
  m.significance = significance_for(b.size(), c.size(), o);
  m.deterministic = deterministic(base, cand, metric);
  const auto hist = history.find(case_pair_key(cand) + '\n' + metric);
  if (hist != history.end() && !hist->second.empty()) {
    const std::vector<double>& h = hist->second;
    m.history_n = static_cast<int64_t>(h.size());
    m.history_mean = std::accumulate(h.begin(), h.end(), 0.0) / static_cast<double>(m.history_n);
    m.reference = median(std::span<const double>(h.data(), static_cast<size_t>(std::min(m.history_n, kReferenceRuns))));
    m.rel_noise = history_rel_sd(h);
    CompareOptions rule = o;  // the two-run rule's floor is the measured noise once the history has enough runs
    if (!o.history_t_test && m.history_n >= kTTestHistory) rule.run_noise = run_to_run_noise(h, o.two_run_alpha);
    m.detectable = detectable_step(o.history_t_test ? m.history_n : 0, m.rel_noise, rule);
    m.detectable_full =
        detectable_step(o.history_t_test ? std::max<int64_t>(m.history_n, o.history_limit) : 0, m.rel_noise, rule);
    if (m.deterministic) m.detectable = m.detectable_full = o.deterministic_threshold;  // no noise to see through
  }
  if (b == c) {  // A/A: exactly the same samples, whatever their number
    m.ratio = m.ci_lo = m.ci_hi = m.p_value = 1;
    m.verdict = Verdict::Same;
    return m;
  }
  m.ratio = m.base_median != 0 ? m.cand_median / m.base_median : NAN;
  const Interval ci = bootstrap_ratio_ci(b, c, 0.95);
  m.ci_lo = ci.lo;
  m.ci_hi = ci.hi;
  m.p_value = mann_whitney_p(b, c);
  m.throttled = base.throttled || cand.throttled;
  if (m.deterministic) {
    decide_deterministic(m, o, same_commit);
    return m;
  }
  m.verdict = decide(m, o);
  if (m.verdict != Verdict::Better && m.verdict != Verdict::Worse) return m;
  const bool up = m.cand_median > m.base_median;
  if (m.throttled) {
    m.why = "the GPU throttled";
  } else if (m.history_n >= kTTestHistory && o.history_t_test) {
    m.history_p = t_prediction_p(hist->second, m.cand_median, up);
    const bool moved = (m.cand_median > m.reference) == up &&
                       std::fabs(m.cand_median - m.reference) > o.threshold * std::fabs(m.reference);
    if (!(m.history_p < o.history_alpha) || !moved)
      m.why = "within the spread of the last " + std::to_string(m.history_n) + " runs (t-test p " +
              std::to_string(m.history_p).substr(0, 5) + (moved ? "" : ", within the threshold of the reference level") + ")";
  } else if (varies(b) || varies(c)) {
    // The machine's run-to-run noise: from the history when it has enough runs, else the assumed one.
    const bool measured = m.history_n >= kTTestHistory;
    const double floor = measured ? run_to_run_noise(hist->second, o.two_run_alpha) : o.run_noise;
    const double change = m.ratio >= 1 ? m.ratio - 1 : 1 / m.ratio - 1;  // measured as the floor is
    if (std::isfinite(m.ratio) && change <= floor)
      m.why = "within the run-to-run noise (" + std::to_string(static_cast<int>(std::lround(floor * 100))) + "%, " +
              (measured ? "the " + percent(o.two_run_alpha) + " prediction bound of " + std::to_string(m.history_n) +
                              " runs of unchanged code"
                        : std::string("assumed")) + ")";
  }
  if (!m.why.empty()) m.verdict = Verdict::Noisy;
  return m;
}

}  // namespace

std::string case_pair_key(const std::string& workload, const std::string& params_key, const std::string& comm,
                          int ranks) {
  return workload + '\n' + params_key + '\n' + comm + '\n' + std::to_string(ranks);
}

std::string case_pair_key(const CaseRecord& c) { return case_pair_key(c.workload, c.params_key, c.comm, c.ranks); }

std::string_view to_string(Significance s) {
  switch (s) {
    case Significance::UTest: return "u-test";
    case Significance::RatioCI: return "ratio-ci";
    case Significance::None: return "none";
  }
  return "none";
}

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::Better: return "better";
    case Verdict::Worse: return "worse";
    case Verdict::Same: return "same";
    case Verdict::Noisy: return "noisy";
  }
  return "same";
}

bool Comparison::has_regression(bool primary_only) const {
  for (const auto& m : metrics)
    if (m.verdict == Verdict::Worse && (m.primary || !primary_only)) return true;
  return false;
}

std::vector<CaseInRuns> Comparison::new_failures() const {
  std::vector<CaseInRuns> out;
  for (const auto& c : not_compared)
    if (c.base_status == CaseStatus::Ok && c.cand_status && is_failure(*c.cand_status)) out.push_back(c);
  return out;
}

std::vector<CaseInRuns> Comparison::missing_in_candidate() const {
  std::vector<CaseInRuns> out;
  for (const auto& c : only_base)
    if (c.base_status == CaseStatus::Ok) out.push_back(c);
  return out;
}

std::vector<std::string> Comparison::worse_cases() const {
  std::vector<std::string> out;
  for (const auto& m : metrics)
    if (m.primary && m.verdict == Verdict::Worse) {
      std::string id = m.workload + "/" + m.params_key;
      if (std::find(out.begin(), out.end(), id) == out.end()) out.push_back(std::move(id));
    }
  return out;
}

bool Comparison::fails_gate() const { return !gate_failures().empty(); }

std::vector<std::string> Comparison::gate_failures() const {
  std::vector<std::string> out;
  const auto count = [&](size_t n, const char* one, const char* many, const char* what) {
    if (n) out.push_back(std::to_string(n) + " " + (n == 1 ? one : many) + " " + what);
  };
  size_t worse = 0;
  for (const auto& m : metrics) worse += m.primary && m.verdict == Verdict::Worse;
  count(worse, "primary metric", "primary metrics", "worse");
  count(new_failures().size(), "case", "cases", "ok in the base failed or timed out");
  count(lost_primary.size(), "case", "cases", "lost its primary metric");
  if (!cand.partial) count(missing_in_candidate().size(), "case", "cases", "ok in the base missing");
  if (metrics.empty()) out.push_back("no case compared");
  return out;
}

Comparison compare_runs(const RunData& base, const RunData& cand, const CompareOptions& options,
                        const HistoryMedians& history) {
  if (!(options.threshold >= 0)) throw std::invalid_argument("compare: threshold must be >= 0");
  if (!(options.alpha > 0 && options.alpha < 1)) throw std::invalid_argument("compare: alpha must be in (0, 1)");
  if (!(options.run_noise >= 0)) throw std::invalid_argument("compare: run_noise must be >= 0");
  if (!(options.deterministic_threshold >= 0) || !(options.determinism_tolerance >= 0))
    throw std::invalid_argument("compare: deterministic_threshold and determinism_tolerance must be >= 0");
  if (!(options.history_alpha > 0 && options.history_alpha < 1) || !(options.two_run_alpha > 0 && options.two_run_alpha < 1))
    throw std::invalid_argument("compare: history_alpha and two_run_alpha must be in (0, 1)");
  Comparison cmp{base.run, cand.run, options, {}, {}, {}, {}, {}};
  const bool same_commit = !base.run.git_sha.empty() && base.run.git_sha == cand.run.git_sha && !base.run.git_dirty &&
                           !cand.run.git_dirty;
  const std::vector<std::string> base_names = case_display_names(base.cases);
  const std::vector<std::string> cand_names = case_display_names(cand.cases);
  // Cases with the same workload, params, communicator and ranks pair up in run order (first with first, second with second).
  std::map<std::string, std::vector<size_t>> cand_cases;  // key -> indices into cand.cases
  for (size_t i = 0; i < cand.cases.size(); ++i) cand_cases[case_pair_key(cand.cases[i])].push_back(i);
  std::map<std::string, size_t> used;
  // A case only in one run whose workload and params the other run has on another communicator or rank
  // count: its name says where it ran, or the two lists would show the same name.
  auto where = [](const std::vector<CaseRecord>& other, const CaseRecord& c, const std::string& name) {
    for (const CaseRecord& o : other)
      if (o.workload == c.workload && o.params_key == c.params_key)
        return name + " (" + c.comm + ", " + std::to_string(c.ranks) + (c.ranks == 1 ? " rank)" : " ranks)");
    return name;
  };
  for (size_t i = 0; i < base.cases.size(); ++i) {
    const CaseRecord& b = base.cases[i];
    const std::string key = case_pair_key(b);
    auto& candidates = cand_cases[key];
    size_t& next = used[key];
    if (next >= candidates.size()) {
      cmp.only_base.push_back({b.workload, b.params_key, b.status, std::nullopt, where(cand.cases, b, base_names[i])});
      continue;
    }
    const CaseRecord& c = cand.cases[candidates[next++]];
    if (b.status != CaseStatus::Ok || c.status != CaseStatus::Ok || !has_samples(b) || !has_samples(c)) {
      cmp.not_compared.push_back({b.workload, b.params_key, b.status, c.status, base_names[i]});
      continue;
    }
    for (const auto& [metric, bv] : b.samples) {
      const auto it = c.samples.find(metric);
      if (bv.empty() || it == c.samples.end() || it->second.empty()) {
        if (metric == b.primary_metric && !bv.empty())
          cmp.lost_primary.push_back({b.workload, b.params_key, b.status, c.status, base_names[i]});
        continue;
      }
      cmp.metrics.push_back(compare_metric(b, c, base_names[i], metric, bv, it->second, options, history, same_commit));
    }
  }
  for (size_t i = 0; i < cand.cases.size(); ++i) {
    const CaseRecord& c = cand.cases[i];
    const std::string key = case_pair_key(c);
    if (used[key] < cand_cases[key].size() && cand_cases[key][used[key]] == i) {
      ++used[key];
      cmp.only_cand.push_back({c.workload, c.params_key, std::nullopt, c.status, where(base.cases, c, cand_names[i])});
    }
  }
  return cmp;
}

}  // namespace mlsb::reports
