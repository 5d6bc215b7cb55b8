// The [G+] tier: a model that gives, in one forward and one backward pass, the input gradient of
// a loss of its outputs (a vector-Jacobian product). Adversarial attacks need the gradient of a
// cross-entropy or a logit margin, not of one output: with [G] alone that costs one backward per
// class; with this tier, one per batch.
//
// The caller chooses the loss after seeing the outputs: `weigh` receives the batch's outputs and
// writes dL/d(output) for each example; the model back-propagates those weights.
//
//   class Linear : public tfdebug::interpret::LossGradientModel {
//     ...  // input_shape, output_size, forward, gradient as for GradientModel
//     void loss_gradient(const TensorView& x, const OutputWeights& weigh, std::span<float> outputs,
//                        std::span<float> gradients) override {
//       // outputs = W x + b; weigh(outputs, weights); gradients[i] = W^T weights[i]
//     }
//   };
#pragma once

#include <functional>
#include <span>

#include "tfdebug/interpret/model.hpp"

namespace tfdebug::interpret {

class LossGradientModel : public GradientModel {
 public:
  // weigh(outputs, weights): both [n * output_size()], row-major; writes weights[i * k + c] =
  // dL/d output c of example i, treated as constants by the backward pass.
  using OutputWeights = std::function<void(std::span<const float> outputs, std::span<float> weights)>;

  // For the inputs.shape(0) examples: outputs as forward() gives them, and gradients[i * numel + j]
  // = sum over c of weights[i * k + c] * d output c of example i / d input element j.
  virtual void loss_gradient(const TensorView& inputs, const OutputWeights& weigh, std::span<float> outputs,
                             std::span<float> gradients) = 0;
};

}  // namespace tfdebug::interpret
