// Tier [L] of the model interface (tfdebug/interpret/model.hpp): one named layer's activations,
// and the gradient of one output with respect to them. What the CAM methods need (cam.hpp):
// Grad-CAM and Grad-CAM++ the gradients, Score-CAM only the activations and [F]'s forward.
//
//   class Cnn : public tfdebug::interpret::LayerModel {
//     std::vector<std::int64_t> input_shape() const override { return {1, 8, 8}; }
//     std::int64_t output_size() const override { return 10; }
//     void forward(const TensorView& x, std::span<float> out) override { ... }
//     std::string layer() const override { return "conv2"; }
//     std::vector<std::int64_t> layer_shape() const override { return {16, 4, 4}; }
//     void activations(const TensorView& x, std::span<float> a) override { ... }
//     void layer_gradient(const TensorView& x, std::int64_t target, std::span<float> scores,
//                         std::span<float> a, std::span<float> g) override { ... }
//   };
//
// Batches are as in model.hpp: f32, contiguous, [n, input_shape()...]. The layer's values come
// back row-major, layer_shape() per example, example after example. A layer model need not give
// input gradients: it derives from ForwardModel, not GradientModel (a framework may serve both).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tfdebug/core/tensor_view.hpp"
#include "tfdebug/interpret/model.hpp"

namespace tfdebug::interpret {

// [L]: outputs, one layer's activations and the target's gradient with respect to them.
class LayerModel : public ForwardModel {
 public:
  // The layer's name as the framework knows it ("conv2", "features.3"), for messages.
  virtual std::string layer() const = 0;
  // The layer's output for one example: [channels, height, width] for a convolution, or
  // [channels, length]; the first dimension is the channels the CAM methods weigh.
  virtual std::vector<std::int64_t> layer_shape() const = 0;
  // activations[i * layer_numel + j]: element j of the layer's output for example i. Must work
  // without gradients (Score-CAM calls only this and forward).
  virtual void activations(const TensorView& inputs, std::span<float> activations) = 0;
  // For each example i: scores[i] = output `target`; activations as above; gradients[i *
  // layer_numel + j] = the partial derivative of scores[i] with respect to activation j of
  // example i.
  virtual void layer_gradient(const TensorView& inputs, std::int64_t target, std::span<float> scores,
                              std::span<float> activations, std::span<float> gradients) = 0;
};

// The elements of one example's layer output: the product of layer_shape().
std::int64_t layer_size(const LayerModel& model);

}  // namespace tfdebug::interpret
