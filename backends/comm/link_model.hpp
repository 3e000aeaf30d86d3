#pragma once
// What-if model of a link the machine does not have: a transfer costs bytes / bandwidth plus a latency per
// message (the alpha-beta model of Hockney, as nccl-tests' bus bandwidth assumes). Bandwidths are GB/s
// (1e9 bytes/s, the unit of algbw/busbw; 100 Gbit/s Ethernet is 12.5 GB/s).
#include <cstddef>
#include <span>

#include "util/clock.hpp"

namespace mlsb::comm {

/// Seconds to move `bytes` over a link of `link_gbps` GB/s (link_gbps > 0).
double transfer_s(double bytes, double link_gbps);

/// A modelled link: `gbps` GB/s per rank (0 = none: the real transport alone) and `latency_s` seconds per
/// message.
struct LinkModel {
  double gbps = 0, latency_s = 0;
  bool active() const { return gbps > 0; }
  /// bytes / gbps + messages * latency_s (0 when not active).
  double seconds(double bytes, size_t messages) const;
  /// One rank's share of an all-to-all(v) (byte counts per peer rank, as Communicator::alltoallv takes
  /// them): the larger of the bytes it sends and receives over the link (its own block excluded: it never
  /// leaves the rank), plus one message latency per other rank.
  double alltoallv_s(std::span<const size_t> send_bytes, std::span<const size_t> recv_bytes, int rank) const;
};

class Communicator;

/// Waits until `until` (a collective's start plus its modelled link time) in slices of at most 10 ms,
/// throwing CommError("modelled link: cancelled") as soon as `comm`'s cancel flag is set.
void wait_for_link(const Communicator& comm, Clock::time_point until);

/// Throws std::invalid_argument naming the axis ("link_gbps: ...", "link_latency_us: ...") when the
/// bandwidth or latency is negative or not finite, or a latency is given without a bandwidth.
LinkModel make_link_model(double link_gbps, double link_latency_us);

}  // namespace mlsb::comm
