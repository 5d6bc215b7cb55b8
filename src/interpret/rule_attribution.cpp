// DeepLIFT, DeepLiftShap, LRP, guided backprop and deconvnet over the [H] tier
// (tfdebug/interpret/rule_attribution.hpp). The models do the rules; this file chooses them, cuts
// the baselines into calls of at most max_batch examples (Note [Bounded batches]) and turns the
// modified gradients into attributions with their completeness delta.
#include "tfdebug/interpret/rule_attribution.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "batching.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {

const LrpRule& BackwardRules::lrp_rule_for(const std::string& path) const {
  const LrpRule* best = &lrp;
  std::size_t best_length = 0;
  for (const auto& [prefix, rule] : lrp_modules) {
    const bool covers = path == prefix || (path.size() > prefix.size() && path.starts_with(prefix) &&
                                           path[prefix.size()] == '.');
    if (covers && (best == &lrp || prefix.size() > best_length)) {
      best = &rule;
      best_length = prefix.size();
    }
  }
  return *best;
}

namespace {

struct RuleRows {
  std::vector<double> scores, reference_scores;
  std::vector<float> gradients;  // rows of numel
};

// The modified gradients at `rows` examples of `inputs` (row-major), each with the reference of
// the same row of `references` when given, in calls of at most `max_batch`.
RuleRows rule_rows(RuleModel& model, std::span<const float> inputs, std::span<const float> references,
                   std::int64_t rows, std::int64_t target, const BackwardRules& rules,
                   std::int64_t max_batch) {
  if (max_batch < 1) throw Error("max_batch must be at least 1, got " + std::to_string(max_batch));
  const std::int64_t numel = example_size(model);
  std::vector<std::int64_t> shape = model.input_shape();
  shape.insert(shape.begin(), 0);
  RuleRows out;
  out.scores.resize(static_cast<std::size_t>(rows));
  out.reference_scores.resize(static_cast<std::size_t>(rows));
  out.gradients.resize(static_cast<std::size_t>(rows * numel));
  std::vector<float> scores, reference_scores;
  for (std::int64_t start = 0; start < rows; start += max_batch) {
    const std::int64_t n = std::min(max_batch, rows - start);
    shape[0] = n;
    const auto at = static_cast<std::size_t>(start * numel);
    const auto size = static_cast<std::size_t>(n * numel);
    const TensorView x(inputs.data() + at, DType::f32, shape);
    scores.assign(static_cast<std::size_t>(n), 0.0f);
    reference_scores.assign(references.empty() ? 0 : static_cast<std::size_t>(n), 0.0f);
    std::span<float> gradients(out.gradients.data() + at, size);
    if (references.empty()) {
      model.rule_gradient(x, nullptr, target, rules, scores, {}, gradients);
    } else {
      const TensorView r(references.data() + at, DType::f32, shape);
      model.rule_gradient(x, &r, target, rules, scores, reference_scores, gradients);
    }
    for (std::int64_t i = 0; i < n; ++i) {
      out.scores[static_cast<std::size_t>(start + i)] = scores[static_cast<std::size_t>(i)];
      if (!references.empty())
        out.reference_scores[static_cast<std::size_t>(start + i)] =
            reference_scores[static_cast<std::size_t>(i)];
    }
  }
  return out;
}

Attribution start(const RuleModel& model, const char* method) {
  Attribution a;
  a.method = method;
  a.shape = model.input_shape();
  return a;
}

// DeepLIFT against each baseline row (Note [DeepLIFT's pairs]): the mean of (x - x'_i) * m_i.
Attribution deeplift_rows(RuleModel& model, std::span<const float> x, std::int64_t target,
                          std::span<const float> baselines, double epsilon, std::int64_t max_batch,
                          const char* method) {
  detail::check_example(model, x, target);
  const std::int64_t numel = example_size(model);
  const std::int64_t rows = detail::row_count(baselines, numel, "the baselines", true);
  if (!(epsilon >= 0)) throw Error("the DeepLIFT epsilon must be >= 0");
  std::vector<float> inputs(static_cast<std::size_t>(rows * numel));
  for (std::int64_t i = 0; i < rows; ++i)
    std::copy(x.begin(), x.end(), inputs.begin() + static_cast<std::ptrdiff_t>(i * numel));
  BackwardRules rules;
  rules.propagation = Propagation::deeplift_rescale;
  rules.deeplift_epsilon = epsilon;
  const RuleRows r = rule_rows(model, inputs, baselines, rows, target, rules, max_batch);
  Attribution a = start(model, method);
  a.values.assign(static_cast<std::size_t>(numel), 0.0);
  double reference = 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < numel; ++j) {
      const auto k = static_cast<std::size_t>(i * numel + j);
      a.values[static_cast<std::size_t>(j)] +=
          (double(x[static_cast<std::size_t>(j)]) - double(baselines[k])) * double(r.gradients[k]);
    }
    reference += r.reference_scores[static_cast<std::size_t>(i)];
  }
  for (double& v : a.values) v /= double(rows);
  a.output = r.scores.front();
  a.reference_output = reference / double(rows);
  a.delta = a.sum() - (a.output - a.reference_output);
  a.evaluations = 2 * rows;  // each pair is two examples of one forward and backward
  return a;
}

