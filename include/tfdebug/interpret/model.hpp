// Models as the interpretability methods see them, in tiers (docs/interpretability.md): a method
// asks for the least it needs, so any framework can plug in by implementing that tier.
//
//   [F] ForwardModel   the outputs of a batch of examples (Shapley values, LIME, Score-CAM)
//   [G] GradientModel  also the gradient of one output with respect to the input (Integrated
//                      Gradients, SmoothGrad, Gradient SHAP, Expected Gradients, Gradient x Input)
//
// Inputs are batches of examples, f32, contiguous, row-major: a TensorView of shape
// [n, input_shape()...]. A method never hands a model more than its `max_batch` examples at once,
// so memory is bounded by that, not by the number of samples or integration steps.
//
//   class Linear : public tfdebug::interpret::GradientModel {
//     std::vector<std::int64_t> input_shape() const override { return {3}; }
//     std::int64_t output_size() const override { return 1; }
//     void forward(const TensorView& x, std::span<float> out) override { ... }
//     void gradient(const TensorView& x, std::int64_t target, std::span<float> score,
//                   std::span<float> grad) override { ... }
//   };
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tfdebug/core/tensor_view.hpp"

namespace tfdebug::interpret {

// [F]: outputs only.
class ForwardModel {
 public:
  virtual ~ForwardModel() = default;
  // One example's shape: [features], [channels, height, width], [tokens, width], ...
  virtual std::vector<std::int64_t> input_shape() const = 0;
  // Outputs per example: classes (logits or probabilities, as the model gives them), 1 for a
  // regression.
  virtual std::int64_t output_size() const = 0;
  // outputs[i * output_size() + k] = output k of example i, for the inputs.shape(0) examples.
  virtual void forward(const TensorView& inputs, std::span<float> outputs) = 0;
};

// [G]: outputs and the gradient of one of them with respect to the input.
class GradientModel : public ForwardModel {
 public:
  // For each example i: scores[i] = output `target`, and gradients[i * numel + j] = its partial
  // derivative with respect to input element j (numel: the elements of one example).
  virtual void gradient(const TensorView& inputs, std::int64_t target, std::span<float> scores,
                        std::span<float> gradients) = 0;
};

// The elements of one example of `model`: the product of input_shape().
std::int64_t example_size(const ForwardModel& model);

}  // namespace tfdebug::interpret
