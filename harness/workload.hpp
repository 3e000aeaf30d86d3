#pragma once
// The workload contract: a workload declares axes and metrics; the runner drives setup, samples, verify.
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/metric.hpp"
#include "harness/value.hpp"

namespace mlsb {
namespace comm { class Communicator; }

/// One axis of a workload's parameter space (nvbench-style). `choices`, when not empty, lists the
/// only allowed values of a String axis; `min`/`max`, when set, bound an Int or Float axis (inclusive).
/// Defaults are the values run when the CLI does not override. Values are validated when the plan is
/// built, so a bad value is an input error (exit 2), never a failed or skipped case.
struct Axis {
  std::string name;
  AxisType type = AxisType::Int;
  std::vector<Value> defaults;
  std::string help;
  std::vector<std::string> choices;
  std::optional<double> min{}, max{};
  /// The value is a file or folder path (or one of `choices`, e.g. "auto", which then are keywords
  /// rather than the only values). The plan makes such values independent of the checkout: a path
  /// under the project root becomes "${source_dir}/...", one under the shared folder "${shared_dir}/...";
  /// a path that does not exist is an input error. Workloads call expand_placeholders() on the value.
  bool path = false;
  /// The axis defines the case's input data (its sizes, distribution, dtype, shapes, file or trace) rather
  /// than the method run on it: the case seed derives from the run seed and the data axes only
  /// (case_seed in harness/runner.hpp), so cases that differ in a method axis (a codec, a cache policy,
  /// a drop policy) see identical inputs. Set with data_axis() (harness/axes.hpp).
  bool data = false;
  /// The axis matters only when axis `applies_if` takes one of `applies_if_values` ("" = always): in the
  /// other cases the plan sets it to its first default, makes one case of those that then coincide and
  /// leaves it out of the case's name. Set with applies_when() (harness/axes.hpp).
  std::string applies_if{};
  std::vector<std::string> applies_if_values{};
  /// Whether the axis matters in a case of these params (see applies_if).
  bool applies(const Params& p) const;
};

/// splitmix64's output function (Steele, Lea & Flood, OOPSLA 2014): decorrelates nearby seeds.
constexpr uint64_t splitmix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// Runner settings a workload may ask for by default (the CLI and suites override them).
struct RunnerDefaults {
  int warmup = 1;            ///< untimed samples before measuring
  int min_samples = 5;       ///< at least this many measured samples
  int max_samples = 100;     ///< at most this many
  double min_time_s = 0.5;   ///< keep sampling until this much measured time has passed
  double max_noise = 0.02;   ///< stop once the primary metric's relative stddev is below this
  double max_time_s = 30.0;  ///< stop sampling after this long regardless (the stopping rule's limit)
  double timeout_s = 300.0;  ///< a case still running after this is failed as timed out
  /// A batch: when the last warm-up call of a one-rank case took less than this, each measured sample
  /// repeats the workload's sample() ceil(min_sample_s / t) times (at most kMaxBatch) and records the mean of
  /// each metric over them (Google Benchmark's iterations, nvbench's batches), so that a sample of a fast
  /// case lasts long enough to rise above the clock's and the scheduler's jitter. 0 = never batch.
  double min_sample_s = 0.01;
};

/// The most calls one batched sample repeats (RunnerDefaults::min_sample_s).
constexpr int kMaxBatch = 1000000;

struct WorkloadInfo {
  std::string name;
  std::string description;
  std::vector<Axis> axes;
  std::vector<Metric> metrics;
  std::string primary_metric;  ///< the metric the stopping rule and regression gates use
  RunnerDefaults runner;
  /// Device backends the workload runs on ("cpu", "cuda"); the runner skips a case whose requested
  /// backend is not listed, and resolves "auto" to "cuda" when listed and a GPU is present, else "cpu".
  std::vector<std::string> backends = {"cpu"};
  /// Whether all of a sample's work runs in this process, so that `run --measure instructions` can count
  /// it; false for a workload whose work runs in other processes (servers), which callgrind does not see.
  bool countable = true;
  /// Command lines (after `mlsysbench`) that show typical uses, each runnable as it stands from the
  /// project root: printed by `list WORKLOAD` and `run WORKLOAD --help`.
  std::vector<std::string> examples;

