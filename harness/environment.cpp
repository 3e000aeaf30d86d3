#include "harness/environment.hpp"
#include "util/process_state.hpp"

#include <dlfcn.h>
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include <curl/curl.h>
#include <sqlite3.h>

#include "backends/cuda/probe.hpp"

namespace mlsb {
namespace {

std::string command_output(const std::string& cmd) {
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[512];
    while (size_t n = fread(buf, 1, sizeof buf, f)) out.append(buf, n);
    pclose(f);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// First value of "key<sep>value" lines in a text file.
std::string file_field(const char* path, const std::string& key, char sep) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    auto pos = line.find(sep);
    if (pos == std::string::npos) continue;
    std::string v = line.substr(pos + 1);
    v.erase(0, v.find_first_not_of(" \t\""));
    while (!v.empty() && (v.back() == '"' || v.back() == ' ')) v.pop_back();
    return v;
  }
  return "";
}

// The first line of a small sysfs file, "" when it cannot be read.
std::string sysfs_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// What pyperf and Google Benchmark record of the CPU beside its model: clock, governor, turbo, the CPUs
// this process may run on, caches, and the load when the run started (volatile: not in the machine key).
void capture_cpu_state(nlohmann::json& env) {
  if (const std::string mhz = file_field("/proc/cpuinfo", "cpu MHz", ':'); !mhz.empty())
    env["cpu_mhz"] = std::strtod(mhz.c_str(), nullptr);
  const std::string freq = "/sys/devices/system/cpu/cpu0/cpufreq/";
  if (const std::string max = sysfs_line(freq + "cpuinfo_max_freq"); !max.empty())
    env["cpu_max_mhz"] = std::strtod(max.c_str(), nullptr) / 1000;  // kHz
  if (const std::string g = sysfs_line(freq + "scaling_governor"); !g.empty()) env["cpu_governor"] = g;
  if (const std::string nt = sysfs_line("/sys/devices/system/cpu/intel_pstate/no_turbo"); !nt.empty())
    env["cpu_turbo"] = nt == "0";
  else if (const std::string boost = sysfs_line("/sys/devices/system/cpu/cpufreq/boost"); !boost.empty())
    env["cpu_turbo"] = boost == "1";
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) env["cpu_affinity"] = CPU_COUNT(&set);
  nlohmann::json caches = nlohmann::json::array();
  for (int i = 0;; ++i) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    const std::string size = sysfs_line(dir + "size");
    if (size.empty()) break;
    caches.push_back({{"level", std::atoi(sysfs_line(dir + "level").c_str())},
                      {"type", sysfs_line(dir + "type")},
                      {"size", size},
                      {"shared_cpus", sysfs_line(dir + "shared_cpu_list")}});
  }
  if (!caches.empty()) env["caches"] = caches;
  double load[3];
  if (getloadavg(load, 3) == 3) env["load_average"] = {load[0], load[1], load[2]};
}

std::string mpi_version() {
  void* lib = dlopen("libmpi.so.40", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return "";
  using Fn = int (*)(char*, int*);
  auto get = reinterpret_cast<Fn>(dlsym(lib, "MPI_Get_library_version"));
  if (!get) return "";
  char buf[8192] = {};  // MPI_MAX_LIBRARY_VERSION_STRING is 256 in Open MPI; be generous
  int len = 0;
  if (get(buf, &len) != 0) return "";
  std::string v(buf, static_cast<size_t>(len));
  if (auto nl = v.find_first_of(",\n"); nl != std::string::npos) v.resize(nl);
  return v;
}

}  // namespace

