#include "harness/progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>

#include "util/text.hpp"

namespace mlsb {
namespace {

// A plain-lines progress report (stderr not a terminal) while a case runs: at most this often.
constexpr auto kPlainLineEvery = std::chrono::seconds(10);

double seconds_of(Progress::Clock::duration d) { return std::chrono::duration<double>(d).count(); }

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// "m:ss", "h:mm:ss", or "--:--" for an unknown (negative) time.
std::string clock_text(double s) {
  if (s < 0 || !std::isfinite(s)) return "--:--";
  const long t = std::lround(s);
  char buf[32];
  if (t >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
  else std::snprintf(buf, sizeof buf, "%ld:%02ld", t / 60, t % 60);
  return buf;
}

}  // namespace

Progress::Progress(std::FILE* out, bool tty, std::vector<PlannedCase> cases, int columns,
                   std::function<Clock::time_point()> clock)
    : out_(out),
      tty_(tty),
      cases_(std::move(cases)),
      columns_(columns),
      clock_(std::move(clock)) {
  case_start_ = sample_start_ = last_line_ = clock_();
}

int Progress::columns() const {
  if (columns_ > 0) return columns_;
  winsize ws{};
  if (ioctl(fileno(out_), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

double Progress::estimate(int index) const {
  const PlannedCase& c = cases_[static_cast<size_t>(index)];
  if (c.last_seconds >= 0) return c.last_seconds;
  if (c.expected_seconds >= 0)
    return c.expected_seconds * (finished_expected_ > 0 ? finished_actual_ / finished_expected_ : 1.0);
  if (auto it = finished_.find(c.workload); it != finished_.end()) return median_of(it->second);
  return all_finished_.empty() ? -1 : median_of(all_finished_);
}

double Progress::seconds_left() const {
  const int total = static_cast<int>(cases_.size());
  if (index_ >= total) return 0;
  const auto now = clock_();
  const double elapsed = seconds_of(now - case_start_);
  double current = estimate(index_);
  if (total_units_ > 0 && done_units_ > 0) {  // the sample in flight says how far it is
    const double fraction = std::min(1.0, static_cast<double>(done_units_) / static_cast<double>(total_units_));
    current = std::max(current, seconds_of(sample_start_ - case_start_) + seconds_of(now - sample_start_) / fraction);
  }
  if (current < 0) return -1;
  current = std::max(current, elapsed);
  return current - elapsed + seconds_after(index_, current);
}

double Progress::seconds_after(int index, double unknown) const {
  double left = 0;
  for (size_t j = static_cast<size_t>(index) + 1; j < cases_.size(); ++j) {
    const double e = estimate(static_cast<int>(j));
    left += e < 0 ? unknown : e;
  }
  return left;
}

void Progress::case_started(int index, const std::string& case_id) {
  index_ = index;
  case_id_ = case_id;
  case_start_ = sample_start_ = last_line_ = clock_();
  samples_ = 0;
  done_units_ = total_units_ = 0;
  tick(0);
}

void Progress::tick(int samples, int64_t done, int64_t total) {
  const auto now = clock_();
  if (samples != samples_) sample_start_ = now;  // a new sample: its units count from here
  samples_ = samples;
  done_units_ = done;
  total_units_ = total;
  if (!tty_ && now - last_line_ < kPlainLineEvery) return;
  last_line_ = now;
  std::string status = "  sample " + std::to_string(samples + 1);
  if (total > 0) status += "  " + std::to_string(done) + "/" + std::to_string(total);
  draw(status + "  ETA " + clock_text(seconds_left()), !tty_);
}

void Progress::draw(const std::string& status, bool end_line) {
  const std::string head = "[" + std::to_string(index_ + 1) + "/" + std::to_string(cases_.size()) + "] ";
  std::string line = head + case_id_ + status;
  if (tty_) {  // one row: the case id gives way so that the status (and the ETA) stays visible
    const size_t width = static_cast<size_t>(std::max(columns() - 1, 1));
    if (line.size() > width) {
      const size_t room = width > head.size() + status.size() ? width - head.size() - status.size() : 0;
      line = utf8_truncate(head + utf8_truncate(case_id_, room) + status, width);
    }
  }
  std::fprintf(out_, "%s%s%s", tty_ ? "\r\033[K" : "", line.c_str(), end_line ? "\n" : "");
  std::fflush(out_);
}

void Progress::case_finished(const reports::CaseRecord& c) {
  const double took = seconds_of(clock_() - case_start_);
  const PlannedCase& planned = cases_.at(static_cast<size_t>(index_));
  finished_[planned.workload].push_back(took);
  all_finished_.push_back(took);
  if (planned.expected_seconds > 0 && c.status == reports::CaseStatus::Ok)  // a skipped or failed case says nothing of the speed
    finished_expected_ += planned.expected_seconds, finished_actual_ += took;
  std::string primary;
  for (const auto& s : c.summaries)
    if (s.metric == c.primary_metric) {
      char buf[160];
      if (s.stats.n >= 2)
        std::snprintf(buf, sizeof buf, "  %s median %.6g %s (n=%lld, ±%.1f%%)", s.metric.c_str(), s.stats.median,
                      s.unit.c_str(), static_cast<long long>(s.stats.n), s.stats.rel_stddev * 100);
      else  // one sample has no spread to show
        std::snprintf(buf, sizeof buf, "  %s %.6g %s (n=1)", s.metric.c_str(), s.stats.median, s.unit.c_str());
      primary = buf;
    }
  const int left = static_cast<int>(cases_.size()) - index_ - 1;
  // Every case left has an estimate now: this one's time is known.
  const std::string eta = left > 0 ? "  ETA " + clock_text(seconds_after(index_, 0)) : "";
  std::fprintf(out_, "%s[%d/%zu] %s  %s%s%s%s%s\n", tty_ ? "\r\033[K" : "", index_ + 1, cases_.size(),
               case_id_.c_str(), reports::status_name(c.status).c_str(), primary.c_str(), c.reason.empty() ? "" : "  ", c.reason.c_str(),
               eta.c_str());
  std::fflush(out_);
}

}  // namespace mlsb
