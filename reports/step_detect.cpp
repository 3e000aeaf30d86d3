#include "reports/step_detect.hpp"

#include <algorithm>
#include <cmath>
#include <queue>
#include <stdexcept>

#include "util/stats.hpp"

namespace mlsb::reports {
namespace {

struct Entry {
  double y, w;
};
struct ByYLess {
  bool operator()(const Entry& a, const Entry& b) const { return a.y < b.y; }
};
struct ByYGreater {
  bool operator()(const Entry& a, const Entry& b) const { return a.y > b.y; }
};

// sum w_i |y_i - m| around the weighted median m of the values added so far: two heaps split at the
// median, with the weight and weighted sum of each side.
class RunningL1 {
 public:
  void add(double y, double w) {
    if (lower_.empty() || y <= lower_.top().y) push(lower_, wl_, sl_, {y, w});
    else push(upper_, wu_, su_, {y, w});
    const double half = (wl_ + wu_) / 2;
    while (!lower_.empty() && wl_ - lower_.top().w >= half) move(lower_, wl_, sl_, upper_, wu_, su_);
    while (wl_ < half && !upper_.empty()) move(upper_, wu_, su_, lower_, wl_, sl_);
  }
  double median() const { return lower_.top().y; }
  double cost() const {
    const double m = median();
    return std::max(0.0, m * wl_ - sl_ + su_ - m * wu_);
  }

 private:
  template <class Heap>
  static void push(Heap& h, double& w, double& s, Entry e) {
    h.push(e);
    w += e.w;
    s += e.w * e.y;
  }
  template <class From, class To>
  static void move(From& from, double& wf, double& sf, To& to, double& wt, double& st) {
    const Entry e = from.top();
    from.pop();
    wf -= e.w;
    sf -= e.w * e.y;
    push(to, wt, st, e);
  }
  std::priority_queue<Entry, std::vector<Entry>, ByYLess> lower_;
  std::priority_queue<Entry, std::vector<Entry>, ByYGreater> upper_;
  double wl_ = 0, wu_ = 0, sl_ = 0, su_ = 0;
};

struct Series {
  std::span<const double> y;
  std::vector<double> w;
  double sigma = 1;
  double floor = 0;  // the least noise the series can have: its resolution, its runs' own CIs, 1e-6 of its scale

  // The fit's cost of one level over [b, e), in noise units, and its value.
  std::pair<double, double> level(size_t b, size_t e) const {
    RunningL1 l1;
    for (size_t i = b; i < e; ++i) l1.add(y[i], w[i]);
    return {l1.cost() / sigma, l1.median()};
  }

