// HotFlip token substitution (token_attack.hpp) on a model linear in the one-hot tokens, where
// the one-hot gradient is exact and every substitution can be tried by brute force.
#include "tfdebug/robust/token_attack.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "tfdebug/core/error.hpp"

namespace tfdebug::robust {
namespace {

constexpr std::int64_t kLength = 6, kVocab = 7, kClasses = 4;

// logits_c = sum_i W[i][ids_i][c]: a position-dependent bag of tokens.
class LinearTokenModel : public TokenModel {
 public:
  explicit LinearTokenModel(std::uint32_t seed) : w_(kLength * kVocab * kClasses) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal(0, 1);
    for (auto& v : w_) v = normal(rng);
  }
  std::int64_t vocabulary() const override { return kVocab; }
  std::int64_t output_size() const override { return kClasses; }
  void forward(std::span<const std::int64_t> ids, std::int64_t length, std::span<float> logits) override {
    const auto n = static_cast<std::int64_t>(ids.size()) / length;
    for (std::int64_t e = 0; e < n; ++e) {
      for (std::int64_t c = 0; c < kClasses; ++c) {
        float z = 0;
        for (std::int64_t i = 0; i < length; ++i)
          z += weight(i, ids[static_cast<std::size_t>(e * length + i)], c);
        logits[static_cast<std::size_t>(e * kClasses + c)] = z;
      }
    }
    forwards += n;
  }
  void one_hot_gradient(std::span<const std::int64_t> ids, std::int64_t label, std::span<float> logits,
                        std::span<float> gradient) override {
    forward(ids, kLength, logits);
    --forwards;
    ++backwards;
    const float top = *std::max_element(logits.begin(), logits.end());
    double sum = 0;
    for (const float z : logits) sum += std::exp(z - top);
    for (std::int64_t i = 0; i < kLength; ++i) {
      for (std::int64_t v = 0; v < kVocab; ++v) {
        double g = 0;
        for (std::int64_t c = 0; c < kClasses; ++c) {
          const double p = std::exp(logits[static_cast<std::size_t>(c)] - top) / sum;
          g += (p - (c == label ? 1 : 0)) * weight(i, v, c);
        }
        gradient[static_cast<std::size_t>(i * kVocab + v)] = static_cast<float>(g);
      }
    }
  }
  float weight(std::int64_t i, std::int64_t v, std::int64_t c) const {
    return w_[static_cast<std::size_t>((i * kVocab + v) * kClasses + c)];
  }
  std::int64_t forwards = 0, backwards = 0;

