// `tfdebug explain`'s methods that change backward rules (deeplift, deeplift-shap, lrp,
// guided-backprop, deconvnet): tfdebug::interpret's rule methods on the TorchScript file
// (docs/interpretability.md). cmd_explain.cpp parses the options and prints.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tfdebug/interpret/attribution.hpp"

namespace tfdebug::cli {

struct RuleMethodArgs {
  std::string model;  // the TorchScript file
  std::string method;
  std::string lrp_rule = "epsilon";  // epsilon, gamma, alpha1-beta0
  double lrp_epsilon = 1e-9;
  double lrp_gamma = 0.25;
  std::int64_t max_batch = 64;
};

bool is_rule_method(const std::string& method);

// `baseline`: deeplift's x' (empty: zeros); `background`: deeplift-shap's baselines (required).
interpret::Attribution explain_rules(const RuleMethodArgs& args, const std::vector<std::int64_t>& input_shape,
                                     std::span<const float> x, std::int64_t target,
                                     const std::vector<float>& baseline,
                                     const std::vector<float>& background);

}  // namespace tfdebug::cli
