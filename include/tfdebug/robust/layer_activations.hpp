// A layer model's activations seen as a model of their own: the ForwardModel from the input to a
// layer's units that edge-case discovery takes (EdgeCaseOptions::layer, edge_cases.hpp), so that
// Mahalanobis distances and neuron coverage are measured on that layer rather than on the inputs.
//
//   auto net = tfdebug::torch::load_torchscript_layer("mlp.pt", {4}, "fc1");  // tier [L]
//   tfdebug::robust::LayerActivations units(net);  // outputs: fc1's activations, flattened
//   tfdebug::robust::EdgeCaseOptions o;
//   o.training = training_rows;
//   o.layer = &units;
//   const auto r = tfdebug::robust::find_edge_cases(net, rows, labels, o);  // r.coverage set
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tfdebug/interpret/layer_model.hpp"

namespace tfdebug::robust {

class LayerActivations : public interpret::ForwardModel {
 public:
  // `model` must outlive this view.
  explicit LayerActivations(interpret::LayerModel& model) : model_(model) {}
  std::vector<std::int64_t> input_shape() const override { return model_.input_shape(); }
  std::int64_t output_size() const override { return interpret::layer_size(model_); }
  void forward(const TensorView& inputs, std::span<float> outputs) override {
    model_.activations(inputs, outputs);
  }

 private:
  interpret::LayerModel& model_;
};

}  // namespace tfdebug::robust
