#include "support/test_support.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "reports/store.hpp"

namespace fs = std::filesystem;

namespace mlsb::test {

fs::path binary() { return MLSB_BINARY; }
fs::path source_dir() { return MLSB_SOURCE_DIR; }

fs::path shared_dir() {
  if (const char* env = std::getenv("MLSB_SHARED_DIR")) return env;
  return source_dir().parent_path() / "shared";
}

fs::path npm_bin_dir() { return source_dir() / "mcp" / "servers" / "node_modules" / ".bin"; }

TempDir::TempDir() {
  std::random_device rd;
  for (int attempt = 0; attempt < 100; ++attempt) {
    fs::path p = fs::temp_directory_path() / ("mlsb-test-" + std::to_string(rd()));
    if (fs::create_directory(p)) {
      path_ = p;
      return;
    }
  }
  throw std::runtime_error("TempDir: cannot create a temporary directory");
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string shell_quote(const fs::path& p) { return "'" + p.string() + "'"; }

CommandResult run_cli(const std::string& args) { return run_shell(shell_quote(binary()) + " " + args); }

CommandResult run_cli(const fs::path& db, const std::string& args) {
  return run_cli("--db " + shell_quote(db) + " " + args);
}

CommandResult run_shell(const std::string& command) {
  TempDir tmp;
  const fs::path out = tmp / "out", err = tmp / "err";
  const std::string full = "(" + command + ") >'" + out.string() + "' 2>'" + err.string() + "' </dev/null";
  const int status = std::system(full.c_str());
  CommandResult r;
  if (status != -1 && WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  else if (status != -1 && WIFSIGNALED(status)) r.exit_code = 128 + WTERMSIG(status);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

fs::path mpi_program(const std::string& name) { return fs::path(MLSB_BUILD_DIR) / "tests" / "mpi" / name; }

std::string mpirun(int ranks, int limit_s) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 timeout " +
         std::to_string(limit_s) + " mpirun -n " + std::to_string(ranks) + " --oversubscribe ";
}

CommandResult run_cli_on_ranks(int ranks, const std::filesystem::path& db, const std::string& args) {
  return run_shell(mpirun(ranks, 600) + shell_quote(binary()) + " --db " + shell_quote(db) + " " + args);
}

Timed run_timed(const std::string& command) {
  const auto t0 = std::chrono::steady_clock::now();
  Timed t{run_shell(command)};
  t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return t;
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

std::string unwrapped(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' && text.compare(i + 1, 4, "    ") == 0) {
      while (i + 1 < text.size() && text[i + 1] == ' ') ++i;
      out += ' ';
    } else {
      out += text[i];
    }
  }
  return out;
}

void write_file(const fs::path& path, const std::string& text) {
  if (path.has_parent_path()) fs::create_directories(path.parent_path());
  std::ofstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("write_file: cannot open " + path.string());
  f << text;
}

std::string read_file(const fs::path& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("read_file: cannot open " + path.string());
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

reports::RunData only_run(const std::filesystem::path& db) {
  reports::Store store(db.string(), /*read_only=*/true);
  const auto runs = store.list_runs();
  EXPECT_EQ(runs.size(), 1u) << db;
  return store.load_run(runs.at(0).id);
}

}  // namespace mlsb::test
