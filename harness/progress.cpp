#include "harness/progress.hpp"

namespace mlsb {

Progress::Progress(std::FILE* out, bool tty, int total_cases) : out_(out), tty_(tty), total_(total_cases) {}

std::string Progress::eta() const {
  if (done_ == 0) return "--:--";
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int left = static_cast<int>(elapsed / done_ * (total_ - done_));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d:%02d", left / 60, left % 60);
  return buf;
}

void Progress::case_started(int index, const std::string& case_id) {
  index_ = index;
  case_id_ = case_id;
  last_line_ = std::chrono::steady_clock::now();
  tick(0);
}

void Progress::tick(int samples, int64_t done, int64_t total) {
  const auto now = std::chrono::steady_clock::now();
  if (!tty_ && now - last_line_ < std::chrono::seconds(30)) return;
  last_line_ = now;
  char work[64] = "";
  if (total > 0) std::snprintf(work, sizeof work, "  %lld/%lld", static_cast<long long>(done), static_cast<long long>(total));
  std::fprintf(out_, "%s[%d/%d] %s  samples %d%s  ETA %s%s", tty_ ? "\r\033[K" : "", index_ + 1, total_,
               case_id_.c_str(), samples, work, eta().c_str(), tty_ ? "" : "\n");
  std::fflush(out_);
}

void Progress::case_finished(const reports::CaseRecord& c) {
  ++done_;
  std::string primary;
  for (const auto& s : c.summaries)
    if (s.metric == c.primary_metric) {
      char buf[160];
      std::snprintf(buf, sizeof buf, "  %s median %.6g %s (n=%lld, ±%.1f%%)", s.metric.c_str(), s.stats.median,
                    s.unit.c_str(), static_cast<long long>(s.stats.n), s.stats.rel_stddev * 100);
      primary = buf;
    }
  std::fprintf(out_, "%s[%d/%d] %s  %s%s%s%s\n", tty_ ? "\r\033[K" : "", index_ + 1, total_, case_id_.c_str(),
               c.status.c_str(), primary.c_str(), c.reason.empty() ? "" : "  ", c.reason.c_str());
  std::fflush(out_);
}

}  // namespace mlsb
