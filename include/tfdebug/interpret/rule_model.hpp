// The [H] tier of models (tfdebug/interpret/model.hpp): a GradientModel that can also compute a
// *modified* input gradient, the ordinary forward pass with other backward rules at chosen ops:
//
//   deeplift_rescale  each nonlinearity's derivative is replaced by the multiplier
//                     (y - y') / (z - z') between the input's and the reference's forward values
//                     (the plain derivative where |z - z'| < deeplift_epsilon)
//   lrp               linear and convolution ops propagate relevance by an LRP rule (epsilon,
//                     gamma, alpha1-beta0, identity), chosen per module path; nonlinearities pass
//                     relevance through unchanged
//   guided_backprop   ReLUs pass the gradient only where their input and the gradient are > 0
//   deconvnet         ReLUs pass relu(gradient), whatever their input
//
// The attribution methods over this tier are in tfdebug/interpret/rule_attribution.hpp; a LibTorch
// model is one through tfdebug::torch::TorchRuleModel.
//
//   tfdebug::interpret::BackwardRules rules;
//   rules.propagation = tfdebug::interpret::Propagation::lrp;
//   rules.lrp_modules = {{"fc1", {.kind = tfdebug::interpret::LrpRuleKind::gamma, .gamma = 1.0}}};
//   model.rule_gradient(x, nullptr, /*target=*/0, rules, scores, {}, gradients);
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tfdebug/interpret/model.hpp"

namespace tfdebug::interpret {

enum class Propagation { deeplift_rescale, lrp, guided_backprop, deconvnet };

// Captum's rules (captum/attr/_utils/lrp_rules.py): with z = W a + b the layer's output and
// z_r its output under the rule's weights W_r,
//   epsilon       R_a = a * W^T (R_z / (z + epsilon sign z))
//   gamma         W_r = W + gamma W+, R_a = a * W_r^T (R_z / (z_r + epsilon sign z_r))
//   alpha1_beta0  W_r = W+ (only the positive weights), otherwise as gamma
//   identity      R_a = R_z (the layer's input and output have the same number of elements)
enum class LrpRuleKind { epsilon, gamma, alpha1_beta0, identity };
struct LrpRule {
  LrpRuleKind kind = LrpRuleKind::epsilon;
  double epsilon = 1e-9;  // the stabiliser of every kind but identity (Captum's default 1e-9)
  double gamma = 0.25;    // gamma only (Captum's GammaRule default)
};

struct BackwardRules {
  Propagation propagation = Propagation::deeplift_rescale;
  double deeplift_epsilon = 1e-10;  // |z - z'| below this: the plain derivative (Captum's 1e-10)
  LrpRule lrp;                      // the rule of every linear op no entry of lrp_modules names
  // (module path, rule): a path names a module and the modules inside it ("encoder" covers
  // "encoder.0.fc"); the longest matching path wins. Paths are the models' own parameter names
  // without the parameter ("fc1" for "fc1.weight").
  std::vector<std::pair<std::string, LrpRule>> lrp_modules;

  // The rule of the op whose weight belongs to module `path`.
  const LrpRule& lrp_rule_for(const std::string& path) const;
};

// [H]: outputs, input gradients, and input gradients under backward rules.
class RuleModel : public GradientModel {
 public:
  // For each example i of `inputs`: scores[i] = output `target` (the forward pass is unchanged)
  // and gradients[i * numel + j] = the modified gradient of it with respect to input element j.
  // deeplift_rescale needs `references` (the same shape as inputs: example i's reference is row
  // i) and writes reference_scores[i], the target output at it; the other propagations take
  // neither (nullptr, empty span).
  virtual void rule_gradient(const TensorView& inputs, const TensorView* references, std::int64_t target,
                             const BackwardRules& rules, std::span<float> scores,
                             std::span<float> reference_scores, std::span<float> gradients) = 0;
};

}  // namespace tfdebug::interpret
