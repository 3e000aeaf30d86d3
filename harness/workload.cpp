#include "harness/workload.hpp"

#include <algorithm>
#include <cmath>

#include "backends/comm/local_communicator.hpp"

namespace mlsb {

const Axis* WorkloadInfo::find_axis(std::string_view axis) const {
  for (const auto& a : axes)
    if (a.name == axis) return &a;
  return nullptr;
}

const Metric* WorkloadInfo::find_metric(std::string_view metric) const {
  for (const auto& m : metrics)
    if (m.name == metric) return &m;
  return nullptr;
}

State::State(const WorkloadInfo& info, Params params, uint64_t case_seed, std::filesystem::path work_dir)
    : info_(info), params_(std::move(params)), seed_(case_seed), work_dir_(std::move(work_dir)) {}

const Value& State::get(std::string_view axis) const {
  auto it = params_.find(std::string(axis));
  if (it == params_.end())
    throw std::invalid_argument("workload '" + info_.name + "' has no axis '" + std::string(axis) + "'");
  return it->second;
}

int64_t State::get_int(std::string_view axis) const {
  const Value& v = get(axis);
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  throw std::invalid_argument("axis '" + std::string(axis) + "' is not an integer");
}

double State::get_float(std::string_view axis) const {
  const Value& v = get(axis);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  throw std::invalid_argument("axis '" + std::string(axis) + "' is not a number");
}

std::string State::get_string(std::string_view axis) const {
  const Value& v = get(axis);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  throw std::invalid_argument("axis '" + std::string(axis) + "' is not a string");
}

std::mt19937_64 State::rng(uint64_t stream) const {
  return std::mt19937_64(splitmix64(seed_ + 0x9e3779b97f4a7c15ULL * (stream + 1)));
}

bool Axis::applies(const Params& p) const {
  if (applies_if.empty()) return true;
  const auto it = p.find(applies_if);
  return it == p.end() || std::find(applies_if_values.begin(), applies_if_values.end(), to_string(it->second)) !=
                              applies_if_values.end();
}

comm::Communicator& State::comm() const {
  if (comm_) return *comm_;
  // Outside the runner (a test driving a workload directly): one rank, shared by the process.
  static const std::unique_ptr<comm::Communicator> local = comm::make_local_communicator();
  return *local;
}

void State::record(std::string_view metric, double value) {
  if (!info_.find_metric(metric))
    throw std::invalid_argument("workload '" + info_.name + "' records undeclared metric '" +
                                std::string(metric) + "'");
  if (warmup_) return;
  if (!kept_.empty() && std::find(kept_.begin(), kept_.end(), metric) == kept_.end()) return;
  if (!std::isfinite(value))
    fail("metric '" + std::string(metric) + "' is not finite (" + std::to_string(value) + ")");
  if (calls_ > 1) {  // a running mean: a value every call repeats stays exact
    auto& [mean, count] = batched_[std::string(metric)];
    ++count;
    mean += (value - mean) / count;
    return;
  }
  samples_[std::string(metric)].push_back(value);
}

void State::add_item(std::string key, nlohmann::json item) {
  if (warmup_ || call_ > 0) return;
  std::lock_guard lock(items_mutex_);
  items_.emplace_back(std::move(key), std::move(item));
}

std::vector<std::pair<std::string, nlohmann::json>> State::items_since(size_t from) const {
  std::lock_guard lock(items_mutex_);
  if (from >= items_.size()) return {};
  return {items_.begin() + static_cast<std::ptrdiff_t>(from), items_.end()};
}

void State::warn(std::string message) {
  if (std::find(warnings_.begin(), warnings_.end(), message) == warnings_.end())
    warnings_.push_back(std::move(message));
}

void State::note(std::string message) {
  if (std::find(notes_.begin(), notes_.end(), message) == notes_.end()) notes_.push_back(std::move(message));
}

void State::skip(std::string reason) const { throw SkipCase(std::move(reason)); }
void State::fail(std::string reason) const { throw FailCase(std::move(reason)); }
void State::skip_unless_every_rank(const std::string& failure) const {
  int32_t failed = failure.empty() ? 0 : 1;
  // A host value: over the host side (an NCCL communicator's collectives take device buffers).
  comm::Communicator& host = comm().host_side();
  if (host.size() > 1) host.allreduce(&failed, &failed, 1, comm::ElemType::I32, comm::ReduceOp::Max);
  if (!failure.empty()) skip(failure);
  if (failed) throw StoppedByPeer{};
}

void State::begin_sample(int index, bool warmup, int calls) {
  sample_index_ = index;
  warmup_ = warmup;
  calls_ = std::max(calls, 1);
  call_ = 0;
  batched_.clear();
}

void State::end_sample() {
  for (const auto& [metric, mean_count] : batched_) samples_[metric].push_back(mean_count.first);
  batched_.clear();
  calls_ = 1;
  call_ = 0;
}

}  // namespace mlsb
