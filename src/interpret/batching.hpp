// Model calls in chunks (Note [Bounded batches]): the methods describe their points one at a
// time (`make(i, row)` writes point i) and read the answers one at a time; at most `max_batch`
// points are in memory and in one model call, whatever the number of samples or steps.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tfdebug/core/error.hpp"
#include "tfdebug/interpret/model.hpp"

namespace tfdebug::interpret::detail {

// Note [Bounded batches]: Captum's IG evaluates n_steps x batch points at once unless told
// otherwise, and runs out of memory (captum#538, #245); GradientShap has no such option at all
// (captum#1350). Here every method takes `max_batch` and builds only that many points at a time.
class Batcher {
 public:
  Batcher(ForwardModel& model, std::int64_t max_batch) : model_(model), numel_(example_size(model)) {
    if (max_batch < 1) throw Error("max_batch must be at least 1, got " + std::to_string(max_batch));
    max_batch_ = max_batch;
    shape_ = model.input_shape();
    shape_.insert(shape_.begin(), 0);
  }

  std::int64_t numel() const { return numel_; }
  std::int64_t evaluations() const { return evaluations_; }

  // outputs of `rows` points: use(i, outputs of point i).
  template <class Make, class Use>
  void forward(std::int64_t rows, Make&& make, Use&& use) {
    const std::int64_t width = model_.output_size();
    for (std::int64_t start = 0; start < rows; start += max_batch_) {
      const std::int64_t n = std::min(max_batch_, rows - start);
      fill(start, n, make);
      outputs_.assign(static_cast<std::size_t>(n * width), 0.0f);
      model_.forward(view(n), outputs_);
      evaluations_ += n;
      for (std::int64_t i = 0; i < n; ++i)
        use(start + i, std::span<const float>(outputs_).subspan(static_cast<std::size_t>(i * width), width));
    }
  }

  // The target's score and gradient at `rows` points: use(i, score, gradient, point i itself).
  template <class Make, class Use>
  void gradient(std::int64_t rows, std::int64_t target, Make&& make, Use&& use) {
    auto* model = dynamic_cast<GradientModel*>(&model_);
    if (model == nullptr) throw Error("this method needs input gradients: the model is a ForwardModel only");
    for (std::int64_t start = 0; start < rows; start += max_batch_) {
      const std::int64_t n = std::min(max_batch_, rows - start);
      fill(start, n, make);
      outputs_.assign(static_cast<std::size_t>(n), 0.0f);
      gradients_.assign(static_cast<std::size_t>(n * numel_), 0.0f);
      model->gradient(view(n), target, outputs_, gradients_);
      evaluations_ += n;
      for (std::int64_t i = 0; i < n; ++i) {
        use(start + i, static_cast<double>(outputs_[static_cast<std::size_t>(i)]),
            std::span<const float>(gradients_).subspan(static_cast<std::size_t>(i * numel_), numel_),
            std::span<const float>(points_).subspan(static_cast<std::size_t>(i * numel_), numel_));
      }
    }
  }

 private:
  template <class Make>
  void fill(std::int64_t start, std::int64_t n, Make& make) {
    points_.resize(static_cast<std::size_t>(n * numel_));
    for (std::int64_t i = 0; i < n; ++i)
      make(start + i, std::span<float>(points_).subspan(static_cast<std::size_t>(i * numel_), numel_));
  }
  TensorView view(std::int64_t n) {
    shape_[0] = n;
    return TensorView(points_.data(), DType::f32, shape_);
  }

  ForwardModel& model_;
  std::int64_t numel_ = 0;
  std::int64_t max_batch_ = 1;
  std::int64_t evaluations_ = 0;
  std::vector<std::int64_t> shape_;
  std::vector<float> points_;
  std::vector<float> outputs_;
  std::vector<float> gradients_;
};

// Checks shared by the methods: `what` has `numel` elements, `target` is an output.
inline void check_example(const ForwardModel& model, std::span<const float> x, std::int64_t target) {
  const std::int64_t numel = example_size(model);
  if (static_cast<std::int64_t>(x.size()) != numel) {
    throw Error("the input has " + std::to_string(x.size()) + " values; the model takes " +
                std::to_string(numel) + " per example");
  }
  if (target < 0 || target >= model.output_size()) {
    throw Error("target " + std::to_string(target) + " is not an output of the model (it has " +
                std::to_string(model.output_size()) + ")");
  }
}

// Rows of `rows` (row-major): how many examples of `numel` elements; tfdebug::Error naming `what`
// when the size is not a multiple, or none when `required`.
inline std::int64_t row_count(std::span<const float> rows, std::int64_t numel, const char* what,
                              bool required) {
  if (rows.size() % static_cast<std::size_t>(numel) != 0) {
    throw Error(std::string(what) + " holds " + std::to_string(rows.size()) +
                " values, not a whole number of " + std::to_string(numel) + "-value examples");
  }
  const auto n = static_cast<std::int64_t>(rows.size()) / numel;
  if (required && n == 0) throw Error(std::string(what) + " is empty: at least one example is needed");
  return n;
}

}  // namespace tfdebug::interpret::detail
