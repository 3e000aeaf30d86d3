// The modelled link: bytes / bandwidth + latency per message, an all-to-all's share counted without the
// rank's own block, and bad bandwidths or latencies named by their axis.
#include "backends/comm/link_model.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace mlsb::comm {
namespace {

TEST(CommLinkModel, BytesOverBandwidthPlusLatencyPerMessage) {
  EXPECT_DOUBLE_EQ(transfer_s(2e9, 1), 2.0);
  const LinkModel link = make_link_model(2, 10);  // 2 GB/s, 10 us
  EXPECT_TRUE(link.active());
  EXPECT_NEAR(link.seconds(1e9, 3), 0.5 + 3e-5, 1e-12);
  // Rank 1 of 3 sends 100 + 300 bytes and receives 50 + 500 bytes over the link; its own block stays.
  const std::vector<size_t> send = {100, 7000, 300}, recv = {50, 7000, 500};
  EXPECT_NEAR(link.alltoallv_s(send, recv, 1), 550 / 2e9 + 2 * 1e-5, 1e-15);
  EXPECT_EQ(LinkModel{}.alltoallv_s(send, recv, 1), 0) << "no model: the real transport alone";
  EXPECT_FALSE(make_link_model(0, 0).active());
}

TEST(CommLinkModel, NegativeOrNonFiniteValuesOrALatencyWithoutBandwidthNameTheAxis) {
  EXPECT_THAT([] { make_link_model(-1, 0); },
              testing::ThrowsMessage<std::invalid_argument>(testing::StartsWith("link_gbps:")));
  EXPECT_THAT([] { make_link_model(NAN, 0); },
              testing::ThrowsMessage<std::invalid_argument>(testing::StartsWith("link_gbps:")));
  EXPECT_THAT([] { make_link_model(1, -3); },
              testing::ThrowsMessage<std::invalid_argument>(testing::StartsWith("link_latency_us:")));
  EXPECT_THAT([] { make_link_model(0, 5); },
              testing::ThrowsMessage<std::invalid_argument>(testing::StartsWith("link_gbps:")));
}

}  // namespace
}  // namespace mlsb::comm
