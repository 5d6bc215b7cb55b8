// tfdebug explain's rule methods (explain_rules.hpp).
#include "explain_rules.hpp"

#include <map>
#include <memory>
#include <utility>

#include "safe_text.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/interpret/rule_attribution.hpp"
#include "tfdebug/torch/rule_model.hpp"

namespace tfdebug::cli {
namespace {

constexpr const char* kRuleMethods[] = {"deeplift", "deeplift-shap", "lrp", "guided-backprop", "deconvnet"};

interpret::LrpRule lrp_rule(const RuleMethodArgs& args) {
  interpret::LrpRule rule;
  if (args.lrp_rule == "epsilon") {
    rule.kind = interpret::LrpRuleKind::epsilon;
  } else if (args.lrp_rule == "gamma") {
    rule.kind = interpret::LrpRuleKind::gamma;
  } else if (args.lrp_rule == "alpha1-beta0") {
    rule.kind = interpret::LrpRuleKind::alpha1_beta0;
  } else {
    throw Error("--lrp-rule '" + terminal_safe(args.lrp_rule) + "': expected epsilon, gamma or alpha1-beta0");
  }
  rule.epsilon = args.lrp_epsilon;
  rule.gamma = args.lrp_gamma;
  return rule;
}

// The file's rule model, loaded once per process (--evaluate explains again and again).
torch::TorchRuleModel& rule_model(const std::string& path, const std::vector<std::int64_t>& input_shape) {
  static std::map<std::pair<std::string, std::vector<std::int64_t>>, std::unique_ptr<torch::TorchRuleModel>>
      loaded;
  auto& slot = loaded[{path, input_shape}];
  if (!slot) slot = std::make_unique<torch::TorchRuleModel>(torch::load_torchscript_rules(path, input_shape));
  return *slot;
}

}  // namespace

bool is_rule_method(const std::string& method) {
  for (const char* m : kRuleMethods)
    if (method == m) return true;
  return false;
}

interpret::Attribution explain_rules(const RuleMethodArgs& args, const std::vector<std::int64_t>& input_shape,
                                     std::span<const float> x, std::int64_t target,
                                     const std::vector<float>& baseline,
                                     const std::vector<float>& background) {
  torch::TorchRuleModel& model = rule_model(args.model, input_shape);
  if (args.method == "deeplift") {
    interpret::DeepLiftOptions o;
    o.baseline = baseline;
    o.max_batch = args.max_batch;
    return interpret::deeplift(model, x, target, o);
  }
  if (args.method == "deeplift-shap") {
    if (background.empty()) throw Error("deeplift-shap needs --background rows (its baselines)");
    interpret::DeepLiftShapOptions o;
    o.baselines = background;
    o.max_batch = args.max_batch;
    return interpret::deeplift_shap(model, x, target, o);
  }
  if (args.method == "lrp") {
    interpret::LrpOptions o;
    o.rule = lrp_rule(args);
    return interpret::lrp(model, x, target, o);
  }
  if (args.method == "guided-backprop") return interpret::guided_backprop(model, x, target);
  if (args.method == "deconvnet") return interpret::deconvnet(model, x, target);
  throw Error("unknown method '" + terminal_safe(args.method) + "'");
}

}  // namespace tfdebug::cli
