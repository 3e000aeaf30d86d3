#include "harness/runner/rank_vote.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "util/text.hpp"

namespace mlsb::runner {
namespace {

using reports::CaseStatus;

// Severity of a rank's case status for the vote: the worst wins. Consequences rank below their likely
// cause: a rank stopped by another, a collective that failed or timed out waiting for a rank that
// failed (or hung: an abandoned case outranks a failure).
uint8_t severity(const reports::CaseRecord& rec, const RankCase& rank) {
  if (rec.status == CaseStatus::Ok) return 0;
  if (rank.peer_stopped) return 1;
  if (rec.status == CaseStatus::Skipped) return 2;
  if (rec.status == CaseStatus::Failed && rank.comm_failure) return 3;
  if (rec.status == CaseStatus::Timeout && rec.reason.find("abandoned") == std::string::npos) return 4;
  if (rec.status == CaseStatus::Failed) return 5;
  if (rec.status == CaseStatus::Timeout) return 6;
  return 7;  // interrupted
}

// One rank's vote, a fixed-size record so that one allgather carries every rank's:
// [severity][interrupted][status][reason, NUL-padded].
constexpr size_t kVoteBytes = 1024, kReasonAt = 3;
struct Vote {
  uint8_t severity = 0;
  uint8_t interrupted = 0;
  CaseStatus status = CaseStatus::Ok;
  std::string reason;
};

std::vector<uint8_t> encode(const Vote& v) {
  std::vector<uint8_t> buf(kVoteBytes, 0);
  buf[0] = v.severity;
  buf[1] = v.interrupted;
  buf[2] = static_cast<uint8_t>(v.status);
  const std::string reason = utf8_truncate(v.reason, kVoteBytes - kReasonAt - 1);
  std::memcpy(&buf[kReasonAt], reason.data(), reason.size());
  return buf;
}

Vote decode(const uint8_t* buf) {
  Vote v;
  v.severity = buf[0];
  v.interrupted = buf[1];
  v.status = static_cast<CaseStatus>(std::min<uint8_t>(buf[2], static_cast<uint8_t>(CaseStatus::Interrupted)));
  const auto* reason = reinterpret_cast<const char*>(buf + kReasonAt);
  v.reason = std::string(reason, strnlen(reason, kVoteBytes - kReasonAt));
  return v;
}

}  // namespace

VoteOutcome vote_on_case(reports::CaseRecord& rec, const RankCase& rank, const std::atomic<bool>& cancel,
                         comm::Communicator& control, double case_timeout_s) {
  VoteOutcome out;
  const Vote mine{severity(rec, rank), static_cast<uint8_t>(cancel.load() ? 1 : 0), rec.status, rec.reason};
  const int n = control.size();
  std::vector<uint8_t> all(kVoteBytes * static_cast<size_t>(n));
  try {
    // After a signal this rank makes no MPI call: an abandoned case may still have requests in flight,
    // and the job is about to end anyway.
    if (n > 1 && cancel.load()) throw comm::CommError("interrupted");
    control.set_timeout(case_timeout_s > 0 ? case_timeout_s + 60 : 1e9);  // the slowest rank may still be in its case
    const std::vector<uint8_t> buf = encode(mine);
    control.allgather(buf.data(), all.data(), kVoteBytes, comm::ElemType::U8);
  } catch (const std::exception& e) {
    out.broken = true;
    out.interrupted = cancel.load();
    if (out.interrupted) {  // a signal cut the vote short: the case did not fail
      rec.status = CaseStatus::Interrupted;
      rec.reason = "interrupted by a signal";
    } else if (rec.status != CaseStatus::Interrupted) {
      rec.status = CaseStatus::Failed;
      rec.reason = "the ranks could not agree on the case's result: " + std::string(e.what());
    }
    rec.samples.clear();
    rec.summaries.clear();
    return out;
  }
  int worst = 0;
  std::vector<Vote> votes;
  for (int r = 0; r < n; ++r) {
    votes.push_back(decode(&all[kVoteBytes * static_cast<size_t>(r)]));
    if (votes[r].severity > votes[worst].severity) worst = r;
    if (votes[r].interrupted || votes[r].status == CaseStatus::Interrupted) out.interrupted = true;
  }
  const Vote& w = votes[worst];
  if (w.severity > mine.severity) {  // another rank's status replaces this one's
    rec.status = w.status;
    rec.reason = (worst != 0 ? "rank " + std::to_string(worst) + ": " : std::string()) + w.reason;
    rec.samples.clear();
    rec.summaries.clear();
  }
  return out;
}

}  // namespace mlsb::runner
