#include "util/peak_memory.hpp"

#include <fstream>
#include <string>

namespace mlsb {

bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  if (!f) return false;
  f << "5";
  f.flush();
  return static_cast<bool>(f);
}

namespace {

// The value of a "Key:  1234 kB" line of a /proc file, in bytes; 0 when absent.
double proc_kb_field(const char* file, const std::string& key) {
  std::ifstream f(file);
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) return std::stod(line.substr(key.size())) * 1024.0;
  return 0;
}

}  // namespace

double peak_rss_bytes() { return proc_kb_field("/proc/self/status", "VmHWM:"); }

double available_memory_bytes() { return proc_kb_field("/proc/meminfo", "MemAvailable:"); }

}  // namespace mlsb
