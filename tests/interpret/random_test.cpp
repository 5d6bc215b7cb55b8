// The seeded streams' standard normals (src/interpret/random.hpp, Note [Ziggurat normals]): the
// ziggurat's layers, the first two moments, the distribution against Phi (Kolmogorov-Smirnov and
// chi-square, the tail beyond the ziggurat's base included), independence of consecutive draws,
// and reproducibility.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "random.hpp"
#include "tfdebug/core/normal.hpp"

namespace tfdebug::interpret::detail {
namespace {

std::vector<double> draws(std::size_t n, std::uint64_t seed) {
  Stream stream(seed, 0);
  std::vector<double> z(n);
  for (double& v : z) v = stream.normal();
  return z;
}

TEST(ZigguratTables, EveryLayerHasTheSameAreaAndTheTopOneClosesAtZero) {
  const ZigguratTables& t = ziggurat_tables();
  const double r = ZigguratTables::kTail;
  const double v =
      r * std::exp(-0.5 * r * r) + std::sqrt(std::acos(-1.0) / 2) * std::erfc(r / std::sqrt(2.0));
  EXPECT_NEAR(v, 0.00492867323399, 1e-13);  // Marsaglia and Tsang's value for 256 layers
  for (int i = 1; i < ZigguratTables::kLayers; ++i) {
    EXPECT_NEAR(t.x[static_cast<std::size_t>(i)] *
                    (t.f[static_cast<std::size_t>(i + 1)] - t.f[static_cast<std::size_t>(i)]),
                v, 1e-12 * v)
        << "layer " << i;
  }
  // The last layer's height ends at f(0) = 1 only if r is the right constant for 256 layers.
  EXPECT_EQ(t.f[ZigguratTables::kLayers], 1.0);
  EXPECT_NEAR(t.x[0] * t.f[0], v, 1e-15);
}

TEST(StreamNormal, MeanVarianceAndLagOneCorrelation) {
  const std::size_t n = 1'000'000;
  const std::vector<double> z = draws(n, 7);
  double sum = 0, sq = 0, lag = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sum += z[i];
    sq += z[i] * z[i];
    if (i > 0) lag += z[i] * z[i - 1];
  }
  const double mean = sum / static_cast<double>(n);
  const double var = sq / static_cast<double>(n) - mean * mean;
  const double se = 1 / std::sqrt(static_cast<double>(n));
  EXPECT_LT(std::fabs(mean), 4 * se);
  EXPECT_LT(std::fabs(var - 1), 4 * std::sqrt(2.0) * se);
  EXPECT_LT(std::fabs(lag / static_cast<double>(n - 1)), 4 * se);
}

TEST(StreamNormal, KolmogorovSmirnovAgainstPhi) {
  const std::size_t n = 200'000;
  std::vector<double> z = draws(n, 11);
  std::sort(z.begin(), z.end());
  double d = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double f = normal_cdf(z[i]);
    d = std::max({d, static_cast<double>(i + 1) / static_cast<double>(n) - f,
                  f - static_cast<double>(i) / static_cast<double>(n)});
  }
  // The 0.1% critical value of D is 1.949 / sqrt(n).
  EXPECT_LT(d, 1.949 / std::sqrt(static_cast<double>(n)));
}

TEST(StreamNormal, ChiSquareOverEquiprobableBinsAndTheTail) {
  const std::size_t n = 1'000'000;
  const int bins = 50;
  std::vector<double> edges;
  for (int k = 1; k < bins; ++k) edges.push_back(normal_quantile(static_cast<double>(k) / bins, true));
  std::vector<double> counts(bins, 0);
  std::size_t beyond_r = 0;
  Stream stream(3, 1);
  for (std::size_t i = 0; i < n; ++i) {
    const double z = stream.normal();
    counts[static_cast<std::size_t>(std::upper_bound(edges.begin(), edges.end(), z) - edges.begin())] += 1;
    if (std::fabs(z) > ZigguratTables::kTail) ++beyond_r;
  }
  const double expected = static_cast<double>(n) / bins;
  double chi2 = 0;
  for (const double c : counts) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 85.35);  // chi-square, 49 degrees of freedom, 0.1% critical value
  // The tail (drawn by Marsaglia's exponential method) has its mass: 2 (1 - Phi(r)) = 2.58e-4.
  const double p_tail = 2 * (1 - normal_cdf(ZigguratTables::kTail));
  const double mean_tail = p_tail * static_cast<double>(n);
  EXPECT_LT(std::fabs(static_cast<double>(beyond_r) - mean_tail), 4 * std::sqrt(mean_tail));
}

TEST(StreamNormal, SameSeedAndStreamSameValuesAndFillNormalMatchesNormal) {
  EXPECT_EQ(draws(1000, 5), draws(1000, 5));
  EXPECT_NE(draws(10, 5), draws(10, 6));
  Stream a(9, 4), b(9, 4), c(9, 5);
  const std::vector<float> mean = {1.0f, -2.0f, 0.5f, 3.0f, 0.0f};
  std::vector<float> filled(mean.size());
  a.fill_normal(filled, mean, 0.25);
  for (std::size_t j = 0; j < mean.size(); ++j)
    EXPECT_EQ(filled[j], static_cast<float>(mean[j] + 0.25 * b.normal()));
  EXPECT_NE(filled[0], static_cast<float>(mean[0] + 0.25 * c.normal()));
}

}  // namespace
}  // namespace tfdebug::interpret::detail
