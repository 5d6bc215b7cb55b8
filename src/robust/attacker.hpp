// What the attacks share (private): the checked problem (inputs, goals, range, mask), model calls
// that count queries and give a loss's gradient through the best tier the model has, and the
// result's bookkeeping (norms, predictions and confidences after the attack).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tfdebug/interpret/loss_gradient_model.hpp"
#include "tfdebug/robust/attack.hpp"

namespace tfdebug::robust::detail {

class Attacker {
 public:
  // tfdebug::Error for inputs that are not whole examples, labels or targets that are not
  // classes, a mask of the wrong size, a range that is empty or does not hold the inputs.
  Attacker(interpret::GradientModel& model, std::span<const float> inputs,
           std::span<const std::int64_t> labels, const AttackSettings& settings, std::string name);

  std::int64_t examples() const { return n_; }
  std::int64_t numel() const { return numel_; }
  std::int64_t classes() const { return classes_; }
  std::int64_t max_batch() const { return settings_.max_batch; }
  bool targeted() const { return targeted_; }
  std::int64_t goal(std::int64_t i) const { return goal_[static_cast<std::size_t>(i)]; }
  std::int64_t predicted_before(std::int64_t i) const { return before_[static_cast<std::size_t>(i)]; }
  std::span<const float> input(std::int64_t i) const {
    return inputs_.subspan(static_cast<std::size_t>(i * numel_), static_cast<std::size_t>(numel_));
  }
  // 1 where an element may change, else 0.
  std::span<const float> mask() const { return mask_; }
  float clip_min() const { return settings_.clip_min; }
  float clip_max() const { return settings_.clip_max; }
  float clip(float v) const {
    return v < settings_.clip_min ? settings_.clip_min : (v > settings_.clip_max ? settings_.clip_max : v);
  }
  std::uint64_t seed() const { return settings_.seed; }

  // Whether `logits` (one example's) reach example i's goal: argmax != label, or == target.
  bool reached(std::span<const float> logits, std::int64_t i) const;

  // One model call on `rows` contiguous examples (at most max_batch).
  void forward(std::span<const float> rows, std::span<float> outputs);
  // outputs, and gradients of the loss whose dL/d(outputs) `weigh` writes (interpret's [G+] tier,
  // or one [G] call per class when the model does not have it).
  void loss_gradient(std::span<const float> rows, const interpret::LossGradientModel::OutputWeights& weigh,
                     std::span<float> outputs, std::span<float> gradients);

  // The result for these adversarial inputs: success, norms, predictions and confidences (one
  // more forward pass over them).
  AttackResult finish(std::vector<float> adversarial);

 private:
  TensorView view(std::span<const float> rows);

  interpret::GradientModel& model_;
  std::span<const float> inputs_;
  std::span<const std::int64_t> labels_;
  AttackSettings settings_;
  std::string name_;
  std::int64_t n_ = 0, numel_ = 0, classes_ = 0;
  bool targeted_ = false;
  std::vector<std::int64_t> goal_, before_;
  std::vector<double> confidence_before_;
  std::vector<float> mask_;
  std::vector<std::int64_t> shape_;
  std::vector<float> scratch_;
  std::int64_t queries_ = 0;
};

std::int64_t argmax(std::span<const float> logits);
// Softmax probability of class c.
double softmax_at(std::span<const float> logits, std::int64_t c);
// The cross-entropy ascent weights for one example: dL/dz with L = CE(goal) (untargeted) or
// -CE(goal) (targeted), i.e. +-(softmax(z) - onehot(goal)).
void cross_entropy_weights(std::span<const float> logits, std::int64_t goal, bool targeted,
                           std::span<float> weights);

}  // namespace tfdebug::robust::detail
