#pragma once
// The process's peak resident memory (Linux VmHWM), resettable so a case can measure its own peak, and
// the memory the machine has available for a case's allocations.

namespace mlsb {

/// Resets the peak-RSS mark to the current RSS (writes 5 to /proc/self/clear_refs). Returns false
/// where the kernel does not allow it (the peak then includes earlier cases).
bool reset_peak_rss();
/// Peak resident set size in bytes since the last reset (or process start); 0 when unreadable.
double peak_rss_bytes();
/// Memory available to new allocations without swapping, in bytes (Linux MemAvailable); 0 when unreadable.
double available_memory_bytes();

}  // namespace mlsb
