// The [A] tier of interpretability models (model.hpp): a model that shows its attention, every
// layer and head, for one example, and runs with heads masked. Attention analysis, Attention
// Rollout and Flow (attention.hpp, attention_rollout.hpp) read AttentionMaps; head importance
// and the `attention-rollout` attribution call the model through this tier.
//
//   class Tiny : public tfdebug::interpret::AttentionModel {
//     ... input_shape, output_size, forward (the [F] tier) ...
//     AttentionMaps attention(std::span<const float> x) override { ... }
//     void forward_with_heads(std::span<const float> x, std::span<const float> head_scale,
//                             std::span<float> outputs) override { ... }
//   };
//   const AttentionMaps maps = model.attention(x);
//   const double w = maps.at(/*layer=*/1, /*head=*/0, /*query=*/5, /*key=*/4);
//
// tfdebug::torch::TorchAttentionModel serves a LibTorch module this way (attention_capture.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tfdebug/interpret/model.hpp"

namespace tfdebug::interpret {

// Self-attention probabilities of one example: [layers][heads][tokens][tokens], row-major; row i
// (query i) is a distribution over keys and sums to 1. Every layer has `heads` heads.
struct AttentionMaps {
  std::vector<std::string> layers;  // one name a layer (a module path: "blocks.0.attn")
  std::int64_t heads = 0;
  std::int64_t tokens = 0;
  std::vector<double> weights;

  std::int64_t layer_count() const { return static_cast<std::int64_t>(layers.size()); }
  std::size_t index(std::int64_t layer, std::int64_t head, std::int64_t query, std::int64_t key) const {
    return static_cast<std::size_t>(((layer * heads + head) * tokens + query) * tokens + key);
  }
  double at(std::int64_t layer, std::int64_t head, std::int64_t query, std::int64_t key) const {
    return weights[index(layer, head, query, key)];
  }
  // One head's [tokens][tokens] matrix.
  std::span<const double> head(std::int64_t layer, std::int64_t head_index) const {
    return std::span<const double>(weights).subspan(index(layer, head_index, 0, 0),
                                                    static_cast<std::size_t>(tokens * tokens));
  }
};

// Checks the invariants above (sizes agree, values finite and in [0, 1], rows sum to 1 within
// 1e-3); tfdebug::Error naming the first layer, head and query that breaks one.
void check_attention(const AttentionMaps& maps);

// [A]: attention maps and outputs with heads masked, for one example x (example_size values).
class AttentionModel : public ForwardModel {
 public:
  virtual AttentionMaps attention(std::span<const float> x) = 0;
  // The outputs of x (output_size() values) with the attention probabilities of head h of layer
  // l multiplied by head_scale[l * heads + h] (1: as is, 0: the head masked), as Michel et al.
  // 2019 mask heads.
  virtual void forward_with_heads(std::span<const float> x, std::span<const float> head_scale,
                                  std::span<float> outputs) = 0;
};

}  // namespace tfdebug::interpret