  // The best split of [b, e) into two levels of at least `min` runs: (gain over one level, index).
  std::pair<double, size_t> best_split(size_t b, size_t e, size_t min) const {
    const size_t n = e - b;
    std::vector<double> prefix(n + 1, 0.0), suffix(n + 1, 0.0);  // cost of [b, b+k) and [b+k, e)
    RunningL1 fwd, bwd;
    for (size_t k = 1; k <= n; ++k) {
      fwd.add(y[b + k - 1], w[b + k - 1]);
      prefix[k] = fwd.cost();
      bwd.add(y[e - k], w[e - k]);
      suffix[n - k] = bwd.cost();
    }
    double best = prefix[n];
    size_t at = 0;
    for (size_t k = min; k + min <= n; ++k)
      if (prefix[k] + suffix[k] < best) best = prefix[k] + suffix[k], at = b + k;
    return {(prefix[n] - best) / sigma, at};
  }
};

// A least-squares line y = a + b t over runs [begin, end).
struct Line {
  double a = 0, b = 0;
  double at(double t) const { return a + b * t; }
};
Line fit_line(std::span<const double> y, size_t begin, size_t end) {
  const double m = static_cast<double>(end - begin);
  double st = 0, sy = 0;
  for (size_t k = begin; k < end; ++k) st += static_cast<double>(k), sy += y[k];
  const double tm = st / m, ym = sy / m;
  double num = 0, den = 0;
  for (size_t k = begin; k < end; ++k) {
    const double dt = static_cast<double>(k) - tm;
    num += dt * (y[k] - ym);
    den += dt * dt;
  }
  const double b = den > 0 ? num / den : 0;
  return {ym - b * tm, b};
}

// Steps first..last (indices of the levels after each step) that form one drift.
struct Drift {
  size_t first = 0, last = 0;
  Step step;
};

double mad_sigma(std::vector<double> v) {
  if (v.empty()) return 0;
  const double m = median(v);
  for (double& x : v) x = std::fabs(x - m);
  return 1.4826 * median(v);
}

// The noise floor of a quantised series (half of its resolution), or 0 for a series that is not. A series
// is quantised when it takes at most half as many distinct values as it has runs (a coarse clock, counts):
// then most first differences are 0 and their MAD would call it noiseless. Its resolution is the median gap
// between its sorted distinct values; a series flickering between neighbouring values has a noise of half
// of it, so a one-quantum move stays within noise_factor sigmas and is no step.
double quantised_floor(std::span<const double> values) {
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  if (v.size() < 2 || 2 * v.size() > values.size()) return 0;
  std::vector<double> gaps;
  for (size_t i = 1; i < v.size(); ++i) gaps.push_back(v[i] - v[i - 1]);
  return median(gaps) / 2;
}

// The noise of a run's median as its own samples show it (the median of the runs' 95% CI half-widths over
// 1.96): runs cannot agree more closely than each run measures.
double within_run_floor(std::span<const double> ci_half) {
  std::vector<double> known;
  for (const double h : ci_half)
    if (std::isfinite(h) && h >= 0) known.push_back(h);
  return known.empty() ? 0 : median(known) / 1.96;
}

constexpr size_t kMinTail = 4, kMaxTail = 12;  // the newest runs tail_cut tests as a level of their own

// The lag-1 autocorrelation rho of runs around their levels, as the factor (1 + rho) / (1 - rho) by which it
// inflates the variance of a level's value. rho below 0.25 (within what white noise shows on ~20 runs) is
// taken as 0, and it is capped at 0.9.
struct Lag1 {
  double num = 0, den = 0;
  void add(std::span<const double> runs, double level) {
    for (size_t i = 0; i < runs.size(); ++i) {
      den += (runs[i] - level) * (runs[i] - level);
      if (i) num += (runs[i] - level) * (runs[i - 1] - level);
    }
  }
  double inflation() const {
    const double rho = den > 0 ? std::clamp(num / den, 0.0, 0.9) : 0;
    return rho < 0.25 ? 1 : (1 + rho) / (1 - rho);
  }
};

// The standard deviation of residuals around `fitted` fitted values, those beyond 2.5 MAD-sigmas clipped
// (winsorised): robust to a spike, yet nearly as efficient as the plain standard deviation, where the MAD
// alone is worth about a third of the runs.
double clipped_sd(const std::vector<double>& residuals, size_t fitted) {
  if (residuals.size() <= fitted) return 0;
  const double m = mad_sigma(residuals);
  double ss = 0;
  for (const double e : residuals) ss += std::pow(std::clamp(e, -2.5 * m, 2.5 * m), 2);
  return std::sqrt(ss / static_cast<double>(residuals.size() - fitted));
}

// The newest runs as a level of their own that the fit's penalty is too coarse to see (a few runs on a new
// level weigh little against gamma = penalty * ln(n)). Of the tails of k = kMinTail .. kMaxTail runs of the
// last level [b, n) that leave a reference of m >= 2k runs, the one whose two levels fit best (least L1 cost)
// is tested. Its shift, the Hodges-Lehmann estimate (the median of the k * m differences tail - reference;
// Hodges & Lehmann 1963), or the difference of weighted medians when the runs' weights differ more than 2x,
// must exceed `threshold` of the reference's median, two quanta, and z standard errors
// c * sd * sqrt(f / k + 1 / m): c = sqrt(pi / 3) for Hodges-Lehmann, sqrt(pi / 2) for medians; sd the clipped
// standard deviation of both parts around their medians; f the reference's Lag1 inflation. All runs of the
// tail but one must lie sd / 2 beyond the reference's median in the worse direction (a spike is no level).
// Returns the cut n - k, or 0.
size_t tail_cut(const Series& s, size_t b, double threshold, double resolution, double z, bool lower_is_better) {
  const size_t n = s.y.size();
  size_t k = 0;
  double least = INFINITY;
  for (size_t t = kMinTail; t <= kMaxTail && n >= b + 3 * t; ++t) {
    const double cost = s.level(b, n - t).first + s.level(n - t, n).first;
    if (cost < least) least = cost, k = t;
  }
  if (k == 0) return 0;
  const auto ref = s.y.subspan(b, n - k - b), tail = s.y.subspan(n - k, k);
  const double r = median(ref), t = median(tail);
  const auto [lo, hi] = std::minmax_element(s.w.begin() + static_cast<std::ptrdiff_t>(b), s.w.end());
  const bool alike = *hi <= 2 * *lo;
  double shift = s.level(n - k, n).second - s.level(b, n - k).second;
  if (alike) {
    std::vector<double> pairs;
    for (const double x : tail)
      for (const double c : ref) pairs.push_back(x - c);
    shift = median(pairs);
  }
  const double d = lower_is_better ? shift : -shift;
  if (!(d > threshold * std::fabs(r)) || !(d > 2 * resolution)) return 0;
  std::vector<double> residuals;
  for (const double v : ref) residuals.push_back(v - r);
  for (const double v : tail) residuals.push_back(v - t);
  const double sd = std::max(s.floor, clipped_sd(residuals, 2));
  const double floor = r + (lower_is_better ? 0.5 : -0.5) * sd;
  if (std::count_if(tail.begin(), tail.end(), [&](double v) { return lower_is_better ? v <= floor : v >= floor; }) > 1)
    return 0;
  Lag1 lag1;
  lag1.add(ref, r);
  const double c = alike ? std::sqrt(M_PI / 3) : std::sqrt(M_PI / 2);
  const double se = c * sd * std::sqrt(lag1.inflation() / static_cast<double>(k) + 1.0 / static_cast<double>(ref.size()));
  return d > z * se ? n - k : 0;
}

}  // namespace

std::vector<const Step*> StepAnalysis::regressions() const {
  std::vector<const Step*> out;
  for (const auto& s : steps)
    if (s.standing) out.push_back(&s);
  return out;
}

StepAnalysis detect_steps(std::span<const double> values, std::span<const double> ci_half, Better better,
                          const StepOptions& o) {
  if (!ci_half.empty() && ci_half.size() != values.size())
    throw std::invalid_argument("detect_steps: ci_half has " + std::to_string(ci_half.size()) + " values for " +
                                std::to_string(values.size()) + " runs");
  for (double v : values)
    if (!std::isfinite(v)) throw std::invalid_argument("detect_steps: a value is not finite");
  if (!(o.threshold >= 0 && std::isfinite(o.threshold)))
    throw std::invalid_argument("the threshold must be a finite number >= 0, got " + std::to_string(o.threshold));
  if (!(o.penalty > 0 && std::isfinite(o.penalty)) || !(o.noise_factor >= 0 && std::isfinite(o.noise_factor)))
    throw std::invalid_argument("detect_steps: penalty must be > 0 and noise_factor >= 0, both finite");
  const size_t n = values.size();
  const size_t min = std::max<size_t>(o.min_level, 1);
  StepAnalysis out;
  if (n == 0) return out;
  Series s{values, std::vector<double>(n, 1.0)};
  std::vector<double> diffs;
  for (size_t i = 1; i < n; ++i) diffs.push_back(values[i] - values[i - 1]);
  const double scale = std::fabs(median(values));
  const double resolution = quantised_floor(values);
  s.floor = std::max({1e-6 * scale, resolution, within_run_floor(ci_half), 1e-300});
  s.sigma = std::max(mad_sigma(diffs) / std::sqrt(2.0), s.floor);
  out.noise = s.sigma;
  if (!ci_half.empty()) {
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
      const double h = std::isfinite(ci_half[i]) ? ci_half[i] : s.sigma;
      s.w[i] = 1.0 / std::max(h, s.sigma / 4);
      sum += s.w[i];
    }
    for (double& w : s.w) w *= static_cast<double>(n) / sum;
  }
  out.enough_history = n >= 2 * min;

