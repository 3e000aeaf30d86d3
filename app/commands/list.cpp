// `mlsysbench list`: the catalog of workloads and suites (app/catalog.hpp), as text or JSON.
#include <iostream>
#include <memory>
#include <string>

#include "app/catalog.hpp"
#include "app/commands/commands.hpp"
#include "harness/suite.hpp"

namespace mlsb::cli {

namespace {

struct ListArgs {
  bool json = false;
  std::string workload;
};

int run_list(const ListArgs& args) {
  auto catalog = catalog_json(default_suite_dirs());
  if (!args.workload.empty()) catalog = workload_catalog(catalog, args.workload);
  std::cout << (args.json ? catalog.dump(2) + "\n" : catalog_text(catalog));
  return 0;
}

}  // namespace

Command add_list_command(CLI::App& app) {
  auto args = std::make_shared<ListArgs>();
  auto* list = app.add_subcommand("list", "show workloads (axes, defaults, metrics, units) and suites");
  list->add_flag("--json", args->json, "print as JSON");
  list->add_option("workload", args->workload,
                   "only this workload (its axes, metrics and the suites that run it), or this suite (and the "
                   "workloads it runs)");
  return {list, [args](const Globals&) { return run_list(*args); }, {}};
}

}  // namespace mlsb::cli
