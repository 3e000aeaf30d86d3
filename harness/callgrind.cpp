#include "harness/callgrind.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>

#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define MLSB_HAVE_CALLGRIND 1
#else
#define MLSB_HAVE_CALLGRIND 0
#endif

#include <fstream>

#include "util/text.hpp"

namespace mlsb {
namespace {

// Real work the extra-work knob adds: an integer hash chain the compiler cannot fold (its seed is read
// through a volatile), about 6 instructions an iteration.
volatile uint64_t g_extra_seed = 0x9e3779b97f4a7c15ull;
volatile uint64_t g_extra_sink = 0;
__attribute__((noinline)) void extra_work(uint64_t iterations) {
  uint64_t x = g_extra_seed;
  for (uint64_t i = 0; i < iterations; ++i) x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ull + i;
  g_extra_sink = x;
}

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read the callgrind dump " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::filesystem::path dump_dir() {
  const char* dir = std::getenv(kCallgrindDirEnv);
  return dir ? std::filesystem::path(dir) : std::filesystem::path();
}

// Reads and removes the dumps callgrind wrote into the dump folder since the last call ("cg.out.N"): the
// newest one's totals.
CallgrindTotals take_dump() {
  const std::filesystem::path dir = dump_dir();
  std::filesystem::path newest;
  int newest_n = -1;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with("cg.out.")) continue;
    const int n = std::atoi(name.c_str() + 7);
    if (n > newest_n) newest_n = n, newest = e.path();
  }
  if (newest.empty()) throw std::runtime_error("callgrind wrote no dump into " + dir.string());
  const CallgrindTotals t = parse_callgrind_dump(read_file(newest), newest.string());
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().filename().string().starts_with("cg.out.")) std::filesystem::remove(e.path());
  return t;
}

#if MLSB_HAVE_CALLGRIND
// The instructions one iteration of extra_work costs, counted once.
double extra_work_cost() {
  static const double cost = [] {
    constexpr uint64_t kIterations = 100000;
    CALLGRIND_START_INSTRUMENTATION;
    CALLGRIND_ZERO_STATS;
    extra_work(kIterations);
    CALLGRIND_DUMP_STATS_AT("mlsb-extra-work-calibration");
    CALLGRIND_STOP_INSTRUMENTATION;
    return static_cast<double>(take_dump().ir) / kIterations;
  }();
  return cost;
}
#endif

}  // namespace

const std::vector<Metric>& counted_metrics() {
  // Instructions repeat between processes to within about 3e-4 (clock reads and allocations inside a
  // sample); what the simulated caches see also follows where the heap landed (0.1-0.3% between processes),
  // so the cache metrics are measured ones, not deterministic.
  static const std::vector<Metric> metrics = {
      {"instructions", "instructions", Better::Lower,
       "instructions executed in the sample by every thread, counted by callgrind (deterministic)", true},
      {"est_cycles", "cycles", Better::Lower,
       "estimated cycles: instructions + 10 x L1 misses + 100 x LL misses (KCachegrind's cycle estimation) with "
       "the fixed simulated caches (I1/D1 32 KiB 8-way, LL 8 MiB 16-way, 64 B lines)"},
      {"l1_miss_rate", "ratio", Better::Lower,
       "L1 misses (instruction and data) per access (instruction fetches + data reads + writes), simulated"},
      {"ll_miss_rate", "ratio", Better::Lower, "last-level cache misses per access, simulated"},
  };
  return metrics;
}

std::vector<double> counted_values(const CallgrindTotals& t) {
  const double l1 = static_cast<double>(t.i1mr + t.d1mr + t.d1mw);
  const double ll = static_cast<double>(t.ilmr + t.dlmr + t.dlmw);
  const double accesses = static_cast<double>(t.ir + t.dr + t.dw);
  return {static_cast<double>(t.ir), static_cast<double>(t.ir) + 10 * l1 + 100 * ll,
          accesses > 0 ? l1 / accesses : 0, accesses > 0 ? ll / accesses : 0};
}