 private:
  std::vector<float> w_;
};

std::int64_t argmax(std::span<const float> z) {
  return std::max_element(z.begin(), z.end()) - z.begin();
}

double loss(std::span<const float> z, std::int64_t label) {
  const float top = *std::max_element(z.begin(), z.end());
  double sum = 0;
  for (const float v : z) sum += std::exp(v - top);
  return -(z[static_cast<std::size_t>(label)] - top - std::log(sum));
}

std::vector<std::int64_t> random_ids(std::int64_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int64_t> id(0, kVocab - 1);
  std::vector<std::int64_t> ids(static_cast<std::size_t>(n * kLength));
  for (auto& v : ids) v = id(rng);
  return ids;
}

std::vector<std::int64_t> predictions(LinearTokenModel& model, const std::vector<std::int64_t>& ids) {
  const auto n = static_cast<std::int64_t>(ids.size()) / kLength;
  std::vector<float> z(static_cast<std::size_t>(n * kClasses));
  model.forward(ids, kLength, z);
  std::vector<std::int64_t> out;
  for (std::int64_t e = 0; e < n; ++e)
    out.push_back(
        argmax(std::span<const float>(z).subspan(static_cast<std::size_t>(e * kClasses), kClasses)));
  return out;
}

TEST(TokenAttack, WithEveryCandidateTheFirstStepIsTheBestSingleSubstitution) {
  LinearTokenModel model(3);
  const auto ids = random_ids(40, 5);
  const auto labels = predictions(model, ids);
  TokenAttackOptions o;
  o.max_changes = 1;
  o.candidates = kLength * kVocab;
  const TokenAttackResult r = hotflip(model, ids, kLength, labels, o);
  ASSERT_EQ(r.examples.size(), 40U);
  std::int64_t flipped = 0;
  for (std::size_t e = 0; e < 40; ++e) {
    const std::vector<std::int64_t> x(ids.begin() + static_cast<std::ptrdiff_t>(e * kLength),
                                      ids.begin() + static_cast<std::ptrdiff_t>((e + 1) * kLength));
    // Brute force: a flip of highest loss if any flips, else the highest loss.
    double best_loss = -1;
    bool best_flips = false;
    std::vector<std::int64_t> best;
    for (std::int64_t i = 0; i < kLength; ++i) {
      for (std::int64_t v = 0; v < kVocab; ++v) {
        if (v == x[static_cast<std::size_t>(i)]) continue;
        auto y = x;
        y[static_cast<std::size_t>(i)] = v;
        std::vector<float> z(kClasses);
        model.forward(y, kLength, z);
        const bool flips = argmax(z) != labels[e];
        const double l = loss(z, labels[e]);
        if (best.empty() || (flips != best_flips ? flips : l > best_loss)) {
          best = y;
          best_loss = l;
          best_flips = flips;
        }
      }
    }
    const TokenAttackExample& ex = r.examples[e];
    EXPECT_EQ(ex.adversarial, best) << "example " << e;
    EXPECT_EQ(ex.success, best_flips);
    EXPECT_EQ(ex.changed, 1);
    EXPECT_EQ(ex.queries, 1 + 1 + kLength * (kVocab - 1));
    flipped += ex.success;
  }
  EXPECT_GT(flipped, 0);
  EXPECT_LT(flipped, 40);  // the test sees both outcomes
}

TEST(TokenAttack, ReportsWhatTheModelSaysOfTheAdversarialSequences) {
  LinearTokenModel model(11);
  const auto ids = random_ids(60, 12);
  const auto labels = predictions(model, ids);
  // Positions 0 and 3 of every sequence are fixed.
  std::vector<std::uint8_t> changeable(ids.size(), 1);
  for (std::size_t e = 0; e < 60; ++e) changeable[e * kLength] = changeable[e * kLength + 3] = 0;
  TokenAttackOptions o;
  o.max_changes = 3;
  o.candidates = 5;
  o.first_id = 1;
  o.changeable = changeable;
  o.max_batch = 2;
  model.forwards = model.backwards = 0;
  const TokenAttackResult r = hotflip(model, ids, kLength, labels, o);
  std::int64_t successes = 0, queries = 0;
  for (std::size_t e = 0; e < 60; ++e) {
    const TokenAttackExample& ex = r.examples[e];
    std::vector<float> z(kClasses);
    model.forward(ex.adversarial, kLength, z);
    EXPECT_EQ(ex.predicted_after, argmax(z));
    EXPECT_EQ(ex.success, argmax(z) != labels[e]);
    EXPECT_NEAR(ex.confidence_after, std::exp(-loss(z, labels[e])), 1e-6);
    EXPECT_EQ(ex.predicted_before, labels[e]);
    std::int64_t diff = 0;
    for (std::int64_t i = 0; i < kLength; ++i) {
      const bool changed =
          ex.adversarial[static_cast<std::size_t>(i)] != ids[e * kLength + static_cast<std::size_t>(i)];
      diff += changed;
      if (changed) {
        EXPECT_GE(ex.adversarial[static_cast<std::size_t>(i)], 1);
      }
    }
    EXPECT_EQ(ex.adversarial[0], ids[e * kLength]);
    EXPECT_EQ(ex.adversarial[3], ids[e * kLength + 3]);
    EXPECT_EQ(ex.changed, diff);
    EXPECT_EQ(static_cast<std::int64_t>(ex.positions.size()), diff);  // a position changes once
    EXPECT_LE(ex.changed, 3);
    if (!ex.success) {
      EXPECT_EQ(ex.changed, 3);  // it stops early only on success
    }
    EXPECT_EQ(ex.queries, 1 + ex.changed * (1 + 5));
    successes += ex.success;
    queries += ex.queries;
  }
  EXPECT_EQ(queries, r.queries);
  EXPECT_EQ(model.forwards + model.backwards - 60, r.queries);  // minus the 60 checks above
  EXPECT_DOUBLE_EQ(r.success_rate, successes / 60.0);
  EXPECT_DOUBLE_EQ(r.clean_accuracy, 1.0);
  EXPECT_DOUBLE_EQ(r.robust_accuracy, 1.0 - successes / 60.0);
  EXPECT_GT(successes, 30);
}

TEST(TokenAttack, MisclassifiedExamplesSucceedUnchanged) {
  LinearTokenModel model(4);
  const auto ids = random_ids(5, 6);
  auto labels = predictions(model, ids);
  for (auto& l : labels) l = (l + 1) % kClasses;
  const TokenAttackResult r = hotflip(model, ids, kLength, labels);
  for (std::size_t e = 0; e < 5; ++e) {
    EXPECT_TRUE(r.examples[e].success);
    EXPECT_EQ(r.examples[e].changed, 0);
    EXPECT_EQ(r.examples[e].queries, 1);
  }
  EXPECT_DOUBLE_EQ(r.clean_accuracy, 0);
}

TEST(TokenAttack, RejectsMalformedInput) {
  LinearTokenModel model(1);
  auto ids = random_ids(2, 2);
  const std::vector<std::int64_t> labels = {0, 1};
  EXPECT_THROW(hotflip(model, ids, 5, labels), Error);                                 // not whole sequences
  EXPECT_THROW(hotflip(model, ids, kLength, std::vector<std::int64_t>{0}), Error);     // label count
  EXPECT_THROW(hotflip(model, ids, kLength, std::vector<std::int64_t>{0, 9}), Error);  // label range
  ids[3] = kVocab;
  EXPECT_THROW(hotflip(model, ids, kLength, labels), Error);  // id outside the vocabulary
}

}  // namespace
}  // namespace tfdebug::robust
