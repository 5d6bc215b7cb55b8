// The rules' ring of recent values (src/session/rules/history.hpp): its running median and median
// absolute deviation equal the copy-and-select ones bit for bit, through wrap-around, ties and
// both parities of the window.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "rules/history.hpp"

namespace tfdebug::detail {
namespace {

std::uint64_t bits(double x) {
  return std::bit_cast<std::uint64_t>(x);
}

TEST(Ring, MedianAndDeviationEqualTheCopiesBitForBit) {
  std::mt19937_64 random(7);
  for (const std::size_t capacity : {1, 2, 3, 10, 50}) {
    Ring ring(capacity);
    std::uniform_real_distribution<double> uniform(-3.0, 3.0);
    for (int i = 0; i < 400; ++i) {
      // Runs of equal values (a plateau), values on the median, and spread ones.
      const double value = i % 7 == 0 ? 1.0 : i % 5 == 0 ? ring.median() : uniform(random);
      if (std::isnan(value)) continue;
      ring.push(value);
      const std::vector<double> values = ring.values();
      const double median = median_of(values);
      ASSERT_EQ(bits(ring.median()), bits(median)) << "capacity " << capacity << ", push " << i;
      ASSERT_EQ(bits(ring.median_absolute_deviation(median)), bits(median_absolute_deviation(values, median)))
          << "capacity " << capacity << ", push " << i;
    }
  }
}

TEST(Ring, DeviationOfKnownValues) {
  Ring ring(5);
  for (const double v : {1.0, 2.0, 3.0, 4.0, 100.0}) ring.push(v);
  EXPECT_EQ(ring.median(), 3.0);
  EXPECT_EQ(ring.median_absolute_deviation(3.0), 1.0);  // deviations 2 1 0 1 97
  ring.push(5.0);                                       // 2 3 4 5 100
  EXPECT_EQ(ring.median(), 4.0);
  EXPECT_EQ(ring.median_absolute_deviation(4.0), 1.0);  // 2 1 0 1 96
  Ring even(4);
  for (const double v : {1.0, 2.0, 4.0, 8.0}) even.push(v);
  EXPECT_EQ(even.median(), 3.0);
  EXPECT_EQ(even.median_absolute_deviation(3.0), 1.5);  // 2 1 1 5: (1 + 2) / 2
  EXPECT_TRUE(std::isnan(Ring(3).median_absolute_deviation(0.0)));
}

}  // namespace
}  // namespace tfdebug::detail
