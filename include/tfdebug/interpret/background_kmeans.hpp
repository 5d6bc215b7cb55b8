// A background set summarised by k-means (as shap.kmeans): k weighted centroids stand for n rows
// of data in the Shapley methods (ShapleyOptions::background and background_weights), so a
// coalition costs k model rows instead of n. Lloyd's algorithm from a seeded k-means++ start,
// run until no row changes cluster; the weights are the clusters' sizes (they sum to n).
//
//   const auto s = tfdebug::interpret::kmeans_background(rows, /*numel=*/30, /*k=*/10, /*seed=*/0);
//   tfdebug::interpret::ShapleyOptions o;
//   o.background = s.centroids;
//   o.background_weights = s.weights;
//
// Unlike shap.kmeans the centroids are not rounded to data values (that rounding makes the
// summary depend on the order of the columns' ties); a cluster left empty by Lloyd's iterations
// is dropped, so there may be fewer than k rows.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tfdebug::interpret {

struct BackgroundSummary {
  std::vector<float> centroids;      // clusters x numel, row-major
  std::vector<double> weights;       // one per centroid: its cluster's size
  std::vector<std::int64_t> labels;  // per input row, its centroid
  std::vector<float> initial;        // the k-means++ centres Lloyd's iterations started from
  std::int64_t rows = 0;             // n, the rows summarised
  int iterations = 0;                // Lloyd's iterations run
  bool converged = false;            // no row changed cluster in the last one
};

// `rows`: n x numel, row-major. k >= 1; when k >= the number of distinct rows, the summary is
// those rows with their counts. tfdebug::Error for bad shapes, k < 1 or non-finite values.
BackgroundSummary kmeans_background(std::span<const float> rows, std::int64_t numel, std::int64_t k,
                                    std::uint64_t seed = 0, int max_iterations = 300);

}  // namespace tfdebug::interpret
