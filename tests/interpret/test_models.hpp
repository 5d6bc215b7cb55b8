// Small models with known attributions, as GradientModels: a function of one example (double
// precision inside) and its gradient, and a record of the largest batch each call received.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <span>
#include <vector>

#include "tfdebug/interpret/model.hpp"

namespace tfdebug::interpret::testing {

class FunctionModel : public GradientModel {
 public:
  using Function = std::function<std::vector<double>(const std::vector<double>&)>;  // outputs
  using Gradient = std::function<std::vector<double>(const std::vector<double>&, std::int64_t)>;

  FunctionModel(std::int64_t inputs, std::int64_t outputs, Function f, Gradient g)
      : inputs_(inputs), outputs_(outputs), f_(std::move(f)), g_(std::move(g)) {}

  std::vector<std::int64_t> input_shape() const override { return {inputs_}; }
  std::int64_t output_size() const override { return outputs_; }

  void forward(const TensorView& x, std::span<float> out) override {
    const std::int64_t n = x.shape(0);
    note(n);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::vector<double> y = f_(row(x, i));
      for (std::int64_t k = 0; k < outputs_; ++k)
        out[static_cast<std::size_t>(i * outputs_ + k)] = static_cast<float>(y[k]);
    }
  }
  void gradient(const TensorView& x, std::int64_t target, std::span<float> score,
                std::span<float> grad) override {
    const std::int64_t n = x.shape(0);
    note(n);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::vector<double> r = row(x, i);
      score[static_cast<std::size_t>(i)] = static_cast<float>(f_(r)[static_cast<std::size_t>(target)]);
      const std::vector<double> g = g_(r, target);
      for (std::int64_t j = 0; j < inputs_; ++j)
        grad[static_cast<std::size_t>(i * inputs_ + j)] = static_cast<float>(g[j]);
    }
  }

  std::int64_t largest_batch = 0;
  std::int64_t calls = 0;

 private:
  std::vector<double> row(const TensorView& x, std::int64_t i) const {
    const auto* p = static_cast<const float*>(x.data()) + i * inputs_;
    return std::vector<double>(p, p + inputs_);
  }
  void note(std::int64_t n) {
    largest_batch = std::max(largest_batch, n);
    ++calls;
  }
  std::int64_t inputs_, outputs_;
  Function f_;
  Gradient g_;
};

// f(x) = w . x + b, one output.
inline FunctionModel linear(std::vector<double> w, double b) {
  const auto n = static_cast<std::int64_t>(w.size());
  return FunctionModel(
      n, 1,
      [w, b](const std::vector<double>& x) {
        double s = b;
        for (std::size_t j = 0; j < w.size(); ++j) s += w[j] * x[j];
        return std::vector<double>{s};
      },
      [w](const std::vector<double>&, std::int64_t) { return w; });
}

// The reference's shared model R(x) = 2 relu(x1) + 2 relu(x2 - 1.5).
inline FunctionModel reference_r() {
  return FunctionModel(
      2, 1,
      [](const std::vector<double>& x) {
        return std::vector<double>{2 * std::max(x[0], 0.0) + 2 * std::max(x[1] - 1.5, 0.0)};
      },
      [](const std::vector<double>& x, std::int64_t) {
        return std::vector<double>{x[0] > 0 ? 2.0 : 0.0, x[1] > 1.5 ? 2.0 : 0.0};
      });
}

}  // namespace tfdebug::interpret::testing
