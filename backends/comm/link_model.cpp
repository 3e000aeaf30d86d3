#include "backends/comm/link_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>

#include "backends/comm/communicator.hpp"

#include "util/text.hpp"

namespace mlsb::comm {

double transfer_s(double bytes, double link_gbps) { return bytes / (link_gbps * 1e9); }

double LinkModel::seconds(double bytes, size_t messages) const {
  if (!active()) return 0;
  return transfer_s(bytes, gbps) + static_cast<double>(messages) * latency_s;
}

double LinkModel::alltoallv_s(std::span<const size_t> send_bytes, std::span<const size_t> recv_bytes, int rank) const {
  double sent = 0, received = 0;
  for (size_t r = 0; r < send_bytes.size(); ++r)
    if (static_cast<int>(r) != rank) sent += static_cast<double>(send_bytes[r]);
  for (size_t r = 0; r < recv_bytes.size(); ++r)
    if (static_cast<int>(r) != rank) received += static_cast<double>(recv_bytes[r]);
  const size_t peers = send_bytes.empty() ? 0 : send_bytes.size() - 1;
  return seconds(std::max(sent, received), peers);
}

void wait_for_link(const Communicator& comm, Clock::time_point until) {
  for (auto now = Clock::now(); now < until; now = Clock::now()) {
    if (comm.cancelled()) throw CommError("modelled link: cancelled");
    std::this_thread::sleep_for(std::min<Clock::duration>(until - now, std::chrono::milliseconds(10)));
  }
}

LinkModel make_link_model(double link_gbps, double link_latency_us) {
  if (!(link_gbps >= 0) || !std::isfinite(link_gbps))
    throw std::invalid_argument("link_gbps: must be >= 0 (0 = the real transport alone), got " + shortest(link_gbps));
  if (!(link_latency_us >= 0) || !std::isfinite(link_latency_us))
    throw std::invalid_argument("link_latency_us: must be >= 0, got " + shortest(link_latency_us));
  if (link_latency_us > 0 && link_gbps == 0)
    throw std::invalid_argument("link_gbps: a modelled link needs a bandwidth > 0 (link_latency_us is " +
                                shortest(link_latency_us) + ")");
  return LinkModel{link_gbps, link_latency_us * 1e-6};
}

}  // namespace mlsb::comm