GitInfo project_git_info() {
  const std::string dir = MLSB_SOURCE_DIR;
  GitInfo g;
  if (const char* sha = std::getenv("MLSB_GIT_SHA"); sha && *sha) {
    g.sha = sha;  // a build from a source archive, or runs labelled by the commit under test
  } else {
    g.sha = command_output("git -C '" + dir + "' rev-parse HEAD 2>/dev/null");
  }
  if (!g.sha.empty())
    g.dirty = !command_output("git -C '" + dir + "' status --porcelain --untracked-files=no 2>/dev/null").empty();
  // Actions check out a detached HEAD: the branch is in the environment.
  for (const char* var : {"GITHUB_HEAD_REF", "GITHUB_REF_NAME"})
    if (const char* v = std::getenv(var); v && *v) {
      g.branch = v;
      return g;
    }
  if (!g.sha.empty()) {
    g.branch = command_output("git -C '" + dir + "' rev-parse --abbrev-ref HEAD 2>/dev/null");
    if (g.branch == "HEAD") g.branch.clear();
  }
  return g;
}

nlohmann::json ci_metadata() {
  nlohmann::json ci = nlohmann::json::object();
  const std::pair<const char*, const char*> fields[] = {
      {"run_id", "GITHUB_RUN_ID"}, {"run_attempt", "GITHUB_RUN_ATTEMPT"}, {"runner", "RUNNER_NAME"},
      {"ref", "GITHUB_REF"},       {"sha", "GITHUB_SHA"},                 {"workflow", "GITHUB_WORKFLOW"},
      {"repository", "GITHUB_REPOSITORY"}};
  for (const auto& [key, var] : fields)
    if (const char* v = std::getenv(var); v && *v) ci[key] = v;
  return ci;
}

nlohmann::json capture_environment() {
  nlohmann::json env;
  env["host"] = host_name();
  env["cpu_model"] = file_field("/proc/cpuinfo", "model name", ':');
  env["cores"] = std::thread::hardware_concurrency();
  capture_cpu_state(env);
  const std::string mem_kb = file_field("/proc/meminfo", "MemTotal", ':');
  if (!mem_kb.empty()) env["memory_bytes"] = std::stoull(mem_kb) * 1024;
  env["os"] = file_field("/etc/os-release", "PRETTY_NAME", '=');
  utsname u{};
  if (uname(&u) == 0) {
    env["kernel"] = std::string(u.sysname) + " " + u.release;
    env["arch"] = u.machine;
  }
  env["compiler"] = MLSB_COMPILER;
  env["compiler_flags"] = MLSB_CXX_FLAGS;
  env["build_type"] = MLSB_BUILD_TYPE;
#ifdef NDEBUG
  env["assertions"] = false;
#else
  env["assertions"] = true;
#endif
  env["mlsysbench_version"] = MLSB_VERSION;
  nlohmann::json libs;
  libs["sqlite"] = sqlite3_libversion();
  libs["curl"] = curl_version_info(CURLVERSION_NOW)->version;
  libs["nlohmann_json"] = std::to_string(NLOHMANN_JSON_VERSION_MAJOR) + "." +
                          std::to_string(NLOHMANN_JSON_VERSION_MINOR) + "." +
                          std::to_string(NLOHMANN_JSON_VERSION_PATCH);
  if (auto v = mpi_version(); !v.empty()) libs["mpi"] = v;
  const cuda::Probe cuda = cuda::probe();
  if (!cuda.runtime_version.empty()) libs["cuda_runtime"] = cuda.runtime_version;
  if (!cuda.driver_version.empty()) libs["cuda_driver"] = cuda.driver_version;
  if (!cuda.nccl_version.empty()) libs["nccl"] = cuda.nccl_version;
  env["libraries"] = libs;
  env["gpus"] = nlohmann::json::array();
  for (const auto& g : cuda.gpus) env["gpus"].push_back({{"name", g.name}, {"memory_bytes", g.memory_bytes}});
  if (!cuda.note.empty()) env["gpu_note"] = cuda.note;
  for (const char* var : {"OMP_NUM_THREADS", "OMP_PROC_BIND", "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE",
                          "MKL_NUM_THREADS", "CUDA_VISIBLE_DEVICES", "NCCL_ALGO", "NCCL_PROTO"})
    if (const char* v = std::getenv(var)) env["env_vars"][var] = v;
  return env;
}


}  // namespace mlsb
