#pragma once
// What `mlsysbench list` shows: every workload (axes with types, defaults and choices; metrics with
// units and direction; primary metric) and every suite.
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace mlsb {

/// {"workloads": [{name, description, primary_metric, axes: [...], metrics: [...]}],
///  "suites": [{name, description, file, workloads}]}. A suite file that fails to load is listed with
/// its "error" instead of its workloads.
nlohmann::json catalog_json(const std::vector<std::filesystem::path>& suite_dirs);

/// Human-readable form of catalog_json.
std::string catalog_text(const nlohmann::json& catalog);

/// The catalog of one workload (or family): its entry, and the suites that run it; or of one suite: the suite
/// and the workloads it runs. Throws std::invalid_argument for an unknown name, listing the workloads and
/// suites (and the nearest name).
nlohmann::json workload_catalog(const nlohmann::json& catalog, const std::string& workload);

}  // namespace mlsb
