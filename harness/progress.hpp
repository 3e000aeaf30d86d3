#pragma once
// Progress output for `run`: a redrawn status line on a terminal, plain lines otherwise.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "reports/model.hpp"

namespace mlsb {

/// What the ETA knows of a planned case before it runs.
struct PlannedCase {
  std::string workload;
  double last_seconds = -1;      ///< how long it took the last time the store saw it (-1: never)
  double expected_seconds = -1;  ///< its suite's expected time (SuiteEntry::expected_s; -1: none)
};

class Progress {
 public:
  using Clock = std::chrono::steady_clock;

  /// Writes to `out` (normally stderr). `cases`: the planned cases in plan order. `tty`: a status line
  /// redrawn in place and cut to the terminal's width (`columns`, or asked of the terminal at each redraw
  /// when 0, so a resize takes effect at the next one); otherwise plain lines, at most one every 10 s
  /// while a case runs and one when it ends. `clock` is for tests.
  Progress(std::FILE* out, bool tty, std::vector<PlannedCase> cases, int columns = 0,
           std::function<Clock::time_point()> clock = Clock::now);
  void case_started(int index, const std::string& case_id);
  /// `samples` measured so far in the current case; `done` of `total` units (tasks, steps) in the
  /// sample in flight (0 of 0: unknown).
  void tick(int samples, int64_t done = 0, int64_t total = 0);
  /// Prints the case's outcome and the ETA of the rest of the run.
  void case_finished(const reports::CaseRecord& c);

  /// Seconds left in the run, estimated; negative when nothing is known yet. A case not yet run takes
  /// its time in the store's last run of it (as ctest schedules by its last test times), else its suite's
  /// expected time scaled by how this run's ok cases compare with theirs (sum of times over sum of
  /// expected times; 1 before any), else the median time of this run's finished cases of its workload,
  /// else of all finished cases. The case in flight takes the larger of that and what its sample's own
  /// progress says: the time before this sample plus the sample's elapsed time over its done fraction
  /// (exact for a one-sample case). With nothing known, every case is taken to be as long as the one in
  /// flight.
  double seconds_left() const;

 private:
  double estimate(int index) const;  ///< seconds planned case `index` takes; negative when unknown
  /// Seconds the cases after `index` take, an unknown one counted as `unknown`.
  double seconds_after(int index, double unknown) const;
  void draw(const std::string& status, bool end_line);
  int columns() const;

  std::FILE* out_;
  bool tty_;
  std::vector<PlannedCase> cases_;
  int columns_;
  std::function<Clock::time_point()> clock_;
  int index_ = 0;
  std::string case_id_;
  Clock::time_point case_start_, sample_start_, last_line_;
  int samples_ = 0;
  int64_t done_units_ = 0, total_units_ = 0;
  std::map<std::string, std::vector<double>> finished_;  ///< workload -> case durations (s)
  std::vector<double> all_finished_;
  double finished_expected_ = 0, finished_actual_ = 0;  ///< sums over finished cases with an expected time
};

}  // namespace mlsb
