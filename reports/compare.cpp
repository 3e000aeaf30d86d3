#include "reports/compare.hpp"

#include <cmath>
#include <map>
#include <numeric>
#include <stdexcept>

namespace mlsb::reports {
namespace {

bool has_samples(const CaseRecord& c) {
  for (const auto& [metric, values] : c.samples)
    if (!values.empty()) return true;
  return false;
}

// The smallest p-value the U test can give for samples of these sizes (fully separated samples).
double min_achievable_p(size_t n1, size_t n2) {
  std::vector<double> a(n1), b(n2);
  std::iota(a.begin(), a.end(), 0.0);
  std::iota(b.begin(), b.end(), static_cast<double>(n1));
  return mann_whitney_p(a, b);
}

Verdict decide(const MetricComparison& m, std::span<const double> base, std::span<const double> cand,
               const CompareOptions& o) {
  const double change = m.cand_median - m.base_median;
  if (std::fabs(change) <= o.threshold * std::fabs(m.base_median)) return Verdict::Same;
  const bool improved = (change < 0) == (m.better == Better::Lower);
  const Verdict direction = improved ? Verdict::Better : Verdict::Worse;
  if (min_achievable_p(base.size(), cand.size()) < o.alpha) return m.p_value < o.alpha ? direction : Verdict::Noisy;
  if (base.size() < 2 || cand.size() < 2 || !std::isfinite(m.ci_lo) || !std::isfinite(m.ci_hi)) return Verdict::Noisy;
  const bool ratio_up = (change > 0) == (m.base_median > 0);  // the ratio moves above 1
  const bool beyond = ratio_up ? m.ci_lo > 1 + o.threshold : m.ci_hi < 1 - o.threshold;
  return beyond ? direction : Verdict::Noisy;
}

MetricComparison compare_metric(const CaseRecord& base, const CaseRecord& cand, const std::string& metric,
                                const std::vector<double>& b, const std::vector<double>& c, const CompareOptions& o) {
  MetricComparison m;
  m.workload = base.workload;
  m.params_key = base.params_key;
  m.metric = metric;
  for (const CaseRecord* rec : {&base, &cand})  // the candidate's declaration wins
    for (const auto& s : rec->summaries)
      if (s.metric == metric) {
        m.unit = s.unit;
        m.better = s.better;
      }
  m.primary = metric == cand.primary_metric;
  m.base_n = static_cast<int64_t>(b.size());
  m.cand_n = static_cast<int64_t>(c.size());
  m.base_median = median(b);
  m.cand_median = median(c);
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
  m.verdict = decide(m, b, c, o);
  return m;
}

std::string case_key(const CaseRecord& c) { return c.workload + '\n' + c.params_key; }

}  // namespace

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

std::vector<CaseStatus> Comparison::new_failures() const {
  std::vector<CaseStatus> out;
  for (const auto& c : not_compared)
    if (c.base_status == "ok" && (c.cand_status == "failed" || c.cand_status == "timeout")) out.push_back(c);
  return out;
}

Comparison compare_runs(const RunData& base, const RunData& cand, const CompareOptions& options) {
  if (!(options.threshold >= 0)) throw std::invalid_argument("compare: threshold must be >= 0");
  if (!(options.alpha > 0 && options.alpha < 1)) throw std::invalid_argument("compare: alpha must be in (0, 1)");
  Comparison cmp{base.run, cand.run, options, {}, {}, {}, {}};
  // Cases with the same workload and params pair up in run order (first with first, second with second).
  std::map<std::string, std::vector<const CaseRecord*>> cand_cases;
  for (const auto& c : cand.cases) cand_cases[case_key(c)].push_back(&c);
  std::map<std::string, size_t> used;
  for (const auto& b : base.cases) {
    const std::string key = case_key(b);
    auto& candidates = cand_cases[key];
    size_t& next = used[key];
    if (next >= candidates.size()) {
      cmp.only_base.push_back({b.workload, b.params_key, b.status, ""});
      continue;
    }
    const CaseRecord& c = *candidates[next++];
    if (b.status != "ok" || c.status != "ok" || !has_samples(b) || !has_samples(c)) {
      cmp.not_compared.push_back({b.workload, b.params_key, b.status, c.status});
      continue;
    }
    for (const auto& [metric, bv] : b.samples) {
      const auto it = c.samples.find(metric);
      if (bv.empty() || it == c.samples.end() || it->second.empty()) continue;
      cmp.metrics.push_back(compare_metric(b, c, metric, bv, it->second, options));
    }
  }
  for (const auto& c : cand.cases) {
    const std::string key = case_key(c);
    if (used[key] < cand_cases[key].size() && cand_cases[key][used[key]] == &c) {
      ++used[key];
      cmp.only_cand.push_back({c.workload, c.params_key, "", c.status});
    }
  }
  return cmp;
}

}  // namespace mlsb::reports
