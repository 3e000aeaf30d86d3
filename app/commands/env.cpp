// `mlsysbench env`: the environment a run would record, with its machine key, as JSON.
#include <iostream>

#include "app/commands/commands.hpp"
#include "app/commands/common.hpp"

namespace mlsb::cli {

Command add_env_command(CLI::App& app) {
  auto* env = app.add_subcommand("env", "print the environment a run would record (JSON)");
  return {env,
          [](const Globals&) {
            std::cout << environment_with_machine_key().dump(2) << "\n";
            return 0;
          },
          {}};
}

}  // namespace mlsb::cli
