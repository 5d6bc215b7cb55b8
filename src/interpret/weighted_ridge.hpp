// The surrogate every LIME variant fits (tabular, text, image): Ridge(alpha) with an intercept and
// sample weights, as sklearn's Ridge(alpha).fit(X, y, sample_weight=w), and its weighted R^2.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace tfdebug::interpret::detail {

struct RidgeFit {
  std::vector<double> coefficients;
  double intercept = 0;
  double r2 = 0;                // weighted R^2 on the rows (sklearn's score with the weights)
  double local_prediction = 0;  // the fit at row 0 (LIME's x)
};

// data: rows x features, row-major; outputs and weights: one per row.
RidgeFit weighted_ridge(std::span<const double> data, std::size_t features, std::span<const double> outputs,
                        std::span<const double> weights, double alpha);

}  // namespace tfdebug::interpret::detail
