// The k-means background summary (tfdebug/interpret/background_kmeans.hpp): analytic clusters,
// sklearn's KMeans from the same start (tests/interpret/check_kmeans.py), and the Shapley
// methods over a weighted background: efficiency, and weights equal to repeated rows.
#include "tfdebug/interpret/background_kmeans.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "test_models.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/interpret/shapley.hpp"

namespace tfdebug::interpret {
namespace {

using testing::FunctionModel;

// Blobs of `sizes` rows around well separated centres (spread 0.1, centres 10 apart).
std::vector<float> blobs(const std::vector<int>& sizes, std::size_t numel, std::vector<double>& means) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 0.1f);
  std::vector<float> rows;
  means.assign(sizes.size() * numel, 0.0);
  for (std::size_t c = 0; c < sizes.size(); ++c) {
    for (int i = 0; i < sizes[c]; ++i) {
      for (std::size_t j = 0; j < numel; ++j) {
        const float v = static_cast<float>(10.0 * double(c) * (j % 2 == 0 ? 1 : -1)) + normal(rng);
        rows.push_back(v);
        means[c * numel + j] += double(v) / sizes[c];
      }
    }
  }
  return rows;
}

TEST(BackgroundKmeans, SeparatedBlobsGiveTheirMeansWeightedByTheirSizes) {
  std::vector<double> means;
  const std::vector<int> sizes = {50, 30, 20};
  const std::vector<float> rows = blobs(sizes, 4, means);
  const BackgroundSummary s = kmeans_background(rows, 4, 3, /*seed=*/1);
  ASSERT_EQ(s.weights.size(), 3U);
  ASSERT_EQ(s.centroids.size(), 12U);
  EXPECT_TRUE(s.converged);
  EXPECT_EQ(s.rows, 100);
  double total = 0;
  for (std::size_t c = 0; c < 3; ++c) {
    total += s.weights[c];
    const std::int64_t blob = static_cast<std::int64_t>(std::lround(std::fabs(s.centroids[c * 4]) / 10.0));
    ASSERT_TRUE(blob >= 0 && blob < 3);
    EXPECT_EQ(s.weights[c], sizes[static_cast<std::size_t>(blob)]);
    for (std::size_t j = 0; j < 4; ++j)
      EXPECT_NEAR(s.centroids[c * 4 + j], means[static_cast<std::size_t>(blob) * 4 + j], 1e-5)
          << c << "," << j;
  }
  EXPECT_EQ(total, 100);
  // Every row is labelled with its blob's centroid.
  std::size_t r = 0;
  for (std::size_t b = 0; b < 3; ++b)
    for (int i = 0; i < sizes[b]; ++i, ++r)
      EXPECT_NEAR(std::fabs(s.centroids[static_cast<std::size_t>(s.labels[r]) * 4]) / 10.0, double(b), 0.2);
  // The same seed, the same summary.
  EXPECT_EQ(kmeans_background(rows, 4, 3, 1).centroids, s.centroids);
}

TEST(BackgroundKmeans, FewerDistinctRowsThanKGivesThemWithTheirCounts) {
  const std::vector<float> rows = {1, 2, 1, 2, 5, 5, 1, 2, 5, 5, 0, 0};  // (1,2) x3, (5,5) x2, (0,0)
  const BackgroundSummary s = kmeans_background(rows, 2, 5, 0);
  ASSERT_EQ(s.weights.size(), 3U);
  double total = 0;
  for (std::size_t c = 0; c < 3; ++c) {
    total += s.weights[c];
    const float a = s.centroids[2 * c], b = s.centroids[2 * c + 1];
    if (a == 1)
      EXPECT_TRUE(b == 2 && s.weights[c] == 3);
    else if (a == 5)
      EXPECT_TRUE(b == 5 && s.weights[c] == 2);
    else
      EXPECT_TRUE(a == 0 && b == 0 && s.weights[c] == 1);
  }
  EXPECT_EQ(total, 6);
}

TEST(BackgroundKmeans, SklearnsKMeansFromTheSameStartAgrees) {
  // Overlapping clusters, so Lloyd's iterations have work to do.
  std::mt19937 rng(11);
  std::normal_distribution<float> normal;
  std::vector<float> rows;
  for (int i = 0; i < 300; ++i)
    for (int j = 0; j < 5; ++j) rows.push_back(normal(rng) + (i % 3 == 0 ? 1.5f : 0.0f) * float(j % 2));
  const BackgroundSummary s = kmeans_background(rows, 5, 7, 4);
  ASSERT_EQ(s.weights.size(), 7U);
  EXPECT_TRUE(s.converged);
  EXPECT_GT(s.iterations, 2);
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string rows_csv = (dir / "kmeans_rows.csv").string(),
                    init_csv = (dir / "kmeans_init.csv").string(),
                    result_csv = (dir / "kmeans_result.csv").string();
  char number[32];
  const auto write = [&](const std::string& path, const std::vector<float>& values, std::size_t width,
                         const std::vector<double>* lead) {
    std::ofstream out(path);
    for (std::size_t r = 0; r < values.size() / width; ++r) {
      if (lead) {
        std::snprintf(number, sizeof number, "%.17g", (*lead)[r]);
        out << number << ',';
      }
      for (std::size_t j = 0; j < width; ++j) {
        std::snprintf(number, sizeof number, "%.9g", double(values[r * width + j]));
        out << (j ? "," : "") << number;
      }
      out << '\n';
    }
  };
  write(rows_csv, rows, 5, nullptr);
  write(init_csv, s.initial, 5, nullptr);
  write(result_csv, s.centroids, 5, &s.weights);
  {
    std::ofstream out(result_csv, std::ios::app);
    for (std::size_t r = 0; r < s.labels.size(); ++r) out << (r ? "," : "") << s.labels[r];
    out << '\n';
  }
  const std::string command = "/usr/bin/python3 " + std::string(TFDEBUG_SOURCE_DIR) +
                              "/tests/interpret/check_kmeans.py " + rows_csv + " " + init_csv + " " +
                              result_csv;
  EXPECT_EQ(std::system(command.c_str()), 0);
}

