#include "reports/status.hpp"

#include <array>
#include <ostream>

namespace mlsb::reports {
namespace {

const std::array<std::string, 6> kCaseNames{"running", "ok", "failed", "skipped", "timeout", "interrupted"};
const std::array<std::string, 4> kRunNames{"running", "ok", "failed", "interrupted"};

template <typename E, size_t N>
std::optional<E> parse(const std::array<std::string, N>& names, std::string_view text) {
  for (size_t i = 0; i < N; ++i)
    if (names[i] == text) return static_cast<E>(i);
  return std::nullopt;
}

}  // namespace

const std::string& status_name(CaseStatus s) { return kCaseNames.at(static_cast<size_t>(s)); }
const std::string& status_name(RunStatus s) { return kRunNames.at(static_cast<size_t>(s)); }

std::optional<CaseStatus> parse_case_status(std::string_view text) { return parse<CaseStatus>(kCaseNames, text); }
std::optional<RunStatus> parse_run_status(std::string_view text) { return parse<RunStatus>(kRunNames, text); }

std::ostream& operator<<(std::ostream& out, CaseStatus s) { return out << status_name(s); }
std::ostream& operator<<(std::ostream& out, RunStatus s) { return out << status_name(s); }

}  // namespace mlsb::reports