  const Axis* find_axis(std::string_view axis) const;
  const Metric* find_metric(std::string_view metric) const;
};

/// Thrown by State::skip: the case is invalid or its backend is absent; recorded as skipped.
struct SkipCase : std::runtime_error { using std::runtime_error::runtime_error; };
/// Thrown by State::fail: verification failed; recorded as failed, its numbers are not trusted.
struct FailCase : std::runtime_error { using std::runtime_error::runtime_error; };
/// Thrown by State::skip_unless_every_rank on a rank whose case another rank stopped: this rank stops at the
/// same point, and the case is recorded with the stopping rank's reason.
struct StoppedByPeer {};

/// One case = one point of the cartesian product of axes. Owned by the runner, handed to the workload.
class State {
 public:
  State(const WorkloadInfo& info, Params params, uint64_t case_seed, std::filesystem::path work_dir);

  const Params& params() const { return params_; }
  /// Typed getters; throw std::invalid_argument when the axis is absent or of another type.
  int64_t get_int(std::string_view axis) const;
  double get_float(std::string_view axis) const;  ///< an Int axis is widened
  std::string get_string(std::string_view axis) const;

  /// Deterministic generator for this case: the same run seed and params give the same stream.
  std::mt19937_64 rng(uint64_t stream) const;
  uint64_t seed() const { return seed_; }

  /// The resolved device backend of this case: "cpu" or "cuda".
  const std::string& backend() const { return backend_; }
  /// The case's communicator: a one-rank local one unless the run was started under MPI (--comm).
  /// Every rank runs the same case; only rank 0's recorded samples and items are stored, so workloads
  /// record values already agreed across ranks (a time's max over ranks, say).
  comm::Communicator& comm() const;

  /// A scratch folder for this case (created by the runner, removed after the case).
  const std::filesystem::path& work_dir() const { return work_dir_; }

  /// Records one value of `metric` for the current sample. Throws std::invalid_argument for a metric
  /// the workload did not declare. Non-finite values fail the case (a NaN never reaches a report).
  void record(std::string_view metric, double value);
  /// Stores per-item detail (a task outcome, a loss point) under `key`.
  void add_item(std::string key, nlohmann::json item);
  /// Notes something a user should see although the case is ok (bad records skipped, say): kept in
  /// the case's reason and printed on the progress line. Repeated messages are kept once.
  void warn(std::string message);
  const std::vector<std::string>& warnings() const { return warnings_; }
  /// Records what a reader should know of how the case ran, not a problem (the plan a planner chose): kept in
  /// the case's reason as "note: ..." and printed on the progress line. Repeated messages are kept once.
  void note(std::string message);
  const std::vector<std::string>& notes() const { return notes_; }
  /// Progress within the current sample (e.g. tasks done of total), shown on the progress line.
  void progress(int64_t done, int64_t total) {
    progress_done_ = done;
    progress_total_ = total;
  }
  std::pair<int64_t, int64_t> progress() const { return {progress_done_.load(), progress_total_.load()}; }

  [[noreturn]] void skip(std::string reason) const;
  [[noreturn]] void fail(std::string reason) const;
  /// For setup that can fail on some ranks before a collective (a GPU that cannot hold the case, say): a
  /// collective over comm() that every rank calls with its own failure ("" when it succeeded). Returns when no
  /// rank failed; otherwise skips the case with `failure` on a rank that failed and throws StoppedByPeer on
  /// the others, so that none waits in the next collective for a rank that has left (the case is recorded as
  /// skipped, "rank R: FAILURE").
  void skip_unless_every_rank(const std::string& failure) const;

  /// True once the runner wants the case to stop (its timeout passed, or the user pressed Ctrl-C).
  /// Long samples should check it between units of work and return early.
  bool cancelled() const { return cancel_ && cancel_->load(std::memory_order_relaxed); }

