// `mlsysbench env`: the environment a run would record, with its machine key, as JSON.
#include <iostream>

#include "app/commands/commands.hpp"
#include "harness/environment.hpp"
#include "harness/machine_key.hpp"

namespace mlsb::cli {

Command add_env_command(CLI::App& app) {
  auto* env = app.add_subcommand("env", "print the environment a run would record (JSON)");
  return {env,
          [](const Globals&) {
            auto e = capture_environment();
            e["machine_key"] = machine_key(e);
            e["machine"] = machine_description(e);
            std::cout << e.dump(2) << "\n";
            return 0;
          },
          {}};
}

}  // namespace mlsb::cli