  // Seeded binary segmentation (Kovacs et al., Biometrika 2023): the best split of every seeded interval
  // (lengths n, n/2, n/4, ... down to 2 * min, each overlapping its neighbours by half), then greedily
  // the splits with the largest gain over the penalty whose interval holds no cut taken yet. Short
  // intervals find a level between two steps that a split of the whole series would not.
  std::vector<size_t> cuts{0, n};
  if (out.enough_history) {
    const double gamma = o.penalty * std::log(static_cast<double>(n));
    struct Candidate {
      double gain;
      size_t at, b, e;
    };
    std::vector<Candidate> found;
    for (size_t len = n; len >= 2 * min; len /= 2) {
      const size_t stride = std::max<size_t>(len / 2, 1);
      std::vector<size_t> starts;
      for (size_t b = 0; b + len <= n; b += stride) starts.push_back(b);
      if (starts.back() + len < n) starts.push_back(n - len);  // the last interval ends at n
      for (const size_t b : starts) {
        const auto [gain, at] = s.best_split(b, b + len, min);
        if (gain > gamma && at != 0) found.push_back({gain, at, b, b + len});
      }
    }
    std::sort(found.begin(), found.end(), [](const Candidate& x, const Candidate& y) { return x.gain > y.gain; });
    for (const auto& c : found) {
      bool clear = true;
      for (size_t cut : cuts)
        if ((cut > c.b && cut < c.e) || (cut + min > c.at && cut < c.at + min)) clear = false;
      if (clear) cuts.push_back(c.at);
    }
    std::sort(cuts.begin(), cuts.end());
    // Merge the neighbours whose merge costs least while that lowers the objective.
    while (cuts.size() > 2) {
      double best = gamma;
      size_t drop = 0;
      for (size_t i = 1; i + 1 < cuts.size(); ++i) {
        const double increase = s.level(cuts[i - 1], cuts[i + 1]).first - s.level(cuts[i - 1], cuts[i]).first -
                                s.level(cuts[i], cuts[i + 1]).first;
        if (increase < best) best = increase, drop = i;
      }
      if (drop == 0) break;
      cuts.erase(cuts.begin() + static_cast<std::ptrdiff_t>(drop));
    }
  }
  size_t tail = 0;  // the cut tail_cut added: the first run of the newest level, judged by its rule
  if (out.enough_history) {
    // A newest level the fit found too short for the levels' rule is tested with the level before it.
    const bool short_last = cuts.size() > 2 && n - cuts[cuts.size() - 2] < 3 * kMinTail;
    tail = tail_cut(s, cuts[cuts.size() - (short_last ? 3 : 2)], o.threshold, resolution, o.tail_z,
                    better == Better::Lower);
    if (tail && short_last) {
      // The tail rule confirms the newest level; it starts at the fit's cut unless the tail's own boundary
      // fits better (a tail is at most a third of the runs tested: a longer newest level is the fit's).
      const size_t fit_cut = cuts[cuts.size() - 2], from = cuts[cuts.size() - 3];
      const double fit_cost = s.level(from, fit_cut).first + s.level(fit_cut, n).first;
      const double tail_cost = s.level(from, tail).first + s.level(tail, n).first;
      if (fit_cost <= tail_cost) {
        tail = fit_cut;
      } else {
        cuts.erase(cuts.end() - 2);
        cuts.insert(cuts.end() - 1, tail);
      }
    } else if (tail) {
      cuts.insert(cuts.end() - 1, tail);
    }
  }

  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    Level l{cuts[i], cuts[i + 1], s.level(cuts[i], cuts[i + 1]).second, s.sigma};
    if (l.end - l.begin >= 4)
      l.noise = std::max(s.sigma, mad_sigma(std::vector<double>(values.begin() + static_cast<std::ptrdiff_t>(l.begin),
                                                                values.begin() + static_cast<std::ptrdiff_t>(l.end))));
    out.levels.push_back(l);
  }
  // Two levels differ beyond the noise when their values (medians: standard error 1.2533 sigma / sqrt(runs))
  // are noise_factor standard errors of their difference apart.
  Lag1 lag1;  // of the runs around their levels
  for (const Level& l : out.levels) lag1.add(values.subspan(l.begin, l.end - l.begin), l.value);
  const double f = lag1.inflation();
  const auto beyond = [&](const Level& a, const Level& b) {
    const double d = std::fabs(b.value - a.value);
    const double se = 1.2533 * std::sqrt(f * a.noise * a.noise / static_cast<double>(a.end - a.begin) +
                                         f * b.noise * b.noise / static_cast<double>(b.end - b.begin));
    return d > o.threshold * std::fabs(a.value) && d > o.noise_factor * se && d > 2 * resolution;
  };
  const auto is_worse = [&](double from, double to) { return better == Better::Lower ? to > from : to < from; };
  // A newest level of fewer than kMinTail runs stands only when each of its runs is worse than the level
  // before by the threshold: its (weighted) median of 2 or 3 runs may be one spike.
  const auto every_run_worse = [&](const Level& from, const Level& level) {
    if (level.end - level.begin >= kMinTail) return true;
    for (size_t i = level.begin; i < level.end; ++i)
      if (!is_worse(from.value, values[i]) || !(std::fabs(values[i] - from.value) > o.threshold * std::fabs(from.value)))
        return false;
    return true;
  };
  const Level& newest = out.levels.back();
  std::vector<Drift> drifts;
  // Consecutive steps in one direction over which a line fits as well as the levels: one drift.
  for (size_t i = 1; i < out.levels.size();) {
    size_t j = i;  // levels[i - 1 .. j] step in one direction
    const bool up = out.levels[i].value > out.levels[i - 1].value;
    while (j + 1 < out.levels.size() && (out.levels[j + 1].value > out.levels[j].value) == up) ++j;
    if (j > i) {
      const size_t b = out.levels[i - 1].begin, e = out.levels[j].end;
      const Line line = fit_line(values, b, e);
      std::vector<double> by_line, by_levels;
      for (size_t k = b, l = i - 1; k < e; ++k) {
        if (k >= out.levels[l].end) ++l;
        by_line.push_back(values[k] - line.at(static_cast<double>(k)));
        by_levels.push_back(values[k] - out.levels[l].value);
      }
      if (mad_sigma(by_line) <= mad_sigma(by_levels)) {
        Step st;
        st.drift = true;
        st.begin = b, st.end = e, st.at = out.levels[i].begin;
        st.before = line.at(static_cast<double>(b));
        st.after = line.at(static_cast<double>(e - 1));
        st.change = st.before != 0 ? st.after / st.before - 1 : NAN;
        st.worse = is_worse(st.before, st.after);
        // The line's change over m runs has a standard error of sigma * sqrt(12 (m - 1) / (m (m + 1))).
        const double m = static_cast<double>(e - b);
        const double d = std::fabs(st.after - st.before);
        st.significant = d > o.threshold * std::fabs(st.before) &&
                         d > o.noise_factor * s.sigma * std::sqrt(12 * (m - 1) / (m * (m + 1)));
        st.standing = st.worse && st.significant && is_worse(st.before, newest.value) &&
                      std::fabs(newest.value - st.before) > o.threshold * std::fabs(st.before);
        drifts.push_back({i, j, st});
      }
    }
    i = j + 1;
  }
  for (size_t i = 1; i < out.levels.size(); ++i) {
    const Level &a = out.levels[i - 1], &b = out.levels[i];
    Step st;
    st.at = b.begin;
    st.before = a.value;
    st.after = b.value;
    st.change = a.value != 0 ? b.value / a.value - 1 : NAN;
    st.worse = is_worse(a.value, b.value);
    st.significant = beyond(a, b) || (tail && b.begin == tail);
    st.standing = st.worse && st.significant && is_worse(a.value, newest.value) &&
                  (beyond(a, newest) || (tail && newest.begin == tail)) && every_run_worse(a, newest);
    const auto in = std::find_if(drifts.begin(), drifts.end(), [&](const Drift& d) { return i >= d.first && i <= d.last; });
    if (in == drifts.end()) out.steps.push_back(st);
    else if (i == in->first) out.steps.push_back(in->step);  // the drift stands for its steps
  }
  return out;
}

}  // namespace mlsb::reports