double nonlinear_f(const std::vector<double>& x) {
  return x[0] * x[1] + std::tanh(x[2]) - 0.5 * x[3] * x[3] + x[0];
}

FunctionModel nonlinear() {
  return FunctionModel(
      4, 1, [](const std::vector<double>& x) { return std::vector<double>{nonlinear_f(x)}; },
      [](const std::vector<double>&, std::int64_t) { return std::vector<double>(4, 0.0); });
}

TEST(BackgroundKmeans, ShapleyOverTheWeightedSummaryIsEfficientAndEqualsRepeatedRows) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  std::vector<float> data;
  for (int i = 0; i < 400 * 4; ++i) data.push_back(normal(rng));
  const BackgroundSummary s = kmeans_background(data, 4, 5, 2);
  FunctionModel m = nonlinear();
  const std::vector<float> x = {0.7f, -1.2f, 2.0f, 0.4f};
  ShapleyOptions o;
  o.background = s.centroids;
  o.background_weights = s.weights;
  // Efficiency: the values sum to f(x) - the weighted mean of f over the centroids.
  double base = 0, total = 0;
  for (std::size_t c = 0; c < s.weights.size(); ++c) {
    const std::vector<double> b(s.centroids.begin() + static_cast<std::ptrdiff_t>(c * 4),
                                s.centroids.begin() + static_cast<std::ptrdiff_t>(c * 4 + 4));
    base += s.weights[c] * nonlinear_f(b);
    total += s.weights[c];
  }
  base /= total;
  const double fx = nonlinear_f(std::vector<double>(x.begin(), x.end()));
  for (const auto& a : {exact_shapley(m, x, 0, o), kernel_shap(m, x, 0, o), permutation_shap(m, x, 0, o)}) {
    double sum = 0;
    for (const double v : a.feature_values) sum += v;
    EXPECT_NEAR(sum, fx - base, 1e-5) << a.method;
  }
  // Integer weights are repeated rows: the same Shapley values as each centroid written
  // weights[c] times into an unweighted background.
  ShapleyOptions repeated;
  for (std::size_t c = 0; c < s.weights.size(); ++c)
    for (int k = 0; k < static_cast<int>(s.weights[c]); ++k)
      repeated.background.insert(repeated.background.end(),
                                 s.centroids.begin() + static_cast<std::ptrdiff_t>(c * 4),
                                 s.centroids.begin() + static_cast<std::ptrdiff_t>(c * 4 + 4));
  const ShapleyAttribution weighted = exact_shapley(m, x, 0, o);
  const ShapleyAttribution plain = exact_shapley(m, x, 0, repeated);
  for (std::size_t j = 0; j < 4; ++j)
    EXPECT_NEAR(weighted.feature_values[j], plain.feature_values[j], 1e-5) << j;
  // And the summary costs 5 rows a coalition where the data costs 400.
  EXPECT_EQ(weighted.evaluations * 80, plain.evaluations);
}

TEST(BackgroundKmeans, BadInputIsAClearError) {
  const std::vector<float> rows = {1, 2, 3, 4};
  EXPECT_THROW(kmeans_background(rows, 2, 0), Error);
  EXPECT_THROW(kmeans_background(rows, 3, 1), Error);  // not whole rows
  EXPECT_THROW(kmeans_background(std::vector<float>{1, NAN}, 2, 1), Error);
  FunctionModel m = nonlinear();
  ShapleyOptions o;
  o.background = {0, 0, 0, 0, 1, 1, 1, 1};
  o.background_weights = {1};
  const std::vector<float> x = {1, 1, 1, 1};
  EXPECT_THROW(kernel_shap(m, x, 0, o), Error);
  o.background_weights = {1, -1};
  EXPECT_THROW(kernel_shap(m, x, 0, o), Error);
  o.background_weights = {0, 0};
  EXPECT_THROW(kernel_shap(m, x, 0, o), Error);
}

}  // namespace
}  // namespace tfdebug::interpret
