#include "reports/baseline.hpp"

#include <algorithm>
#include <cmath>

#include "util/json_parse.hpp"

namespace mlsb::reports {
namespace {

// A string of a run's environment, under `group` ("" for the top level).
std::string env_text(const nlohmann::json& env, const char* group, const char* key) {
  if (!*group) return json_string(env, key);
  return env.is_object() ? json_string(env.value(group, nlohmann::json::object()), key) : std::string();
}

}  // namespace

void sort_newest_first(std::vector<RunRecord>& runs) {
  std::stable_sort(runs.begin(), runs.end(), [](const RunRecord& a, const RunRecord& b) {
    return a.started_at != b.started_at ? a.started_at > b.started_at : a.id > b.id;
  });
}

std::vector<RunRecord> comparable_runs(Store& store, const RunRecord& cand, int limit) {
  std::vector<RunRecord> out;
  if (cand.machine_key.empty()) return out;  // a run without a key is its own machine
  std::vector<RunRecord> runs = store.list_runs();
  sort_newest_first(runs);
  const auto before = [&](const RunRecord& r) {
    return r.started_at != cand.started_at ? r.started_at < cand.started_at : r.id < cand.id;
  };
  for (auto& r : runs) {
    if (limit > 0 && static_cast<int>(out.size()) >= limit) break;
    if (r.id != cand.id && before(r) && r.status == RunStatus::Ok && r.suite == cand.suite && r.machine_key == cand.machine_key &&
        r.branch == cand.branch && r.git_sha != cand.git_sha)
      out.push_back(std::move(r));
  }
  return out;
}

std::optional<RunRecord> find_baseline(Store& store, const RunRecord& cand) {
  auto runs = comparable_runs(store, cand, 1);
  if (runs.empty()) return std::nullopt;
  return std::move(runs.front());
}

std::string no_baseline_note(Store& store, const RunRecord& cand) {
  int same_suite = 0;
  for (const auto& r : store.list_runs())
    if (r.id != cand.id && r.suite == cand.suite) ++same_suite;
  return "no baseline yet: no earlier ok run of suite '" + cand.suite + "' on machine " +
         (cand.machine_key.empty() ? std::string("(none recorded)") : cand.machine_key) + ", branch '" +
         cand.branch + "', with a git sha other than " + (cand.git_sha.empty() ? "(none)" : cand.git_sha.substr(0, 10)) +
         " (" + std::to_string(same_suite) + " other run(s) of that suite in " + store.path().string() + ")";
}

HistoryMedians history_medians(Store& store, const std::vector<RunRecord>& runs) {
  std::vector<int64_t> ids;
  for (const auto& r : runs) ids.push_back(r.id);
  HistoryMedians out;
  if (ids.empty()) return out;
  for (const auto& p : store.load_metric_points(ids))
    if (std::isfinite(p.median) && !p.throttled)
      out[case_pair_key(p.workload, p.params_key, p.comm, p.ranks) + '\n' + p.metric].push_back(p.median);
  return out;
}

std::vector<std::string> environment_differences(const RunRecord& base, const RunRecord& cand) {
  std::vector<std::string> out;
  const auto differ = [&](const std::string& field, const std::string& a, const std::string& b) {
    if (a != b) out.push_back(field + ": " + (a.empty() ? "(none)" : a) + " -> " + (b.empty() ? "(none)" : b));
  };
  differ("machine key", base.machine_key, cand.machine_key);
  differ("GPU driver", env_text(base.env, "libraries", "cuda_driver"), env_text(cand.env, "libraries", "cuda_driver"));
  differ("CUDA runtime", env_text(base.env, "libraries", "cuda_runtime"), env_text(cand.env, "libraries", "cuda_runtime"));
  differ("build type", env_text(base.env, "", "build_type"), env_text(cand.env, "", "build_type"));
  differ("compiler flags", env_text(base.env, "", "compiler_flags"), env_text(cand.env, "", "compiler_flags"));
  return out;
}

}  // namespace mlsb::reports
