#pragma once
// The counted-instructions instrument (`run --measure instructions`): the run re-executes itself under
// valgrind's callgrind with instrumentation off and fixed simulated caches, and the runner wraps every
// measured sample in callgrind's client requests (start instrumentation, zero, sample, dump, stop), then
// reads the dump's totals: every thread's work in the sample, and nothing else. Counts repeat to the
// instruction whatever else the machine runs, which wall time on a shared VM does not (12-29% between
// processes). The only file that includes valgrind/callgrind.h (its macros do nothing natively).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/metric.hpp"

namespace mlsb {

/// The environment variable the re-executed run finds its dump folder in (set by callgrind_command).
inline constexpr const char* kCallgrindDirEnv = "MLSB_CALLGRIND_DIR";
/// A documented test knob: a fraction (e.g. 0.10) of the case's counted instructions that the runner adds
/// as real work (an integer hash loop, no sleep) inside every measured sample, so that a gate's power
/// against "10% more work" can be measured (scripts/aa-check --measure instructions).
inline constexpr const char* kExtraWorkEnv = "MLSB_TEST_EXTRA_WORK";

/// The simulated caches, fixed so that counts never depend on the host's: I1 and D1 32 KiB 8-way, LL 8 MiB
/// 16-way, 64-byte lines (callgrind's --I1/--D1/--LL). Recorded in the run's environment.
struct CacheConfig {
  const char* i1 = "32768,8,64";
  const char* d1 = "32768,8,64";
  const char* ll = "8388608,16,64";
};

/// One sample's totals over every thread, in callgrind's events with --cache-sim=yes.
struct CallgrindTotals {
  uint64_t ir = 0, dr = 0, dw = 0;        ///< instructions, data reads, data writes
  uint64_t i1mr = 0, d1mr = 0, d1mw = 0;  ///< L1 misses: instruction fetch, data read, data write
  uint64_t ilmr = 0, dlmr = 0, dlmw = 0;  ///< last-level misses: the same three
};

/// The instrument's metrics: `instructions` (count, primary, deterministic), `est_cycles` (cycles,
/// Ir + 10 L1 misses + 100 LL misses: KCachegrind's cycle estimation), `l1_miss_rate` and `ll_miss_rate`
/// (misses per access, instruction fetches and data accesses together). The cache metrics follow where the
/// heap landed (0.1-0.3% between processes) and are not declared deterministic.
const std::vector<Metric>& counted_metrics();
/// The metrics of one sample, in counted_metrics' order.
std::vector<double> counted_values(const CallgrindTotals& t);

/// Parses a callgrind dump: its `events:` line and its `totals:` line (else `summary:`). Throws
/// std::runtime_error naming `file` when either is missing, an event the simulation needs is absent, or
/// a number is malformed.
CallgrindTotals parse_callgrind_dump(std::string_view text, const std::string& file);

/// Whether this process runs under callgrind as a counted run (the re-executed one).
bool counting();

/// The command line that re-executes `self_args` (argv[1..]) under callgrind: valgrind, its options
/// (--tool=callgrind --instr-atstart=no --cache-sim=yes, the caches, the dump file in `dump_dir`, its log
/// in `dump_dir`/valgrind.log), then `self` and `self_args`.
std::vector<std::string> callgrind_command(const std::filesystem::path& valgrind, const std::filesystem::path& self,
                                           const std::vector<std::string>& self_args,
                                           const std::filesystem::path& dump_dir);

/// The valgrind on PATH, checked to be 3.15 or newer (callgrind's client requests and --instr-atstart).
/// Throws std::invalid_argument naming the Debian package when it is missing or too old.
std::filesystem::path find_valgrind();

/// Around one measured sample in a counted run: begin() switches instrumentation on and zeroes the
/// counters; end() dumps them, switches instrumentation off, reads and removes the dump. Natively (not
/// counting) both do nothing and end() gives nullopt. The extra work of kExtraWorkEnv runs inside.
class CountedSample {
 public:
  explicit CountedSample(double extra_work_instructions = 0) : extra_(extra_work_instructions) {}
  void begin();
  std::optional<CallgrindTotals> end();

 private:
  double extra_;
};

/// The extra work kExtraWorkEnv asks for, as instructions for a case whose sample counts `instructions`
/// (0 without the variable). Throws std::invalid_argument naming the variable for a value that is not a
/// number in [0, 10].
double extra_work_for(double instructions);

}  // namespace mlsb
