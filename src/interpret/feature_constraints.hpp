// What a counterfactual may change (Wachter's and DiCE's): per-feature bounds and immutable
// features, checked against the input's size once for both. Private to tfdebug::interpret.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret::detail {

// Which of the input's n features are immutable; tfdebug::Error for bounds that are not of n
// values or an immutable index outside [0, n).
inline std::vector<bool> fixed_features(std::size_t n, const std::vector<float>& lower,
                                        const std::vector<float>& upper,
                                        const std::vector<std::int64_t>& immutable) {
  for (const auto* bound : {&lower, &upper}) {
    if (!bound->empty() && bound->size() != n)
      throw Error("bounds have " + std::to_string(bound->size()) + " values; the input has " +
                  std::to_string(n));
  }
  std::vector<bool> fixed(n, false);
  for (const std::int64_t j : immutable) {
    if (j < 0 || static_cast<std::size_t>(j) >= n)
      throw Error("immutable feature " + std::to_string(j) + " is not one of the input's " +
                  std::to_string(n));
    fixed[static_cast<std::size_t>(j)] = true;
  }
  return fixed;
}

}  // namespace tfdebug::interpret::detail
