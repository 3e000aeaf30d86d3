// `mlsysbench import gbench|json`: a Google Benchmark JSON file, or a JSON report of mlsysbench, stored as
// a run.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "app/commands/commands.hpp"
#include "app/commands/common.hpp"
#include "reports/import_gbench.hpp"
#include "reports/import_json.hpp"
#include "reports/store.hpp"

namespace mlsb::cli {

namespace {

struct ImportArgs {
  std::string gbench_file, json_report_file;
  std::vector<std::string> tags;
};

int import_gbench_file(const ImportArgs& args, const Globals& globals) {
  auto data = reports::import_gbench(args.gbench_file);
  for (const auto& t : args.tags) data.run.tags.push_back(t);
  reports::Store store(globals.db);
  const int64_t id = store.begin_run(data.run);
  bool failed = false;
  for (auto& c : data.cases) {
    store.add_case(id, c);
    failed = failed || c.status == reports::CaseStatus::Failed;
  }
  store.finish_run(id, failed ? reports::RunStatus::Failed : reports::RunStatus::Ok);
  std::fprintf(stderr, "imported %zu benchmark(s) from %s as run %lld (%s)\n", data.cases.size(),
               args.gbench_file.c_str(), static_cast<long long>(id), data.run.uuid.c_str());
  return 0;
}

int import_json_report(const ImportArgs& args, const Globals& globals) {
  auto data = reports::read_json_report(args.json_report_file);
  for (const auto& t : args.tags)
    if (std::find(data.run.tags.begin(), data.run.tags.end(), t) == data.run.tags.end()) data.run.tags.push_back(t);
  reports::Store store(globals.db);
  const int64_t id = reports::store_imported_run(store, data);
  std::fprintf(stderr, "imported run %s (%zu case(s)) from %s as run %lld\n", data.run.uuid.c_str(), data.cases.size(),
               args.json_report_file.c_str(), static_cast<long long>(id));
  return 0;
}

}  // namespace

Command add_import_command(CLI::App& app) {
  auto args = std::make_shared<ImportArgs>();
  auto* import = app.add_subcommand("import", "store results produced elsewhere as a run");
  import->require_subcommand(1);
  auto* gbench = import->add_subcommand("gbench",
                                        "a Google Benchmark JSON file (--benchmark_out=F "
                                        "--benchmark_out_format=json)");
  gbench->add_option("file", args->gbench_file, "the JSON file")->required();
  gbench->add_option("--tag", args->tags, "tag the run (repeatable)")->check(tag_name());
  auto* json = import->add_subcommand("json",
                                      "a JSON report of mlsysbench (report --format json), samples "
                                      "included; the run keeps its uuid");
  json->add_option("file", args->json_report_file, "the JSON report")->required();
  json->add_option("--tag", args->tags, "add a tag to the run (repeatable)")->check(tag_name());
  return {import,
          [args, gbench](const Globals& globals) {
            return *gbench ? import_gbench_file(*args, globals) : import_json_report(*args, globals);
          },
          {}};
}

}  // namespace mlsb::cli