  // Runner side.
  int sample_index() const { return sample_index_; }  ///< -1 during setup, < 0 in warm-up
  /// Starts sample `index` made of `calls` calls of the workload's sample() (a batch when > 1: see
  /// RunnerDefaults::min_sample_s). In a batch, record() keeps each metric's values until end_sample() stores
  /// their mean, and add_item() keeps the first call's items only.
  void begin_sample(int index, bool warmup, int calls = 1);
  /// Before each call of a batch after the first.
  void next_call() { ++call_; }
  /// Ends a sample begun with calls > 1: stores the mean of each metric recorded in its calls.
  void end_sample();
  /// Under a counting instrument (`run --measure instructions`): record() still checks each metric but stores
  /// only those named here (the instrument's); the workload's own, wall-clock under valgrind, are dropped.
  void keep_only(std::vector<std::string> metrics) { kept_ = std::move(metrics); }
  /// Whether the runner counts the samples (keep_only): work that only serves wall-clock metrics (a peak
  /// measurement) can be left out, and its metrics are dropped anyway.
  bool counting() const { return !kept_.empty(); }
  void set_cancel_flag(const std::atomic<bool>* flag) { cancel_ = flag; }
  void set_backend(std::string backend) { backend_ = std::move(backend); }
  void set_comm(comm::Communicator* comm) { comm_ = comm; }
  const std::map<std::string, std::vector<double>>& samples() const { return samples_; }
  std::vector<std::pair<std::string, nlohmann::json>>& items() { return items_; }
  /// A copy of the items from the `from`-th on; safe while the workload adds items on another thread
  /// (the runner commits a long case's items as they come).
  std::vector<std::pair<std::string, nlohmann::json>> items_since(size_t from) const;

 private:
  std::vector<std::string> kept_;  // keep_only: empty = every metric
  const Value& get(std::string_view axis) const;
  const WorkloadInfo& info_;
  Params params_;
  uint64_t seed_;
  std::filesystem::path work_dir_;
  int sample_index_ = -1;
  bool warmup_ = false;
  int calls_ = 1, call_ = 0;                                 // a batch's calls, and the current one
  std::map<std::string, std::pair<double, int>> batched_;    // metric -> mean and count over a batch's calls
  const std::atomic<bool>* cancel_ = nullptr;
  std::string backend_ = "cpu";
  comm::Communicator* comm_ = nullptr;
  std::map<std::string, std::vector<double>> samples_;
  std::vector<std::pair<std::string, nlohmann::json>> items_;
  mutable std::mutex items_mutex_;  // add_item against items_since
  std::vector<std::string> warnings_, notes_;
  std::atomic<int64_t> progress_done_{0}, progress_total_{0};
};

/// A benchmark workload. setup/teardown are untimed; sample records one measured sample of every
/// metric it measures; verify checks correctness after sampling and calls State::fail on a wrong answer.
class Workload {
 public:
  virtual ~Workload() = default;
  virtual WorkloadInfo info() const = 0;
  /// Checks a combination of axis values that each axis alone allows but the workload cannot run (an LLM
  /// agent without a model): throws std::invalid_argument naming the axes. The plan calls it for every
  /// case, so such a mistake is an input error (exit 2) found before anything runs.
  virtual void check(const Params&) const {}
  /// What the case will do beyond its axes, printed under it by `run --dry-run` (the rank groups of a
  /// parallel mapping, say); "" prints nothing. May not communicate; may throw std::invalid_argument, which
  /// dry-run prints as the case's problem.
  virtual std::string describe(const Params&) const { return ""; }
  virtual void setup(State&) {}
  virtual void sample(State&) = 0;
  virtual void verify(State&) {}
  virtual void teardown(State&) {}
  /// What a case that ran out of host memory needed (its input's size, the axes to lower), appended to
  /// the runner's "out of memory" reason when a step throws std::bad_alloc; "" adds nothing.
  virtual std::string memory_hint(const State&) const { return ""; }
};

}  // namespace mlsb