CallgrindTotals parse_callgrind_dump(std::string_view text, const std::string& file) {
  std::vector<std::string> events;
  std::string totals, summary;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("events:")) events = words(line.substr(7));
    else if (line.starts_with("totals:")) totals = line.substr(7);
    else if (line.starts_with("summary:")) summary = line.substr(8);
  }
  if (events.empty()) throw std::runtime_error(file + ": not a callgrind dump (no 'events:' line)");
  const std::string& counts_text = totals.empty() ? summary : totals;
  if (counts_text.empty()) throw std::runtime_error(file + ": callgrind dump without a 'totals:' or 'summary:' line");
  const std::vector<std::string> counts = words(counts_text);
  CallgrindTotals t;
  const std::pair<const char*, uint64_t*> fields[] = {{"Ir", &t.ir},     {"Dr", &t.dr},     {"Dw", &t.dw},
                                                      {"I1mr", &t.i1mr}, {"D1mr", &t.d1mr}, {"D1mw", &t.d1mw},
                                                      {"ILmr", &t.ilmr}, {"DLmr", &t.dlmr}, {"DLmw", &t.dlmw}};
  for (const auto& [name, field] : fields) {
    size_t i = 0;
    while (i < events.size() && events[i] != name) ++i;
    if (i == events.size())
      throw std::runtime_error(file + ": callgrind dump lacks the event " + name + " (run with --cache-sim=yes)");
    if (i >= counts.size()) {
      *field = 0;  // callgrind leaves trailing zero counts out
      continue;
    }
    char* end = nullptr;
    *field = std::strtoull(counts[i].c_str(), &end, 10);
    if (end == counts[i].c_str() || *end != '\0')
      throw std::runtime_error(file + ": callgrind count '" + counts[i] + "' of " + name + " is not a number");
  }
  return t;
}

bool counting() {
#if MLSB_HAVE_CALLGRIND
  return RUNNING_ON_VALGRIND && !dump_dir().empty();
#else
  return false;
#endif
}

std::vector<std::string> callgrind_command(const std::filesystem::path& valgrind, const std::filesystem::path& self,
                                           const std::vector<std::string>& self_args,
                                           const std::filesystem::path& dump_dir) {
  const CacheConfig caches;
  std::vector<std::string> cmd = {valgrind.string(),
                                  "--tool=callgrind",
                                  "--instr-atstart=no",
                                  "--cache-sim=yes",
                                  std::string("--I1=") + caches.i1,
                                  std::string("--D1=") + caches.d1,
                                  std::string("--LL=") + caches.ll,
                                  "--callgrind-out-file=" + (dump_dir / "cg.out").string(),
                                  "--log-file=" + (dump_dir / "valgrind.log").string(),
                                  self.string()};
  cmd.insert(cmd.end(), self_args.begin(), self_args.end());
  return cmd;
}

std::filesystem::path find_valgrind() {
  const char* path = std::getenv("PATH");
  std::filesystem::path found;
  for (const auto& dir : split(path ? path : "", ':')) {
    const auto candidate = std::filesystem::path(dir.empty() ? "." : dir) / "valgrind";
    if (std::filesystem::exists(candidate)) {
      found = candidate;
      break;
    }
  }
  if (found.empty())
    throw std::invalid_argument(
        "--measure instructions needs valgrind (callgrind counts the instructions): install the Debian package "
        "'valgrind' (scripts/setup-deps does)");
  FILE* p = ::popen((found.string() + " --version 2>/dev/null").c_str(), "r");
  char buf[64] = {};
  const bool read = p && std::fgets(buf, sizeof buf, p);
  if (p) ::pclose(p);
  int major = 0, minor = 0;
  if (!read || std::sscanf(buf, "valgrind-%d.%d", &major, &minor) != 2 || major < 3 || (major == 3 && minor < 15))
    throw std::invalid_argument("--measure instructions needs valgrind 3.15 or newer; " + found.string() + " says '" +
                                std::string(buf, std::strcspn(buf, "\n")) + "' (install the Debian package 'valgrind')");
  return found;
}

double extra_work_for(double instructions) {
  const char* v = std::getenv(kExtraWorkEnv);
  if (!v || !*v) return 0;
  char* end = nullptr;
  const double f = std::strtod(v, &end);
  if (end == v || *end != '\0' || !(f >= 0 && f <= 10))
    throw std::invalid_argument(std::string(kExtraWorkEnv) + " must be a fraction in [0, 10], got '" + v + "'");
  return f * instructions;
}

void CountedSample::begin() {
#if MLSB_HAVE_CALLGRIND
  if (!counting()) return;
  const uint64_t iterations = extra_ > 0 ? static_cast<uint64_t>(extra_ / extra_work_cost()) : 0;
  CALLGRIND_START_INSTRUMENTATION;
  CALLGRIND_ZERO_STATS;
  if (iterations) extra_work(iterations);
#endif
}

std::optional<CallgrindTotals> CountedSample::end() {
#if MLSB_HAVE_CALLGRIND
  if (!counting()) return std::nullopt;
  CALLGRIND_DUMP_STATS_AT("mlsb-sample");
  CALLGRIND_STOP_INSTRUMENTATION;
  return take_dump();
#else
  return std::nullopt;
#endif
}

}  // namespace mlsb
