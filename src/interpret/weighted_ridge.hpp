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

// The same fit in parts, for rows that arrive a batch at a time (Note [Points beside the model],
// pipelined_batches.hpp): the sums of the rows and their weights (sum w, sum w z, sum w z z') as
// soon as the rows are drawn, those with the outputs (sum w y, sum w z y) when the model has
// answered, then the solve. Each sum adds its rows in order, so adding [0, n) at once or in
// batches, on one thread or two, gives the same bits as weighted_ridge.
class BinaryRidge {
 public:
  // data and weights: every row's, filled in by the time each batch is added (not copied).
  BinaryRidge(const BinaryRows& data, std::size_t features, std::span<const double> weights);
  void add_rows(std::size_t begin, std::size_t end);
  void add_outputs(std::span<const double> outputs, std::size_t begin, std::size_t end);
  // After both over every row. Its R^2 from the sums (Note [R^2 from the sums]).
  RidgeFit fit(double alpha);

 private:
  BinaryRows data_;
  std::size_t m_;
  std::span<const double> weights_;
  double wsum_ = 0, wy_ = 0;
  double y0_ = 0, wdy_ = 0, wdy2_ = 0;  // the first output; sum w (y - y0), sum w (y - y0)^2
  std::vector<double> wx_, ata_, aty_;
  std::vector<std::uint32_t> ones_rows_, ones_outputs_;  // per part: they may run on two threads
};

}  // namespace tfdebug::interpret::detail
