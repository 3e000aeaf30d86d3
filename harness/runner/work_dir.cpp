#include "harness/runner/work_dir.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <string_view>

#include "util/process_state.hpp"

namespace mlsb::runner {
namespace {

constexpr std::string_view kWorkDirPrefix = "mlsb-case-";

}  // namespace

std::filesystem::path make_case_work_dir() {
  std::string templ =
      (std::filesystem::temp_directory_path() / (std::string(kWorkDirPrefix) + std::to_string(getpid()) + "-XXXXXX"))
          .string();
  if (!mkdtemp(templ.data())) throw std::runtime_error("cannot create a case work directory in " + templ);
  return templ;
}

void remove_dead_case_work_dirs() {
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(std::filesystem::temp_directory_path(), ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(kWorkDirPrefix)) continue;
    const std::string rest = name.substr(kWorkDirPrefix.size());
    const size_t dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos || rest.find_first_not_of("0123456789") != dash) continue;
    const int64_t pid = std::stoll(rest.substr(0, dash));
    std::error_code stat_ec;
    const auto written = std::filesystem::last_write_time(entry.path(), stat_ec);
    if (stat_ec) continue;
    const double written_unix =
        std::chrono::duration<double>(std::chrono::file_clock::to_sys(written).time_since_epoch()).count();
    if (!process_running_since(pid, written_unix)) std::filesystem::remove_all(entry.path(), stat_ec);
  }
}

}  // namespace mlsb::runner
