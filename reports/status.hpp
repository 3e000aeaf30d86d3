#pragma once
// The statuses of a case and of a run, as the store, the reports and the runner use them. They are stored
// as text ("ok", "failed", ...): status_name() gives it and parse_*() reads it back.
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>

namespace mlsb::reports {

/// A case's status. Running: stored as it starts, until it ends. Ok: sampled and verified. Failed: setup,
/// a sample or verification threw (or another rank did). Skipped: the case does not apply here (no GPU,
/// no path for the backend). Timeout: it ran past its timeout. Interrupted: the user stopped the run.
enum class CaseStatus { Running, Ok, Failed, Skipped, Timeout, Interrupted };

/// A run's status: Running until it ends; then Ok, Failed (a case failed or timed out, or the ranks
/// broke) or Interrupted.
enum class RunStatus { Running, Ok, Failed, Interrupted };

/// The stored text: "running", "ok", "failed", "skipped", "timeout", "interrupted".
const std::string& status_name(CaseStatus s);
const std::string& status_name(RunStatus s);

/// The status a stored text names; nullopt for any other text.
std::optional<CaseStatus> parse_case_status(std::string_view text);
std::optional<RunStatus> parse_run_status(std::string_view text);

/// A finished case that counts as a failure of the run (Failed or Timeout).
inline bool is_failure(CaseStatus s) { return s == CaseStatus::Failed || s == CaseStatus::Timeout; }

/// Writes status_name(s) (for test output).
std::ostream& operator<<(std::ostream& out, CaseStatus s);
std::ostream& operator<<(std::ostream& out, RunStatus s);

}  // namespace mlsb::reports
