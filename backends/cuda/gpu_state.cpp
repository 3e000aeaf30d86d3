#include "backends/cuda/gpu_state.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <set>
#include <system_error>
#include <thread>

namespace mlsb::cuda {
namespace {

// The NVML names of the clock event reason bits, lowest first (nvml.h: nvmlClocksEventReason*).
constexpr std::array<const char*, 9> kReasonNames = {
    "gpu_idle",   "applications_clocks_setting", "sw_power_cap",        "hw_slowdown",
    "sync_boost", "sw_thermal_slowdown",         "hw_thermal_slowdown", "hw_power_brake_slowdown",
    "display_clock_setting"};
// Idleness and clocks set on purpose: gpu_idle | applications_clocks_setting | display_clock_setting.
constexpr uint64_t kNotThrottling = 0x1 | 0x2 | 0x100;

// NVML's C API as far as it is used here (nvml.h; the toolkit on the build machines lacks it). None of it is
// deprecated in CUDA 13 (NVML's deprecation notices name the applications clocks, ...ThrottleReasons and
// nvmlDeviceGetTemperature). Enums are ints; 0 is NVML_SUCCESS.
using Device = struct NvmlDevice*;
constexpr int kClockSm = 1, kClockMem = 2, kTemperatureGpu = 0, kEnabled = 1;
constexpr unsigned kTextBytes = 96;  // NVML_DEVICE_UUID_V2_BUFFER_SIZE, NVML_DEVICE_NAME_V2_BUFFER_SIZE
// nvmlTemperature_v1_t and its version word (NVML_STRUCT_VERSION: the size, and the version in bits 24-31).
struct TemperatureV1 {
  unsigned version;
  int sensor;
  int celsius;
};
constexpr unsigned kTemperatureV1 = sizeof(TemperatureV1) | (1u << 24);

struct Nvml {
  bool ok = false;
  int (*by_bus_id)(const char*, Device*) = nullptr;
  int (*uuid)(Device, char*, unsigned) = nullptr;
  int (*name)(Device, char*, unsigned) = nullptr;
  int (*clock)(Device, int, unsigned*) = nullptr;
  int (*max_clock)(Device, int, unsigned*) = nullptr;
  int (*reasons)(Device, unsigned long long*) = nullptr;
  int (*power_limit)(Device, unsigned*) = nullptr;  // mW
  int (*persistence)(Device, int*) = nullptr;
  int (*ecc)(Device, int*, int*) = nullptr;
  int (*temperature)(Device, TemperatureV1*) = nullptr;
};

template <typename F>
void bind(void* lib, F& fn, const char* symbol) {
  fn = reinterpret_cast<F>(dlsym(lib, symbol));
}

// Loaded once per process; a missing library or a failed nvmlInit leaves ok false for good. The library
// stays loaded and initialised until the process ends (the driver releases it then).
const Nvml& nvml() {
  static const Nvml lib = [] {
    Nvml n;
    void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) return n;
    int (*init)() = nullptr;
    bind(h, init, "nvmlInit_v2");
    bind(h, n.by_bus_id, "nvmlDeviceGetHandleByPciBusId_v2");
    bind(h, n.uuid, "nvmlDeviceGetUUID");
    bind(h, n.name, "nvmlDeviceGetName");
    bind(h, n.clock, "nvmlDeviceGetClockInfo");
    bind(h, n.max_clock, "nvmlDeviceGetMaxClockInfo");
    bind(h, n.reasons, "nvmlDeviceGetCurrentClocksEventReasons");
    bind(h, n.power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    bind(h, n.persistence, "nvmlDeviceGetPersistenceMode");
    bind(h, n.ecc, "nvmlDeviceGetEccMode");
    bind(h, n.temperature, "nvmlDeviceGetTemperatureV");
    n.ok = init && n.by_bus_id && init() == 0;
    return n;
  }();
  return lib;
}

// fn(args..., &out) when NVML has fn and it succeeds; else unset.
template <typename T, typename Fn, typename... Args>
std::optional<T> query(Fn fn, Args... args) {
  T v{};
  if (fn && fn(args..., &v) == 0) return v;
  return std::nullopt;
}

std::string text(int (*fn)(Device, char*, unsigned), Device d) {
  char buf[kTextBytes] = {};
  return fn && fn(d, buf, sizeof buf) == 0 ? std::string(buf) : std::string();
}

GpuState read_one(const Nvml& n, Device d, int cuda_index, const std::string& bus_id) {
  GpuState s;
  s.cuda_index = cuda_index;
  s.pci_bus_id = bus_id;
  s.uuid = text(n.uuid, d);
  s.name = text(n.name, d);
  s.sm_clock_mhz = query<unsigned>(n.clock, d, kClockSm);
  s.mem_clock_mhz = query<unsigned>(n.clock, d, kClockMem);
  s.max_sm_clock_mhz = query<unsigned>(n.max_clock, d, kClockSm);
  s.max_mem_clock_mhz = query<unsigned>(n.max_clock, d, kClockMem);
  if (const auto mask = query<unsigned long long>(n.reasons, d)) s.clock_event_mask = *mask;
  if (const auto mw = query<unsigned>(n.power_limit, d)) s.power_limit_w = *mw / 1000.0;
  if (const auto pm = query<int>(n.persistence, d)) s.persistence_mode = *pm == kEnabled;
  int current = 0, pending = 0;
  if (n.ecc && n.ecc(d, &current, &pending) == 0) s.ecc_enabled = current == kEnabled;
  TemperatureV1 t{kTemperatureV1, kTemperatureGpu, 0};
  if (n.temperature && n.temperature(d, &t) == 0 && t.celsius >= 0) s.temperature_c = static_cast<unsigned>(t.celsius);
  return s;
}

// "0000:19:00.0" (CUDA) as NVML writes it, "00000000:19:00.0"; "" when it is not a PCI bus id.
std::string nvml_bus_id(const std::string& id) {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  if (std::sscanf(id.c_str(), "%x:%x:%x.%x", &domain, &bus, &device, &function) != 4) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08X:%02X:%02X.%X", domain, bus, device, function);
  return buf;
}

// The clock rule of throttle_reasons for one snapshot of one GPU.
bool low_sm_clock(const GpuState& s) {
  if (!s.clock_event_mask || (*s.clock_event_mask & kNotThrottling)) return false;
  if (!s.sm_clock_mhz || !s.max_sm_clock_mhz || *s.max_sm_clock_mhz == 0) return false;
  return *s.sm_clock_mhz < kThrottleClockFraction * *s.max_sm_clock_mhz;
}

}  // namespace

std::vector<std::string> clock_event_reason_names(uint64_t mask) {
  std::vector<std::string> names;
  for (int bit = 0; bit < 64; ++bit) {
    const uint64_t b = uint64_t{1} << bit;
    if (!(mask & b)) continue;
    if (static_cast<size_t>(bit) < kReasonNames.size()) {
      names.emplace_back(kReasonNames[bit]);
    } else {
      char buf[32];
      std::snprintf(buf, sizeof buf, "unknown_0x%llx", static_cast<unsigned long long>(b));
      names.emplace_back(buf);
    }
  }
  return names;
}

nlohmann::json to_json(const GpuState& s) {
  nlohmann::json j = {{"cuda_index", s.cuda_index}, {"uuid", s.uuid}, {"pci_bus_id", s.pci_bus_id}, {"name", s.name}};
  const auto put = [&j](const char* key, const auto& v) {
    if (v) j[key] = *v;
  };
  put("sm_clock_mhz", s.sm_clock_mhz);
  put("mem_clock_mhz", s.mem_clock_mhz);
  put("max_sm_clock_mhz", s.max_sm_clock_mhz);
  put("max_mem_clock_mhz", s.max_mem_clock_mhz);
  if (s.clock_event_mask) {
    j["clock_event_mask"] = *s.clock_event_mask;
    j["clock_event_reasons"] = clock_event_reason_names(*s.clock_event_mask);
  }
  put("power_limit_w", s.power_limit_w);
  put("persistence_mode", s.persistence_mode);
  put("ecc_enabled", s.ecc_enabled);
  put("temperature_c", s.temperature_c);
  return j;
}

std::vector<std::string> throttle_reasons(const std::vector<GpuState>& before, const std::vector<GpuState>& after,
                                          const std::vector<GpuState>& during) {
  std::set<std::string> reasons;
  for (const auto* snapshot : {&before, &during, &after})
    for (const GpuState& s : *snapshot) {
      if (s.clock_event_mask)
        for (const auto& r : clock_event_reason_names(*s.clock_event_mask & ~kNotThrottling)) reasons.insert(r);
      if (low_sm_clock(s)) reasons.insert(kLowSmClockReason);
    }
  return {reasons.begin(), reasons.end()};
}

CaseGpuRecord case_gpu_record(const std::vector<GpuState>& before, const std::vector<GpuState>& after,
                              const std::vector<GpuState>& during) {
  CaseGpuRecord r;
  if (before.empty() && after.empty() && during.empty()) return r;
  const auto reasons = throttle_reasons(before, after, during);
  r.throttled = !reasons.empty();
  const auto list = [](const std::vector<GpuState>& states) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& s : states) a.push_back(to_json(s));
    return a;
  };
  r.json = {{"before", list(before)}, {"after", list(after)}, {"throttle_reasons", reasons}};
  if (!during.empty()) r.json["during"] = list(during);
  return r;
}

