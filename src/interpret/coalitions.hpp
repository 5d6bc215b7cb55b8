// What the three Shapley methods share: the features (groups of input elements) that can change
// the output at all, and the value v(S) of many coalitions at once, all their masked background
// rows streamed through the model in max_batch chunks.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "batching.hpp"
#include "tfdebug/interpret/shapley.hpp"

namespace tfdebug::interpret::detail {

class Coalitions {
 public:
  Coalitions(ForwardModel& model, std::span<const float> x, std::int64_t target,
             const ShapleyOptions& options);

  // Features whose elements differ from some background row: only they are players (shap's
  // "varying" features); the others get 0.
  std::int64_t players() const { return static_cast<std::int64_t>(players_.size()); }
  std::int64_t features() const { return features_; }

  // v(S) for `count` coalitions given as `count` x players() bytes (1: the player is in S).
  std::vector<double> values(std::span<const std::uint8_t> masks, std::int64_t count);

  // The result: `player_values` (one per player) spread over the features and their elements.
  ShapleyAttribution result(const char* method, std::span<const double> player_values, double full,
                            double empty) const;

 private:
  Batcher batcher_;
  std::span<const float> x_;
  std::int64_t target_;
  std::vector<float> background_;
  std::vector<double> weights_;  // per background row, summing to 1
  std::int64_t rows_ = 0;
  std::vector<std::int64_t> group_;  // per element, its feature
  std::int64_t features_ = 0;
  std::vector<std::int64_t> players_;            // feature of each player
  std::vector<std::int64_t> player_of_feature_;  // -1 for a feature that does not vary
  std::vector<std::int64_t> player_of_element_;  // player_of_feature_ of each element's group
  std::vector<std::int64_t> group_size_;
  std::vector<std::int64_t> shape_;
};

}  // namespace tfdebug::interpret::detail
