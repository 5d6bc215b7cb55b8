// Attention Rollout and Attention Flow (Abnar & Zuidema 2020, "Quantifying Attention Flow in
// Transformers"): how much each input token reaches each position of the last layer through
// every layer's attention and the residual connections, and `attention-rollout` as an
// attribution method over the input tokens.
//
//   const auto maps = model.attention(x);                 // attention_model.hpp
//   const auto r = attention_rollout(maps);               // [tokens][tokens], rows sum to 1
//   const auto f = attention_flow(maps);                  // max-flow values, [tokens][tokens]
//   const Attribution a = rollout_attribution(model, x);  // the last token's row of r
//
// Per layer, the heads are fused (mean, as the paper; vit-explain's max and min), optionally the
// smallest weights dropped (vit-explain's discard_ratio), the residual added and each row
// normalised: Â = rownorm(A + I). Rollout is R_1 = Â_1, R_l = Â_l·R_{l-1}. Each row is divided by
// its own sum: vit-explain's `a / a.sum(dim=-1)` divides columns by the rows' sums (no keepdim,
// vit-explain#16), which is not copied. Flow is the max-flow from a last-layer position to an
// input token over the layered graph whose edges (l, i) -> (l-1, j) have capacity Â_l[i][j].
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tfdebug/interpret/attention_model.hpp"
#include "tfdebug/interpret/attribution.hpp"

namespace tfdebug::interpret {

enum class HeadFusion : std::uint8_t { mean, max, min };

struct RolloutOptions {
  HeadFusion fusion = HeadFusion::mean;
  // The fraction of each fused layer's weights set to 0, the smallest first (vit-explain: 0.9);
  // the residual keeps every row non-empty.
  double discard_ratio = 0;
};

// Â of every layer: [layers][tokens][tokens], row-normalised fused attention plus the identity.
std::vector<double> residual_attention(const AttentionMaps& maps, const RolloutOptions& options = {});

// R_L: [tokens][tokens]; row i is how much of last-layer position i comes from each input token.
std::vector<double> attention_rollout(const AttentionMaps& maps, const RolloutOptions& options = {});

// The max-flow from last-layer position i to input token j, at [i][j] (each at most 1).
std::vector<double> attention_flow(const AttentionMaps& maps, const RolloutOptions& options = {});

// Max-flow by Edmonds-Karp (shortest augmenting paths) over a dense graph of `nodes` nodes:
// capacity[u * nodes + v] is the capacity of the edge u -> v (0: none).
double max_flow(std::span<const double> capacity, std::int64_t nodes, std::int64_t source, std::int64_t sink);

struct RolloutAttributionOptions {
  RolloutOptions rollout{};
  std::int64_t query = -1;   // the position explained; -1: the last token
  std::int64_t target = -1;  // the output reported; -1: the model's top output at x
};
// Method "attention-rollout": the rollout row of `query` over the input tokens (shape: the
// model's input shape, [tokens]); values sum to 1. output = f(x)[target]; delta NaN (rollout
// promises no completeness); one model evaluation for the output, one for the attention.
Attribution rollout_attribution(AttentionModel& model, std::span<const float> x,
                                const RolloutAttributionOptions& options = {});

}  // namespace tfdebug::interpret