std::vector<GpuState> most_throttled(const std::vector<std::vector<GpuState>>& reads) {
  std::vector<GpuState> worst;
  // How slow a snapshot's SM clock is: its fraction of the max when both are known, else the clock.
  const auto pace = [](const GpuState& s) -> double {
    if (!s.sm_clock_mhz) return INFINITY;
    return s.max_sm_clock_mhz && *s.max_sm_clock_mhz ? double(*s.sm_clock_mhz) / *s.max_sm_clock_mhz
                                                             : double(*s.sm_clock_mhz);
  };
  const auto throttled = [](const GpuState& s) { return !throttle_reasons({s}, {}).empty(); };
  for (const auto& read : reads)
    for (const GpuState& s : read) {
      auto it = std::find_if(worst.begin(), worst.end(), [&](const GpuState& w) { return w.pci_bus_id == s.pci_bus_id; });
      if (it == worst.end()) {
        worst.push_back(s);
      } else if (!throttled(*it) && (throttled(s) || pace(s) < pace(*it))) {
        *it = s;
      }
    }
  return worst;
}

struct GpuWatch::Impl {
  std::vector<std::string> ids;
  std::chrono::duration<double> period;
  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  std::vector<std::vector<GpuState>> reads;
  std::thread thread;
};

GpuWatch::GpuWatch(std::vector<std::string> pci_bus_ids, double period_s) : impl_(std::make_unique<Impl>()) {
  impl_->ids = std::move(pci_bus_ids);
  impl_->period = std::chrono::duration<double>(period_s);
  if (impl_->ids.empty()) return;  // no GPU: nothing to watch
  try {
    impl_->thread = std::thread([im = impl_.get()] {
      std::unique_lock lock(im->mu);
      while (!im->cv.wait_for(lock, im->period, [im] { return im->stopping; })) {
        lock.unlock();
        auto read = read_gpu_states(im->ids);
        lock.lock();
        im->reads.push_back(std::move(read));
      }
    });
  } catch (const std::system_error&) {  // no thread: the case keeps its before and after snapshots
  }
}

GpuWatch::~GpuWatch() { stop(); }

std::vector<GpuState> GpuWatch::stop() {
  {
    const std::lock_guard lock(impl_->mu);
    impl_->stopping = true;
  }
  impl_->cv.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
  return most_throttled(impl_->reads);
}

std::vector<GpuState> read_gpu_states(const std::vector<std::string>& pci_bus_ids) {
  std::vector<GpuState> out;
  if (pci_bus_ids.empty()) return out;  // no GPU: NVML is not even loaded
  const Nvml& n = nvml();
  if (!n.ok) return out;
  for (size_t i = 0; i < pci_bus_ids.size(); ++i) {
    const std::string id = nvml_bus_id(pci_bus_ids[i]);
    Device d = nullptr;
    if (id.empty() || n.by_bus_id(id.c_str(), &d) != 0) continue;
    out.push_back(read_one(n, d, static_cast<int>(i), id));
  }
  return out;
}

}  // namespace mlsb::cuda
