#include "harness/machine_key.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "util/json_parse.hpp"
#include "util/text.hpp"

namespace mlsb {
namespace {

// Bytes as whole GiB: MemTotal moves by a few MiB between kernels on the same machine.
int64_t gib(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return 0;
  return std::llround(it->get<double>() / (1024.0 * 1024.0 * 1024.0));
}

}  // namespace

nlohmann::json machine_description(const nlohmann::json& env) {
  if (!env.is_object()) return machine_description(nlohmann::json::object());
  nlohmann::json d;
  d["cpu_model"] = json_string(env, "cpu_model");
  const auto cores = env.find("cores");
  d["cores"] = cores != env.end() && cores->is_number_integer() ? cores->get<int64_t>() : 0;
  d["memory_gib"] = gib(env, "memory_bytes");
  d["arch"] = json_string(env, "arch");
  d["gpus"] = nlohmann::json::array();
  if (const auto g = env.find("gpus"); g != env.end() && g->is_array())
    for (const auto& gpu : *g)
      if (gpu.is_object()) d["gpus"].push_back({{"name", json_string(gpu, "name")}, {"memory_gib", gib(gpu, "memory_bytes")}});
  d["driver"] = json_string(env.value("libraries", nlohmann::json::object()), "cuda_driver");
  d["build_type"] = json_string(env, "build_type");
  d["compiler"] = json_string(env, "compiler");
  d["compiler_flags"] = json_string(env, "compiler_flags");
  return d;
}

std::string machine_key(const nlohmann::json& env) {
  if (const char* forced = std::getenv("MLSB_MACHINE_KEY"); forced && *forced) return forced;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx",
                static_cast<unsigned long long>(fnv1a64(machine_description(env).dump())));
  return buf;
}

}  // namespace mlsb
