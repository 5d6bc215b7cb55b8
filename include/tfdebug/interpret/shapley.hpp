// Shapley values from outputs only ([F], tfdebug/interpret/model.hpp): how the target output of
// `x` is shared among its features, a coalition S valued as v(S) = the mean (weighted, with
// background_weights) over background rows b of f(x on S, b elsewhere). All three are efficient: the values
// sum to v(all) - v(none) exactly (delta is rounding only).
//
//   exact_shapley      every coalition (2^M of them; M <= ShapleyOptions::max_exact_features)
//   permutation_shap   random feature orders, each walked forward and back (antithetic)
//   kernel_shap        a weighted least-squares fit with the Shapley kernel, whole coalition
//                      sizes enumerated while the budget allows, the rest sampled in
//                      complementary pairs; equal to exact_shapley when every coalition fits
//
//   tfdebug::interpret::ShapleyOptions o;
//   o.background = rows;                  // n rows of the data (or a summary of it), row-major
//   const auto a = tfdebug::interpret::kernel_shap(model, x, /*target=*/1, o);
//
// Features are the input's elements, or groups of them (`groups`: a feature index per element:
// a token's width, a superpixel). Every masked row of the background for many coalitions goes to
// the model in one call of at most `max_batch` examples.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tfdebug/interpret/attribution.hpp"
#include "tfdebug/interpret/model.hpp"

namespace tfdebug::interpret {

struct ShapleyOptions {
  std::vector<float> background;  // rows (row-major, each one example); empty: one row of zeros
  // One weight per background row (a k-means summary's cluster sizes, background_kmeans.hpp):
  // v(S) is the weighted mean over the rows. Empty: equal weights.
  std::vector<double> background_weights;
  std::vector<std::int64_t> groups;  // per input element, its feature 0..M-1; empty: one per element
  std::int64_t max_batch = 256;      // example rows per model call
  std::uint64_t seed = 0;            // permutation_shap, kernel_shap
  // permutation_shap: rows budget as shap's max_evals: max_evals / (2M + 1) permutations (at least 1).
  std::int64_t max_evals = 500;
  // kernel_shap: coalitions to evaluate; 0 = shap's "auto", 2M + 2048, at most 2^M - 2.
  std::int64_t samples = 0;
  int max_exact_features = 20;  // exact_shapley refuses more (2^M coalitions)
};

// `feature_values` holds one value per feature (group); `values`, one per input element, shares
// each group's value equally among its elements, so that both sum to the output change.
struct ShapleyAttribution : Attribution {
  std::vector<double> feature_values;  // one per feature (group), summing to the output change
};

ShapleyAttribution exact_shapley(ForwardModel& model, std::span<const float> x, std::int64_t target,
                                 const ShapleyOptions& options = {});
ShapleyAttribution permutation_shap(ForwardModel& model, std::span<const float> x, std::int64_t target,
                                    const ShapleyOptions& options = {});
ShapleyAttribution kernel_shap(ForwardModel& model, std::span<const float> x, std::int64_t target,
                               const ShapleyOptions& options = {});

}  // namespace tfdebug::interpret
