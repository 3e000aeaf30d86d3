#include "reports/baseline.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "util/json_parse.hpp"

namespace mlsb::reports {
namespace {

// A string of a run's environment, under `group` ("" for the top level).
std::string env_text(const nlohmann::json& env, const char* group, const char* key) {
  if (!*group) return json_string(env, key);
  return env.is_object() ? json_string(env.value(group, nlohmann::json::object()), key) : std::string();
}

// The GPUs a run saw, by name ("" without any).
std::string gpu_names(const nlohmann::json& env) {
  std::string out;
  if (env.is_object() && env.contains("gpus") && env["gpus"].is_array())
    for (const auto& g : env["gpus"]) out += (out.empty() ? "" : ", ") + json_string(g, "name");
  return out;
}

// The runner options a run was given (RunRecord::selection's "runner"); null for a run stored before them.
nlohmann::json runner_options(const RunRecord& r) {
  return r.selection.is_object() && r.selection.contains("runner") ? r.selection["runner"] : nlohmann::json();
}

bool usable(const CaseRecord& c) {
  if (c.status != CaseStatus::Ok || c.throttled) return false;
  for (const auto& [metric, values] : c.samples)
    if (!values.empty()) return true;
  return false;
}

}  // namespace

void sort_newest_first(std::vector<RunRecord>& runs) {
  std::stable_sort(runs.begin(), runs.end(), [](const RunRecord& a, const RunRecord& b) {
    return a.started_at != b.started_at ? a.started_at > b.started_at : a.id > b.id;
  });
}

bool same_runner_options(const RunRecord& a, const RunRecord& b) {
  const nlohmann::json ra = runner_options(a), rb = runner_options(b);
  return ra.is_null() || rb.is_null() || ra == rb;
}

namespace {

// comparable_runs over `runs` (newest first).
std::vector<RunRecord> comparable_among(const std::vector<RunRecord>& runs, const RunRecord& cand, int limit) {
  std::vector<RunRecord> out;
  if (cand.machine_key.empty()) return out;  // a run without a key is its own machine
  const auto before = [&](const RunRecord& r) {
    return r.started_at != cand.started_at ? r.started_at < cand.started_at : r.id < cand.id;
  };
  for (const auto& r : runs) {
    if (limit > 0 && static_cast<int>(out.size()) >= limit) break;
    if (r.id != cand.id && before(r) && r.status == RunStatus::Ok && !r.partial && r.uuid != cand.confirms &&
        r.suite == cand.suite &&
        r.machine_key == cand.machine_key && r.branch == cand.branch && same_runner_options(r, cand))
      out.push_back(r);
  }
  return out;
}

std::vector<RunRecord> newest_first(Store& store) {
  std::vector<RunRecord> runs = store.list_runs();
  sort_newest_first(runs);
  return runs;
}

}  // namespace

std::vector<RunRecord> comparable_runs(Store& store, const RunRecord& cand, int limit) {
  return comparable_among(newest_first(store), cand, limit);
}

std::optional<Reference> find_reference(Store& store, const RunRecord& cand, int limit) {
  Reference ref;
  const std::vector<RunRecord> all = newest_first(store);
  ref.runs = comparable_among(all, cand, limit);
  // The confirming re-runs of the suspect runs, by the uuid they re-ran (newest re-run first).
  std::map<std::string, std::vector<int64_t>> reruns;
  for (const auto& r : all)
    if (!r.confirms.empty() && r.status != RunStatus::Running) reruns[r.confirms].push_back(r.id);
  std::map<std::string, size_t> newest;  // case key -> index into ref.base.cases of its reference case
  bool have_base = false;
  for (const RunRecord& run : ref.runs) {
    RunData data = store.load_run(run.id);
    if (!run.suspect.empty()) {
      ref.suspect.push_back(run);
      const auto it = reruns.find(run.uuid);
      if (it == reruns.end()) continue;  // nothing stands in for it: left out
      std::map<std::string, CaseRecord> rerun;
      for (const int64_t id : it->second)
        for (auto& c : store.load_run(id).cases) rerun.try_emplace(case_pair_key(c), std::move(c));
      for (auto& c : data.cases)
        if (const auto r = rerun.find(case_pair_key(c)); r != rerun.end()) c = r->second;
    }
    bool has_ok = false;
    for (const auto& c : data.cases) has_ok = has_ok || usable(c);
    if (!has_ok) continue;  // every case skipped or failed: nothing to learn from this run
    if (!have_base) {  // the newest run with an ok case names the cases of the reference
      have_base = true;
      ref.base.run = data.run;
      for (size_t i = 0; i < data.cases.size(); ++i) {
        newest.emplace(case_pair_key(data.cases[i]), i);
        ref.base.cases.push_back(data.cases[i]);
      }
    }
    for (auto& c : data.cases) {
      if (!usable(c)) continue;
      const std::string key = case_pair_key(c);
      if (const auto it = newest.find(key); it != newest.end() && !usable(ref.base.cases[it->second]))
        ref.base.cases[it->second] = c;  // a case not ok in the newest run: its newest ok one
      for (const auto& s : c.summaries)
        if (std::isfinite(s.stats.median) && s.stats.n > 0) ref.history[key + '\n' + s.metric].push_back(s.stats.median);
    }
  }
  if (!have_base) return std::nullopt;
  return ref;
}

std::string no_baseline_note(Store& store, const RunRecord& cand) {
  int same_suite = 0, partial = 0, suspect = 0;
  for (const auto& r : store.list_runs())
    if (r.id != cand.id && r.suite == cand.suite) {
      ++same_suite;
      partial += r.partial;
      suspect += !r.suspect.empty();
    }
  const nlohmann::json runner = runner_options(cand);
  return "no baseline yet: no earlier ok, complete run of suite '" + cand.suite + "' with an ok case on machine " +
         (cand.machine_key.empty() ? std::string("(none recorded)") : cand.machine_key) + ", branch '" + cand.branch +
         "'" + (runner.is_null() ? std::string() : ", runner options " + dump_json(runner)) + " (" +
         std::to_string(same_suite) + " other run(s) of that suite in " + store.path().string() + ", " +
         std::to_string(partial) + " partial, " + std::to_string(suspect) + " suspect)";
}

std::string commit_range(const RunRecord& base, const RunRecord& cand) {
  if (!base.git_sha.empty() && base.git_sha == cand.git_sha)
    return "the same (" + cand.git_sha.substr(0, 10) + "): an unchanged commit is judged too";
  if (base.git_sha.empty() && cand.git_sha.empty()) return "unknown (neither run recorded a git sha)";
  const auto sha = [](const RunRecord& r) { return r.git_sha.empty() ? std::string("?") : r.git_sha.substr(0, 10); };
  return sha(base) + ".." + sha(cand);
}

std::vector<std::string> environment_differences(const RunRecord& base, const RunRecord& cand) {
  std::vector<std::string> out;
  const auto differ = [&](const std::string& field, const std::string& a, const std::string& b) {
    if (a != b) out.push_back(field + ": " + (a.empty() ? "(none)" : a) + " -> " + (b.empty() ? "(none)" : b));
  };
  differ("machine key", base.machine_key, cand.machine_key);
  differ("GPU driver", env_text(base.env, "libraries", "cuda_driver"), env_text(cand.env, "libraries", "cuda_driver"));
  differ("CUDA runtime", env_text(base.env, "libraries", "cuda_runtime"), env_text(cand.env, "libraries", "cuda_runtime"));
  differ("NCCL", env_text(base.env, "libraries", "nccl"), env_text(cand.env, "libraries", "nccl"));
  differ("GPUs", gpu_names(base.env), gpu_names(cand.env));
  differ("kernel", env_text(base.env, "", "kernel"), env_text(cand.env, "", "kernel"));
  differ("build type", env_text(base.env, "", "build_type"), env_text(cand.env, "", "build_type"));
  differ("compiler flags", env_text(base.env, "", "compiler_flags"), env_text(cand.env, "", "compiler_flags"));
  return out;
}

}  // namespace mlsb::reports
