// What every adversarial attack of tfdebug::robust shares: the goal (untargeted or targeted), the
// inputs' valid range and the features allowed to change, batching and the seed; and what each
// attack returns: per example the adversarial input, success, the perturbation's L0/L2/L-inf
// norms and the label's confidence before and after, with a summary over the batch
// (docs/robustness.md).
//
//   tfdebug::robust::AttackSettings s;
//   s.clip_min = 0; s.clip_max = 1;  // pixels
//   const auto r = tfdebug::robust::pgd(model, images, labels, s, {.eps = 0.1});
//   const auto summary = tfdebug::robust::summarize(r);  // success rate, L2 quantiles, ...
//
// The model is a classifier: output_size() >= 2 outputs per example, the logits (or any scores
// whose largest is the predicted class). Attacks need input gradients ([G]); a model with the [G+]
// tier (interpret/loss_gradient_model.hpp, e.g. tfdebug::torch::TorchModel) gives a loss's
// gradient in one backward pass, a plain GradientModel in one per class.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "tfdebug/interpret/model.hpp"

namespace tfdebug::robust {

struct AttackSettings {
  // Empty: untargeted (any class but the label). One class: every example's target. One per
  // example: each its own. A targeted attack succeeds when the prediction is the target.
  std::vector<std::int64_t> targets = {};
  // The valid range of every input element; adversarial inputs are clipped into it (and the
  // clean inputs must lie in it). Carlini-Wagner needs a finite range (its tanh change of variables).
  float clip_min = -std::numeric_limits<float>::infinity();
  float clip_max = std::numeric_limits<float>::infinity();
  // Empty: every element may change. Otherwise one flag per element of one example (non-zero: may
  // change); the attacks never touch the others.
  std::vector<std::uint8_t> mask = {};
  // At most this many examples in one model call (Note [Bounded batches]).
  std::int64_t max_batch = 64;
  // Random starts draw from stream (example, restart) of this seed (Note [Seeded streams]): the
  // result does not depend on max_batch.
  std::uint64_t seed = 0;
};

struct AttackResult {
  std::string attack;      // "fgsm", "pgd-linf", "pgd-l2", "cw-l2", "deepfool"
  std::int64_t numel = 0;  // elements of one example
  bool targeted = false;
  std::vector<float>
      adversarial;  // [n * numel]: the attack's output (the input itself when it found nothing better)
  std::vector<std::uint8_t> success;           // misclassified (untargeted) or the target (targeted)
  std::vector<std::int64_t> labels;            // the true labels given
  std::vector<std::int64_t> goal;              // untargeted: the label; targeted: the target
  std::vector<std::int64_t> predicted_before;  // argmax at the clean input
  std::vector<std::int64_t> predicted_after;   // argmax at the adversarial input
  // Softmax probability of `goal` at the clean and the adversarial input: an untargeted attack
  // lowers it, a targeted one raises it.
  std::vector<double> confidence_before;
  std::vector<double> confidence_after;
  std::vector<double> l0;    // perturbed elements
  std::vector<double> l2;    // ||x_adv - x||_2
  std::vector<double> linf;  // max |x_adv - x|
  std::int64_t queries = 0;  // example rows the model evaluated (forward or forward+backward)

  std::int64_t examples() const { return static_cast<std::int64_t>(success.size()); }
};

// min, quartiles, max and mean of a set of values (all zero when empty).
struct Distribution {
  std::int64_t count = 0;
  double min = 0, q25 = 0, median = 0, q75 = 0, max = 0, mean = 0;
};

struct AttackSummary {
  std::int64_t examples = 0;
  double success_rate = 0;     // fraction of examples where the attack succeeded
  double clean_accuracy = 0;   // predicted_before == label
  double robust_accuracy = 0;  // predicted_after == label
  // The perturbation norms of the successful examples.
  Distribution l0, l2, linf;
  double mean_confidence_before = 0, mean_confidence_after = 0;
  std::int64_t queries = 0;
};

AttackSummary summarize(const AttackResult& result);
Distribution distribution(std::span<const double> values);

}  // namespace tfdebug::robust
