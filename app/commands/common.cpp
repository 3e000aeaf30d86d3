// Helpers several subcommands share (common.hpp).
#include "app/commands/common.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include "harness/environment.hpp"
#include "harness/machine_key.hpp"

namespace mlsb::cli {

std::atomic<bool> interrupted{false};

void catch_signals() {
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, [](int) { interrupted = true; });
}

std::string default_db() {
  if (const char* env = std::getenv("MLSB_DB")) return env;
  return "mlsysbench.db";
}

int64_t resolve(reports::Store& store, const std::string& ref) {
  if (auto id = store.resolve_run(ref)) return *id;
  // NAME~N past the oldest run: say how far back the store goes.
  if (const size_t tilde = ref.rfind('~'); tilde != std::string::npos && tilde > 0) {
    const std::string name = ref.substr(0, tilde);
    int runs = 0;
    for (const auto& r : store.list_runs())
      runs += name == "latest" ? r.status != reports::RunStatus::Running
                               : std::find(r.tags.begin(), r.tags.end(), name) != r.tags.end();
    if (runs > 0)
      throw std::invalid_argument("'" + ref + "' goes back past the oldest run: " + store.path().string() + " holds " +
                                  std::to_string(runs) + (name == "latest" ? " finished" : " '" + name + "'") +
                                  (runs == 1 ? " run" : " runs") + ", so " + name + "~" + std::to_string(runs - 1) +
                                  " is the oldest");
  }
  throw std::invalid_argument("no run matches '" + ref + "' in " + store.path().string() +
                              " (use an id, a uuid, a tag, or latest; see `mlsysbench db ls`)");
}

void write_output(const std::string& text, const std::string& path) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return;
  }
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

nlohmann::json environment_with_machine_key() {
  auto e = capture_environment();
  e["machine_key"] = machine_key(e);
  e["machine"] = machine_description(e);
  return e;
}

std::string join_argv(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

CLI::Validator tag_name() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        if (v.empty()) return "a tag must not be empty";
        if (v.find_first_not_of("0123456789") == std::string::npos)
          return "a tag must not be all digits (it would read as a run id): " + v;
        if (v == "latest" || v.starts_with("latest~")) return "'" + v + "' names the newest run; choose another tag";
        if (v.find('~') != std::string::npos) return "a tag must not contain '~' (TAG~N names earlier runs): " + v;
        return "";
      },
      "TAG");
}

}  // namespace mlsb::cli
