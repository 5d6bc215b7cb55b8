// The surrogate every LIME variant fits (tabular, text, image): Ridge(alpha) with an intercept and
// sample weights, as sklearn's Ridge(alpha).fit(X, y, sample_weight=w), and its weighted R^2.
#pragma once

#include <cstddef>
#include <cstdint>
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

// 0/1 rows as bits (tabular LIME's discretised neighbourhood): row s is words [s * words,
// (s + 1) * words) of `bits`, feature j bit j % 64 of word j / 64. The same fit as weighted_ridge
// on the dense rows, in one pass over the ones (no rows x features matrix).
struct BinaryRows {
  std::span<const std::uint64_t> bits;
  std::size_t words = 1;
  std::size_t rows() const { return bits.size() / words; }
  std::span<const std::uint64_t> row(std::size_t s) const { return bits.subspan(s * words, words); }
};

RidgeFit weighted_ridge(const BinaryRows& data, std::size_t features, std::span<const double> outputs,
                        std::span<const double> weights, double alpha);

}  // namespace tfdebug::interpret::detail
