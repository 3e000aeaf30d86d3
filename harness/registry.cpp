#include "harness/registry.hpp"

#include "util/text.hpp"

#include <map>
#include <stdexcept>

namespace mlsb {
namespace {
std::map<std::string, WorkloadFactory, std::less<>>& registry() {
  static std::map<std::string, WorkloadFactory, std::less<>> r;
  return r;
}
}  // namespace

bool register_workload(std::string name, WorkloadFactory factory) {
  registry()[std::move(name)] = std::move(factory);
  return true;
}

std::vector<std::string> workload_names() {
  std::vector<std::string> names;
  for (const auto& [name, f] : registry()) names.push_back(name);
  return names;
}

std::unique_ptr<Workload> make_workload(std::string_view name) {
  auto it = registry().find(name);
  if (it == registry().end()) {
    throw std::invalid_argument("unknown workload '" + std::string(name) + "' (known: " + join(workload_names(), ", ") + ")");
  }
  return it->second();
}

}  // namespace mlsb
