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
// A word's number of ones, inline: the baseline x86-64 target has no popcnt instruction, and
// std::popcount there calls libgcc's (three times per LIME sample, it showed in profiles).
inline std::size_t count_ones(std::uint64_t w) {
  w -= (w >> 1) & 0x5555555555555555ULL;
  w = (w & 0x3333333333333333ULL) + ((w >> 2) & 0x3333333333333333ULL);
  w = (w + (w >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return static_cast<std::size_t>((w * 0x0101010101010101ULL) >> 56);
}

struct BinaryRows {
  std::span<const std::uint64_t> bits;
  std::size_t words = 1;
  std::size_t rows() const { return bits.size() / words; }
  std::span<const std::uint64_t> row(std::size_t s) const { return bits.subspan(s * words, words); }
};

// The same fit in parts, for rows that arrive a batch at a time (Note [Points beside the model],
// pipelined_batches.hpp): the rows are only read by add_products(); the sums with the outputs (sum w y,
// sum w z y) are added as the model answers, each adding its rows in order, so adding [0, n) at
// once or in batches, on one thread or two, gives the same bits.
//
// A row's weight is a function of its number of ones (LIME's kernel on the distance to x, whose
// row is all ones): weight_by_ones[k] for a row of k ones, k = 0 .. features. fit() sums
// sum w z z' exactly per weight (Note [Products by weight class]).
class BinaryRidge {
 public:
  BinaryRidge(const BinaryRows& data, std::size_t features, std::span<const double> weight_by_ones);
  void add_outputs(std::span<const double> outputs, std::size_t begin, std::size_t end);
  // sum w, sum w z and sum w z z', once every row is in (fit() makes them if nobody has): they
  // need no outputs, so LIME's second thread makes them while the model answers the last batch.
  void add_products();
  // After add_outputs over every row. Its R^2 from the sums (Note [R^2 from the sums]).
  RidgeFit fit(double alpha);

 private:
  BinaryRows data_;
  std::size_t m_;
  std::span<const double> weight_by_ones_;
  bool products_done_ = false;
  double wsum_ = 0, wy_ = 0;
  std::vector<double> wx_, ata_;
  double y0_ = 0, wdy_ = 0, wdy2_ = 0;  // the first output; sum w (y - y0), sum w (y - y0)^2
  std::vector<double> aty_;
  std::vector<std::uint32_t> ones_outputs_;
};

}  // namespace tfdebug::interpret::detail
