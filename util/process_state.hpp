#pragma once
// Whether a process recorded earlier (a run's pid) is still the one running: used to tell a run left
// "running" by a killed process from a run in progress, and leftover case folders from live ones.
#include <cstdint>
#include <string>

namespace mlsb {

/// This host's name (gethostname), as a run records it in `env.host` and beside its pid.
std::string host_name();

/// True when process `pid` on this host is alive (not a zombie) and started no later than `since_unix`
/// (unix seconds; 2 s of slack for clock rounding): false for a pid that is gone, or that was reused by
/// a process started after `since_unix`. True when /proc cannot tell (no false "gone").
bool process_running_since(int64_t pid, double since_unix);

}  // namespace mlsb
