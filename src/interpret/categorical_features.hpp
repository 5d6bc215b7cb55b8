// Categorical features of a counterfactual search (DiCE's): features that take one of a set of
// allowed values, from the training data's distinct values of that column (plus the input's own),
// compared by match or mismatch rather than by distance. Private to tfdebug::interpret.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret::detail {

struct Categorical {
  std::size_t feature = 0;
  std::vector<float> values;  // allowed, increasing
  std::size_t input = 0;      // the index of x's value in `values`
};

// The categorical features `indices` of x (n features) with their allowed values from `training`
// (rows of n); tfdebug::Error for an index outside [0, n), one given twice, or no training rows.
inline std::vector<Categorical> categorical_features(std::span<const float> x,
                                                     std::span<const float> training,
                                                     const std::vector<std::int64_t>& indices) {
  const std::size_t n = x.size();
  std::vector<Categorical> out;
  if (indices.empty()) return out;
  if (training.empty())
    throw Error("categorical features need training rows: their allowed values are the training data's");
  std::vector<bool> seen(n, false);
  for (const std::int64_t j : indices) {
    if (j < 0 || static_cast<std::size_t>(j) >= n)
      throw Error("categorical feature " + std::to_string(j) + " is not one of the input's " +
                  std::to_string(n));
    const auto jj = static_cast<std::size_t>(j);
    if (seen[jj]) throw Error("categorical feature " + std::to_string(j) + " is given twice");
    seen[jj] = true;
    Categorical c;
    c.feature = jj;
    for (std::size_t r = 0; r + n <= training.size(); r += n) c.values.push_back(training[r + jj]);
    c.values.push_back(x[jj]);
    for (const float v : c.values)
      if (!std::isfinite(v))
        throw Error("categorical feature " + std::to_string(j) + " has a non-finite value");
    std::sort(c.values.begin(), c.values.end());
    c.values.erase(std::unique(c.values.begin(), c.values.end()), c.values.end());
    c.input = static_cast<std::size_t>(std::find(c.values.begin(), c.values.end(), x[jj]) - c.values.begin());
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace tfdebug::interpret::detail
