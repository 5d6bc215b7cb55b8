// A discrete adversarial attack on token sequences: greedy token substitution guided by the
// gradient of the loss with respect to the one-hot tokens (HotFlip, Ebrahimi et al. 2018), each
// step's candidates checked by the model (docs/robustness.md, "Attacking token sequences").
//
//   tfdebug::robust::TokenAttackOptions o;
//   o.max_changes = 3;     // the L0 budget: tokens changed at most
//   o.candidates = 10;     // substitutions evaluated per step, the best first-order ones
//   const auto r = tfdebug::robust::hotflip(model, ids, length, labels, o);
//   for (const auto& e : r.examples) std::printf("%d %lld\n", e.success, (long long)e.changed);
//
// Token ids are discrete: a continuous step on them (FGSM, PGD) gives no token. Here every
// adversarial example is a real sequence of ids; its size is the number of tokens changed.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tfdebug::robust {

// A classifier of token sequences (for a language model: the next-token logits at the last
// position). e = onehot(ids) E for some embedding E makes the one-hot gradient E g per position.
class TokenModel {
 public:
  virtual ~TokenModel() = default;
  virtual std::int64_t vocabulary() const = 0;
  virtual std::int64_t output_size() const = 0;
  // ids: n sequences of `length` ids, row-major; logits: n x output_size.
  virtual void forward(std::span<const std::int64_t> ids, std::int64_t length, std::span<float> logits) = 0;
  // One sequence: the gradient of the cross-entropy of `label` with respect to the one-hot
  // encoding of each position, [length, vocabulary] row-major; `logits` its output_size logits.
  virtual void one_hot_gradient(std::span<const std::int64_t> ids, std::int64_t label,
                                std::span<float> logits, std::span<float> gradient) = 0;
};

struct TokenAttackOptions {
  std::int64_t max_changes = 3;  // tokens changed at most (the L0 budget)
  std::int64_t candidates = 10;  // substitutions checked by the model per step
  std::int64_t first_id = 0;     // substitutes are ids in [first_id, vocabulary)
  // n x length flags, 1: this position may change; empty: every position may.
  std::span<const std::uint8_t> changeable;
  std::int64_t max_batch = 64;
};

struct TokenAttackExample {
  bool success = false;                 // the prediction is no longer the label
  std::int64_t changed = 0;             // L0: positions whose token differs
  std::vector<std::int64_t> positions;  // in the order changed
  std::vector<std::int64_t> adversarial;
  std::int64_t predicted_before = 0, predicted_after = 0;
  double confidence_before = 0, confidence_after = 0;  // softmax probability of the label
  std::int64_t queries = 0;  // sequences evaluated (a forward, or a forward and backward, each)
};

struct TokenAttackResult {
  std::vector<TokenAttackExample> examples;
  double success_rate = 0, clean_accuracy = 0, robust_accuracy = 0;
  std::int64_t queries = 0;
};

// Untargeted: each step scores every allowed substitution (position i to id v) by the first-order
// change of the loss, g[i][v] - g[i][ids_i], evaluates the `candidates` best with the model and
// keeps the one of highest loss; it stops at the first misclassification or after max_changes.
// A position changes at most once. Examples already misclassified succeed with no change.
// tfdebug::Error on malformed ids, labels or options.
TokenAttackResult hotflip(TokenModel& model, std::span<const std::int64_t> ids, std::int64_t length,
                          std::span<const std::int64_t> labels, const TokenAttackOptions& options = {});

}  // namespace tfdebug::robust
