#include "tfdebug/core/normal.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace tfdebug {
namespace {

TEST(Normal, KnownQuantilesAndTheCdfsInverse) {
  EXPECT_NEAR(normal_quantile(0.975, true), 1.959963984540054, 1e-14);
  EXPECT_NEAR(normal_quantile(0.5, true), 0.0, 1e-15);
  EXPECT_NEAR(normal_quantile(0.001, true), -3.090232306167814, 1e-13);
  EXPECT_NEAR(normal_cdf(1.959963984540054), 0.975, 1e-15);
  for (const double p : {1e-12, 1e-6, 0.01, 0.02425, 0.3, 0.7, 0.99, 1 - 1e-9}) {
    const double rough = normal_quantile(p, false);
    const double exact = normal_quantile(p, true);
    EXPECT_NEAR(normal_cdf(exact), p, 1e-14 * std::max(1.0, p / (1 - p))) << p;
    EXPECT_NEAR(rough, exact, 1.2e-9 * std::fabs(exact) + 1e-12) << p;  // Acklam's bound
  }
}

}  // namespace
}  // namespace tfdebug
