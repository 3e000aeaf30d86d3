#include "util/process_state.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>

namespace mlsb {
namespace {

// Boot time in unix seconds (/proc/stat "btime"), 0 when unknown.
double boot_time() {
  std::ifstream in("/proc/stat");
  std::string key;
  double value = 0;
  while (in >> key) {
    if (key == "btime" && in >> value) return value;
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

}  // namespace

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

bool process_running_since(int64_t pid, double since_unix) {
  if (pid <= 0) return true;
  if (kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return false;
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t paren = stat.rfind(')');  // the command name may hold spaces and parentheses
  if (paren == std::string::npos) return true;
  std::istringstream fields(stat.substr(paren + 1));
  std::string state, field;
  fields >> state;
  if (state == "Z" || state == "X") return false;  // exited, not yet reaped
  for (int i = 4; i < 22 && fields >> field; ++i) {
  }
  unsigned long long start_ticks = 0;
  const double boot = boot_time();
  if (!(fields >> start_ticks) || boot == 0) return true;
  const double started = boot + static_cast<double>(start_ticks) / static_cast<double>(sysconf(_SC_CLK_TCK));
  return started <= since_unix + 2;
}

}  // namespace mlsb
