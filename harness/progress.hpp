#pragma once
// Progress output for `run`: a redrawn status line on a terminal, plain lines otherwise.
#include <chrono>
#include <cstdio>
#include <string>

#include "reports/model.hpp"

namespace mlsb {

class Progress {
 public:
  /// Writes to `out` (normally stderr); `tty` selects the redrawn line (case i/N, case, samples, ETA).
  Progress(std::FILE* out, bool tty, int total_cases);
  void case_started(int index, const std::string& case_id);
  /// Redraws the status line on a tty; elsewhere prints a line every 30 s so long cases show life.
  /// `samples` measured so far in the current case; `done` of `total` units in the current sample.
  void tick(int samples, int64_t done = 0, int64_t total = 0);
  void case_finished(const reports::CaseRecord& c);

 private:
  std::string eta() const;
  std::FILE* out_;
  bool tty_;
  int total_, index_ = 0, done_ = 0;
  std::string case_id_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_line_ = start_;
};

}  // namespace mlsb
