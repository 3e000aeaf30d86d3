#include <gtest/gtest.h>

#include <stdexcept>

#include "workloads/toolbench/scorer.hpp"

namespace mlsb::toolbench {
namespace {

TEST(ToolbenchPassAtK, HandComputedValues) {
  EXPECT_DOUBLE_EQ(pass_at_k(1, 1, 1), 1.0);
  EXPECT_DOUBLE_EQ(pass_at_k(1, 0, 1), 0.0);
  EXPECT_DOUBLE_EQ(pass_at_k(10, 3, 1), 0.3);                 // pass@1 = c/n
  EXPECT_NEAR(pass_at_k(5, 2, 2), 1.0 - 3.0 / 10.0, 1e-12);   // 1 - C(3,2)/C(5,2)
  EXPECT_NEAR(pass_at_k(10, 1, 5), 1.0 - 126.0 / 252.0, 1e-12);  // 1 - C(9,5)/C(10,5)
  EXPECT_NEAR(pass_at_k(4, 1, 3), 0.75, 1e-12);               // 1 - C(3,3)/C(4,3)
  EXPECT_DOUBLE_EQ(pass_at_k(5, 4, 2), 1.0);                  // n - c < k: every k-subset has a pass
  EXPECT_DOUBLE_EQ(pass_at_k(3, 0, 3), 0.0);
  EXPECT_DOUBLE_EQ(pass_at_k(3, 1, 3), 1.0);
}

TEST(ToolbenchPassAtK, StableForLargeN) {
  // 1 - C(990,100)/C(1000,100): binomials overflow doubles, the product form does not.
  const double v = pass_at_k(1000, 10, 100);
  double fail = 1.0;
  for (int i = 0; i < 10; ++i) fail *= (900.0 - i) / (1000.0 - i);
  EXPECT_NEAR(v, 1.0 - fail, 1e-12);
}

TEST(ToolbenchPassAtK, RejectsBadArguments) {
  EXPECT_THROW(pass_at_k(0, 0, 1), std::invalid_argument);
  EXPECT_THROW(pass_at_k(3, 4, 1), std::invalid_argument);
  EXPECT_THROW(pass_at_k(3, -1, 1), std::invalid_argument);
  EXPECT_THROW(pass_at_k(3, 1, 0), std::invalid_argument);
  EXPECT_THROW(pass_at_k(3, 1, 4), std::invalid_argument);
}

}  // namespace
}  // namespace mlsb::toolbench