// The modified gradient at x alone (LRP, guided backprop, deconvnet).
RuleRows at_x(RuleModel& model, std::span<const float> x, std::int64_t target, const BackwardRules& rules) {
  detail::check_example(model, x, target);
  return rule_rows(model, x, {}, 1, target, rules, 1);
}

Attribution gradient_method(RuleModel& model, std::span<const float> x, std::int64_t target,
                            Propagation propagation, const char* method) {
  BackwardRules rules;
  rules.propagation = propagation;
  const RuleRows r = at_x(model, x, target, rules);
  Attribution a = start(model, method);
  a.values.assign(r.gradients.begin(), r.gradients.end());
  a.output = r.scores.front();
  a.evaluations = 1;
  return a;
}

void check_rule(const LrpRule& rule, const std::string& where) {
  if (!(rule.epsilon >= 0) || !std::isfinite(rule.epsilon))
    throw Error(where + ": the LRP epsilon must be finite and >= 0");
  if (!(rule.gamma >= 0) || !std::isfinite(rule.gamma))
    throw Error(where + ": the LRP gamma must be finite and >= 0");
}

}  // namespace

// Note [DeepLIFT's pairs]
// The rescale rule needs every nonlinearity's input and output at x and at x' in the same
// backward pass. The model gets the pairs as two batches, `inputs` and `references`, row i of
// one paired with row i of the other; a LibTorch model runs them as one batch [x; x'] so every
// op, a module's or a functional one, reused or not, sees both halves (Note [Rules at ops] in
// tfdebug::torch). DeepLiftShap is DeepLIFT against each baseline, averaged: its pairs are
// (x, baseline i), cut into calls of max_batch pairs.
Attribution deeplift(RuleModel& model, std::span<const float> x, std::int64_t target,
                     const DeepLiftOptions& options) {
  detail::check_example(model, x, target);
  std::vector<float> baseline = options.baseline;
  if (baseline.empty()) baseline.assign(x.size(), 0.0f);
  if (baseline.size() != x.size()) {
    throw Error("the baseline has " + std::to_string(baseline.size()) + " values; the input has " +
                std::to_string(x.size()));
  }
  return deeplift_rows(model, x, target, baseline, options.epsilon, options.max_batch, "deeplift");
}

Attribution deeplift_shap(RuleModel& model, std::span<const float> x, std::int64_t target,
                          const DeepLiftShapOptions& options) {
  return deeplift_rows(model, x, target, options.baselines, options.epsilon, options.max_batch,
                       "deeplift-shap");
}

Attribution lrp(RuleModel& model, std::span<const float> x, std::int64_t target, const LrpOptions& options) {
  check_rule(options.rule, "lrp");
  for (const auto& [path, rule] : options.modules) check_rule(rule, "lrp rule of '" + path + "'");
  BackwardRules rules;
  rules.propagation = Propagation::lrp;
  rules.lrp = options.rule;
  rules.lrp_modules = options.modules;
  const RuleRows r = at_x(model, x, target, rules);
  Attribution a = start(model, "lrp");
  a.values.resize(x.size());
  for (std::size_t j = 0; j < x.size(); ++j) a.values[j] = double(x[j]) * double(r.gradients[j]);
  a.output = r.scores.front();
  a.reference_output = 0;  // relevance starts as f(x): completeness is sum R = f(x)
  a.delta = a.sum() - a.output;
  a.evaluations = 1;
  return a;
}

Attribution guided_backprop(RuleModel& model, std::span<const float> x, std::int64_t target) {
  return gradient_method(model, x, target, Propagation::guided_backprop, "guided-backprop");
}

Attribution deconvnet(RuleModel& model, std::span<const float> x, std::int64_t target) {
  return gradient_method(model, x, target, Propagation::deconvnet, "deconvnet");
}

}  // namespace tfdebug::interpret
