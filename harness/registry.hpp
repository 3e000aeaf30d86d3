#pragma once
// Process-wide workload registry, filled at static-init time by MLSB_REGISTER_WORKLOAD.
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/workload.hpp"

namespace mlsb {

using WorkloadFactory = std::function<std::unique_ptr<Workload>()>;

/// Registers a workload factory under `name`; returns true (for static initialisers).
bool register_workload(std::string name, WorkloadFactory factory);
/// Names of every registered workload, sorted.
std::vector<std::string> workload_names();
/// A new instance of workload `name`; throws std::invalid_argument listing the known workloads.
std::unique_ptr<Workload> make_workload(std::string_view name);

}  // namespace mlsb

#define MLSB_CONCAT_INNER(a, b) a##b
#define MLSB_CONCAT(a, b) MLSB_CONCAT_INNER(a, b)
/// Registers `Class` (default-constructible Workload) under the name its info() returns.
#define MLSB_REGISTER_WORKLOAD(Class)                                                      \
  static const bool MLSB_CONCAT(mlsb_registered_, __COUNTER__) = ::mlsb::register_workload( \
      Class().info().name, [] { return std::unique_ptr<::mlsb::Workload>(new Class()); })
