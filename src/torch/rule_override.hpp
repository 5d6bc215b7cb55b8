// The op override that applies backward rules (Note [Rules at ops] in rule_override.cpp).
// Private to tfdebug::torch.
#pragma once

#include <cstdint>

#include "op_override.hpp"
#include "tfdebug/interpret/rule_model.hpp"
#include "tfdebug/torch/rule_model.hpp"

namespace tfdebug::torch::detail {

class RuleOverride : public OpOverride {
 public:
  // `pairs`: DeepLIFT's batch is [x; x'] with `pairs` rows each (0 for the other propagations).
  RuleOverride(const interpret::BackwardRules& rules, std::int64_t pairs, const ParameterPaths& parameters)
      : rules_(rules), pairs_(pairs), parameters_(parameters) {}
  void call(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* stack) override;

 private:
  bool elementwise(const c10::OperatorHandle& op, ::torch::jit::Stack* stack);
  bool softmax(const c10::OperatorHandle& op, ::torch::jit::Stack* stack);
  bool linear(const c10::OperatorHandle& op, ::torch::jit::Stack* stack);

  const interpret::BackwardRules& rules_;
  std::int64_t pairs_;
  const ParameterPaths& parameters_;
};

}  // namespace tfdebug::torch::detail
