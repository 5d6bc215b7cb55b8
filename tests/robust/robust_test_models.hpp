// Classifiers with known answers for robust's tests, built on interpret's FunctionModel.
#pragma once

#include <vector>

#include "../interpret/test_models.hpp"

namespace tfdebug::robust::testing {

using interpret::testing::FunctionModel;

// Two outputs {0, w.x + b}: class 1 when w.x + b > 0; gradients exact.
inline FunctionModel linear_classifier(std::vector<double> w, double b) {
  const auto n = static_cast<std::int64_t>(w.size());
  return FunctionModel(
      n, 2,
      [w, b](const std::vector<double>& x) {
        double f = b;
        for (std::size_t j = 0; j < w.size(); ++j) f += w[j] * x[j];
        return std::vector<double>{0, f};
      },
      [w](const std::vector<double>&, std::int64_t t) {
        return t == 1 ? w : std::vector<double>(w.size(), 0.0);
      });
}

}  // namespace tfdebug::robust::testing
