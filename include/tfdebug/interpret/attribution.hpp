// What an attribution method returns: one value per input element saying how much it moved the
// target output, with the facts to judge it by (the completeness delta, the outputs it is
// measured between, how many model evaluations it took).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace tfdebug::interpret {

struct Attribution {
  std::string method;               // kebab-case: "integrated-gradients", "kernel-shap", ...
  std::vector<std::int64_t> shape;  // one example's shape (the model's input_shape())
  std::vector<double> values;       // the attributions, row-major in `shape`
  double output = std::numeric_limits<double>::quiet_NaN();  // f(x), the target output
  double reference_output =
      std::numeric_limits<double>::quiet_NaN();  // f(baseline), or E[f] over a background
  // Completeness: sum(values) - (output - reference_output). NaN for a method that does not
  // promise it (Gradient x Input, SmoothGrad); near 0 for Integrated Gradients (up to the
  // quadrature's error, which a ReLU's kink makes large), exactly 0 for the Shapley methods.
  double delta = std::numeric_limits<double>::quiet_NaN();
  std::int64_t evaluations = 0;  // example rows the model evaluated (forward or gradient)
  std::vector<double> variance;  // sampling methods: the variance of each value's mean; else empty

  double sum() const { return std::accumulate(values.begin(), values.end(), 0.0); }
};

}  // namespace tfdebug::interpret
