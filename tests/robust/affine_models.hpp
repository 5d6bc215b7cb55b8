// Affine classifiers for the attack tests: logits z = W x + b (double precision inside), as a
// plain [G] GradientModel or with the [G+] loss-gradient tier, recording the largest batch.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include "tfdebug/interpret/loss_gradient_model.hpp"

namespace tfdebug::robust::testing {

class Affine : public interpret::GradientModel {
 public:
  // weights: [classes][inputs]
  Affine(std::vector<std::vector<double>> weights, std::vector<double> bias)
      : w_(std::move(weights)), b_(std::move(bias)) {}

  std::vector<std::int64_t> input_shape() const override { return {inputs()}; }
  std::int64_t output_size() const override { return static_cast<std::int64_t>(w_.size()); }
  std::int64_t inputs() const { return static_cast<std::int64_t>(w_[0].size()); }

  std::vector<double> logits(std::span<const float> x) const {
    std::vector<double> z(w_.size());
    for (std::size_t c = 0; c < w_.size(); ++c) {
      z[c] = b_[c];
      for (std::size_t j = 0; j < x.size(); ++j) z[c] += w_[c][j] * x[j];
    }
    return z;
  }
  std::int64_t predict(std::span<const float> x) const {
    const auto z = logits(x);
    return std::max_element(z.begin(), z.end()) - z.begin();
  }

  void forward(const TensorView& x, std::span<float> out) override {
    const std::int64_t n = note(x);
    for (std::int64_t i = 0; i < n; ++i) {
      const auto z = logits(row(x, i));
      for (std::size_t c = 0; c < z.size(); ++c)
        out[static_cast<std::size_t>(i) * z.size() + c] = static_cast<float>(z[c]);
    }
  }
  void gradient(const TensorView& x, std::int64_t target, std::span<float> scores,
                std::span<float> grads) override {
    const std::int64_t n = note(x);
    const auto d = static_cast<std::size_t>(inputs());
    for (std::int64_t i = 0; i < n; ++i) {
      scores[static_cast<std::size_t>(i)] =
          static_cast<float>(logits(row(x, i))[static_cast<std::size_t>(target)]);
      for (std::size_t j = 0; j < d; ++j)
        grads[static_cast<std::size_t>(i) * d + j] =
            static_cast<float>(w_[static_cast<std::size_t>(target)][j]);
    }
  }

  std::int64_t largest_batch = 0;

 protected:
  std::span<const float> row(const TensorView& x, std::int64_t i) const {
    return {static_cast<const float*>(x.data()) + i * inputs(), static_cast<std::size_t>(inputs())};
  }
  std::int64_t note(const TensorView& x) {
    largest_batch = std::max(largest_batch, x.shape(0));
    return x.shape(0);
  }
  std::vector<std::vector<double>> w_;
  std::vector<double> b_;
};

class AffineWithLoss : public interpret::LossGradientModel {
 public:
  explicit AffineWithLoss(Affine a) : a_(std::move(a)) {}
  std::vector<std::int64_t> input_shape() const override { return a_.input_shape(); }
  std::int64_t output_size() const override { return a_.output_size(); }
  void forward(const TensorView& x, std::span<float> out) override { a_.forward(x, out); }
  void gradient(const TensorView& x, std::int64_t t, std::span<float> s, std::span<float> g) override {
    a_.gradient(x, t, s, g);
  }
  void loss_gradient(const TensorView& x, const OutputWeights& weigh, std::span<float> out,
                     std::span<float> grads) override {
    const std::int64_t n = x.shape(0);
    const auto k = static_cast<std::size_t>(a_.output_size());
    const auto d = static_cast<std::size_t>(a_.inputs());
    a_.forward(x, out);
    std::vector<float> w(static_cast<std::size_t>(n) * k, 0.0f);
    weigh(std::span<const float>(out.data(), w.size()), w);
    std::vector<float> s(static_cast<std::size_t>(n)), g(static_cast<std::size_t>(n) * d);
    std::fill(grads.begin(), grads.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(n) * d),
              0.0f);
    for (std::size_t c = 0; c < k; ++c) {
      a_.gradient(x, static_cast<std::int64_t>(c), s, g);
      for (std::size_t i = 0; i < static_cast<std::size_t>(n); ++i)
        for (std::size_t j = 0; j < d; ++j) grads[i * d + j] += w[i * k + c] * g[i * d + j];
    }
  }
  Affine& inner() { return a_; }

 private:
  Affine a_;
};

// The binary classifier with logits (0, w.x + b): class 1 where f(x) = w.x + b > 0.
inline Affine binary(std::vector<double> w, double b) {
  return Affine({std::vector<double>(w.size(), 0.0), w}, {0.0, b});
}

}  // namespace tfdebug::robust::testing
