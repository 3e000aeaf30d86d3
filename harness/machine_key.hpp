#pragma once
// The machine key: which runs were measured on the same hardware and build, so that a baseline or a
// history is never taken from another machine (runs.machine_key in the store).
#include <string>

#include <nlohmann/json.hpp>

namespace mlsb {

/// The canonical description of the hardware and build in a captured environment (capture_environment):
/// {"cpu_model", "cores", "memory_gib" (rounded), "arch", "gpus": [{"name", "memory_gib"}], "driver",
/// "build_type", "compiler", "compiler_flags"}. The hostname, OS, kernel, library versions other than the
/// driver, and anything else are left out. Absent fields are empty; never throws.
nlohmann::json machine_description(const nlohmann::json& env);

/// 16 lower-case hex digits: FNV-1a 64 of the description's compact JSON (keys sorted), so the same
/// hardware and build give the same key whatever the hostname or the order of fields. The environment
/// variable MLSB_MACHINE_KEY, when set and not empty, is returned instead (for a fleet of identical
/// runners that should share one history).
std::string machine_key(const nlohmann::json& env);

}  // namespace mlsb
