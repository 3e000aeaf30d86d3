#pragma once
// Nightly runs built in code and stored the way CI artifacts are restored: rendered as our JSON report and
// imported with the real binary (`import json`), so every run is a real row of a real SQLite file.
#include <algorithm>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reports/render.hpp"
#include "support/test_support.hpp"
#include "unit/reports/fixtures.hpp"

namespace mlsb::reports::test {

/// What one night looks like: each case's time_ms is 10 ms (zstd) and 20 ms (lz4) times `scale`, with a
/// run-to-run factor of sd `noise` and 0.5% within the run (5 samples).
struct Night {
  double scale = 1.0;
  std::string sha = "";  ///< "" = a commit of its own ("c0ffee" + 1000 + i)
  std::string suite = "nightly-gpu";
  std::string build_type = "RelWithDebInfo";
  std::vector<std::string> codecs = {"zstd", "lz4"};
  bool partial = false;  ///< made with --filter (the argv says so too)
  std::string suspect = "";   ///< RunRecord::suspect
  std::string confirms = "";  ///< the uuid of the night this run re-runs
  bool skipped = false;  ///< every case skipped (the run still ok)
  bool failed = false;   ///< the zstd case failed (the run failed)
  std::string tag = "nightly";
  nlohmann::json runner = {{"repetitions", 5}};  ///< the selection's runner options
  double noise = 0.01;
};

/// The uuid night i is stored under.
inline std::string night_uuid(int i) { return "00000000-0000-4000-8000-" + std::to_string(100000000000 + i); }

/// Night i (started i days after 2026-01-01).
inline RunData nightly_run(int i, const Night& n) {
  std::mt19937_64 rng(static_cast<uint64_t>(i) * 7 + 1);
  std::normal_distribution<double> z(0, 1);
  RunData d;
  d.run.uuid = night_uuid(i);
  d.run.suite = n.suite;
  d.run.status = n.failed ? reports::RunStatus::Failed : reports::RunStatus::Ok;
  d.run.git_sha = n.sha.empty() ? "c0ffee" + std::to_string(1000 + i) : n.sha;
  d.run.machine_key = "ci-gpu-1";
  d.run.branch = "main";
  d.run.tags = {n.tag};
  d.run.argv = "mlsysbench run " + n.suite + " --repetitions 5" + (n.partial ? " --filter lz4" : "");
  d.run.started_at = 1767225600 + 86400.0 * i;
  d.run.finished_at = d.run.started_at + 60;
  d.run.env = {{"build_type", n.build_type}, {"libraries", {{"cuda_driver", "13.0"}}}};
  d.run.selection = {{"filter", n.partial ? "lz4" : ""}, {"params", nlohmann::json::object()}, {"runner", n.runner}};
  d.run.partial = n.partial || !n.confirms.empty();
  d.run.suspect = n.suspect;
  d.run.confirms = n.confirms;
  for (const auto& [codec, base] : {std::pair{"zstd", 10.0}, std::pair{"lz4", 20.0}}) {
    const double run_factor = 1 + n.noise * z(rng);
    std::vector<double> t;
    for (int s = 0; s < 5; ++s) t.push_back(base * n.scale * run_factor * (1 + 0.005 * z(rng)));
    if (std::find(n.codecs.begin(), n.codecs.end(), codec) == n.codecs.end()) continue;
    if (n.skipped)
      d.cases.push_back(make_case("compress", {{"codec", codec}}, {}, CaseStatus::Skipped, "needs cuda"));
    else if (n.failed && std::string(codec) == "zstd")
      d.cases.push_back(make_case("compress", {{"codec", codec}}, {}, CaseStatus::Failed, "round trip differs"));
    else
      d.cases.push_back(make_case("compress", {{"codec", codec}}, {{"time_ms", t}}));
    d.cases.back().label = std::string("codec=") + codec;
  }
  return d;
}

/// Appends run `d` to the store `db` through its JSON report and `import json`.
inline void import_run(const std::filesystem::path& db, const RunData& d) {
  const std::filesystem::path report = db.parent_path() / (d.run.uuid + ".json");
  mlsb::test::write_file(report, render(d, Format::Json));
  const auto r = mlsb::test::run_cli(db, "import json " + mlsb::test::shell_quote(report));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

/// A store holding `runs` nightly runs imported from their JSON reports; night i is night(i).
template <class NightOf>
std::filesystem::path imported_store(const mlsb::test::TempDir& dir, const std::string& name, int runs, NightOf night) {
  const std::filesystem::path db = dir / name;
  for (int i = 0; i < runs; ++i) import_run(db, nightly_run(i, night(i)));
  return db;
}

}  // namespace mlsb::reports::test
