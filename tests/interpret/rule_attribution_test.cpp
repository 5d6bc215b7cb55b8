// The rule methods over a hand-written [H] model: the reference's R(x) = 2 relu(x1) +
// 2 relu(x2 - 1.5) with its rescale multipliers written out, so that what is checked here is how
// deeplift, deeplift_shap, lrp and guided_backprop turn modified gradients into attributions
// (the LibTorch rules themselves: tests/torch/rule_model_test.cpp).
#include "tfdebug/interpret/rule_attribution.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

double relu(double v) {
  return std::max(v, 0.0);
}

LrpRule rule_of(LrpRuleKind kind) {
  LrpRule r;
  r.kind = kind;
  return r;
}

class RescaleR : public RuleModel {
 public:
  std::vector<std::int64_t> input_shape() const override { return {2}; }
  std::int64_t output_size() const override { return 1; }
  void forward(const TensorView& x, std::span<float> out) override {
    for (std::int64_t i = 0; i < x.shape(0); ++i) out[std::size_t(i)] = float(f(row(x, i)));
  }
  void gradient(const TensorView& x, std::int64_t, std::span<float> scores, std::span<float> grads) override {
    for (std::int64_t i = 0; i < x.shape(0); ++i) {
      const auto r = row(x, i);
      scores[std::size_t(i)] = float(f(r));
      grads[std::size_t(2 * i)] = r[0] > 0 ? 2.0f : 0.0f;
      grads[std::size_t(2 * i + 1)] = r[1] > 1.5 ? 2.0f : 0.0f;
    }
  }
  void rule_gradient(const TensorView& x, const TensorView* references, std::int64_t,
                     const BackwardRules& rules, std::span<float> scores, std::span<float> reference_scores,
                     std::span<float> grads) override {
    largest_batch = std::max(largest_batch, x.shape(0));
    last = rules.propagation;
    gradient(x, 0, scores, grads);
    if (rules.propagation != Propagation::deeplift_rescale) return;
    for (std::int64_t i = 0; i < x.shape(0); ++i) {
      const auto a = row(x, i), b = row(*references, i);
      reference_scores[std::size_t(i)] = float(f(b));
      const double z[2] = {a[0], a[1] - 1.5}, zr[2] = {b[0], b[1] - 1.5};
      for (int j = 0; j < 2; ++j) {
        if (std::abs(z[j] - zr[j]) >= rules.deeplift_epsilon)
          grads[std::size_t(2 * i + j)] = float(2 * (relu(z[j]) - relu(zr[j])) / (z[j] - zr[j]));
      }
    }
  }
  std::int64_t largest_batch = 0;
  Propagation last = Propagation::lrp;

 private:
  static double f(const std::vector<double>& x) { return 2 * relu(x[0]) + 2 * relu(x[1] - 1.5); }
  static std::vector<double> row(const TensorView& x, std::int64_t i) {
    const auto* p = static_cast<const float*>(x.data()) + 2 * i;
    return {p[0], p[1]};
  }
};

// Captum's test_relu_deeplift_exact_match: (2, 1) with a delta of exactly 0.
TEST(RuleAttribution, DeepLiftOnTheReferenceModel) {
  RescaleR model;
  const std::vector<float> x = {1, 2};
  const Attribution a = deeplift(model, x, 0);
  EXPECT_EQ(a.method, "deeplift");
  EXPECT_EQ(a.values, (std::vector<double>{2, 1}));
  EXPECT_EQ(a.output, 3);
  EXPECT_EQ(a.reference_output, 0);
  EXPECT_EQ(a.delta, 0);
  EXPECT_EQ(a.evaluations, 2);
}

// DeepLiftShap: the mean of DeepLIFT over the baselines, in calls of at most max_batch pairs.
TEST(RuleAttribution, DeepLiftShapIsTheMeanOverBaselines) {
  RescaleR model;
  const std::vector<float> x = {1, 2};
  DeepLiftShapOptions o;
  o.baselines = {0, 0, -1, 3, 0.5f, 1};  // f = 0, 3, 1
  o.max_batch = 2;
  const Attribution a = deeplift_shap(model, x, 0, o);
  // Against (0, 0): (2, 1). Against (-1, 3): x1 m = 2 (1 - 0) / (1 + 1) = 1, (1 + 1) * 1 = 2;
  // x2 z = 0.5 vs 1.5, m = 2, (2 - 3) * 2 = -2.
  // Against (0.5, 1): x1 m = 2, (0.5) * 2 = 1; x2 z = 0.5 vs -0.5, m = 2 * 0.5 / 1 = 1, 1 * 1 = 1.
  EXPECT_DOUBLE_EQ(a.values[0], (2.0 + 2.0 + 1.0) / 3);
  EXPECT_DOUBLE_EQ(a.values[1], (1.0 - 2.0 + 1.0) / 3);
  EXPECT_DOUBLE_EQ(a.reference_output, (0.0 + 3.0 + 1.0) / 3);
  EXPECT_NEAR(a.delta, 0, 1e-12);
  EXPECT_EQ(model.largest_batch, 2);
  EXPECT_EQ(a.method, "deeplift-shap");
}

// LRP's relevance is x times the model's modified gradient; delta compares its sum with f(x).
TEST(RuleAttribution, LrpIsInputTimesTheRuleGradient) {
  RescaleR model;
  const std::vector<float> x = {1, 2};
  const Attribution a = lrp(model, x, 0);
  EXPECT_EQ(model.last, Propagation::lrp);
  EXPECT_EQ(a.values, (std::vector<double>{2, 4}));  // x * (2, 2)
  EXPECT_EQ(a.output, 3);
  EXPECT_EQ(a.delta, 3);  // the bias -1.5 x 2 takes relevance -3: not conserved
  EXPECT_TRUE(std::isnan(guided_backprop(model, x, 0).delta));
  EXPECT_EQ(model.last, Propagation::guided_backprop);
  EXPECT_EQ(deconvnet(model, x, 0).method, "deconvnet");
}

TEST(RuleAttribution, LrpRulePerModuleLongestPathWins) {
  BackwardRules r;
  r.lrp.epsilon = 1;
  r.lrp_modules = {{"enc", rule_of(LrpRuleKind::gamma)}, {"enc.0", rule_of(LrpRuleKind::identity)}};
  EXPECT_EQ(r.lrp_rule_for("enc.1.fc").kind, LrpRuleKind::gamma);
  EXPECT_EQ(r.lrp_rule_for("enc.0").kind, LrpRuleKind::identity);
  EXPECT_EQ(r.lrp_rule_for("enc.0.fc").kind, LrpRuleKind::identity);
  EXPECT_EQ(r.lrp_rule_for("encoder").kind, LrpRuleKind::epsilon);
  EXPECT_EQ(r.lrp_rule_for("").epsilon, 1);
}

TEST(RuleAttribution, BadArgumentsAreErrors) {
  RescaleR model;
  const std::vector<float> x = {1, 2};
  DeepLiftOptions o;
  o.baseline = {1, 2, 3};
  EXPECT_THROW(deeplift(model, x, 0, o), Error);
  EXPECT_THROW(deeplift(model, x, 1), Error);
  EXPECT_THROW(deeplift_shap(model, x, 0, {}), Error);
  LrpOptions l;
  l.rule.gamma = -1;
  EXPECT_THROW(lrp(model, x, 0, l), Error);
}

}  // namespace
}  // namespace tfdebug::interpret
