// Backward rules at the ops a model's forward runs.
//
// Note [Rules at ops]
// Captum and shap put DeepLIFT's and LRP's rules on modules (hooks on nn.ReLU, nn.Linear), so a
// module called twice overwrites its saved inputs, torch.relu called in forward gets no rule at
// all, and a skip connection x + f(x) is an op no hook sees: summation-to-delta fails
// (shap#3938, #3476, captum#351) and LRP rejects the model (captum#546). Here the rules go on the
// ops themselves: while rule_gradient runs the forward, a RuleOverride (Note [Op overrides]) sees
// every op the thread calls and replaces, in the forward only (the scope ends before backward),
//   - each elementwise nonlinearity (relu, sigmoid, tanh, gelu, silu, softplus, elu, leaky_relu,
//     hardtanh) and, for DeepLIFT, softmax,
//   - for LRP, each linear and convolution op (and addmm, and mm or matmul by a parameter),
// by a tensor with the same values whose local derivative is the rule's (Note [Surrogate
// derivatives]). Every other op (add, mul, matmul of two activations, layer_norm, ...) keeps its
// derivative: a residual add conserves relevance exactly in LRP's gradient-times-input form, and
// what other ops do not conserve shows in the delta the methods report.
//
// Note [Surrogate derivatives]
// With y the op's result (values and autograd history) and m a detached tensor of multipliers,
//   out = y.detach() + (s - s.detach()),  s = z * m
// has y's values exactly (s - s.detach() is 0) and derivative m with respect to z. Where the rule
// falls back to the plain derivative (DeepLIFT's |z - z'| < epsilon), at::where picks y itself.
// An in-place op (relu_) is run out of place on a clone of its input and its result copied back
// into self, so that no autograd node saves a tensor that is then overwritten. Guided backprop and
// deconvnet need the incoming gradient itself: a hook on the ReLU's result clamps it at 0
// (deconvnet's result has derivative 1, so the ReLU's own mask does not apply).
#include "rule_override.hpp"

#include <ATen/ATen.h>
#include <ATen/core/stack.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "tfdebug/core/error.hpp"

namespace tfdebug::torch::detail {
namespace {

using interpret::LrpRuleKind;
using interpret::Propagation;

constexpr std::string_view kElementwise[] = {"relu", "sigmoid",  "tanh",       "gelu",    "silu",
                                             "elu",  "softplus", "leaky_relu", "hardtanh"};

// "aten::relu_" -> ("relu", in place).
std::pair<std::string_view, bool> base_name(const c10::OperatorHandle& op) {
  std::string_view name = op.schema().name();
  if (!name.starts_with("aten::")) return {"", false};
  name.remove_prefix(6);
  const bool in_place = name.ends_with('_');
  if (in_place) name.remove_suffix(1);
  return {name, in_place};
}

// The op's arguments, popped from the stack.
std::vector<c10::IValue> pop_arguments(const c10::OperatorHandle& op, ::torch::jit::Stack* stack) {
  const std::size_t n = op.schema().arguments().size();
  auto args = ::torch::jit::last(*stack, n);
  std::vector<c10::IValue> out(args.begin(), args.end());
  ::torch::jit::drop(*stack, n);
  return out;
}

// The op's first return on `args` (autograd records it: the mode key is excluded here).
at::Tensor run_op(const c10::OperatorHandle& op, std::vector<c10::IValue> args) {
  ::torch::jit::Stack s(std::make_move_iterator(args.begin()), std::make_move_iterator(args.end()));
  op.callBoxed(&s);
  return s.front().toTensor();
}

// Note [Surrogate derivatives]: y's values, derivative m with respect to z, and y's own
// derivative where `plain`.
at::Tensor with_derivative(const at::Tensor& z, const at::Tensor& y, const at::Tensor& m,
                           const at::Tensor& plain) {
  const at::Tensor s = z * m;
  const at::Tensor out = y.detach() + (s - s.detach());
  return at::where(plain, y, out);
}

// m = dy / dz, 0 where |dz| < epsilon (those take the plain derivative: `plain`).
std::pair<at::Tensor, at::Tensor> multipliers(const at::Tensor& dz, const at::Tensor& dy, double epsilon) {
  at::Tensor plain = dz.abs() < epsilon;
  at::Tensor m = at::where(plain, at::zeros_like(dz), dy / dz);
  return {m, plain};
}

// The differences between the two halves [x; x'] of `t`, for both halves.
at::Tensor paired_difference(const at::Tensor& t, std::int64_t pairs) {
  const at::Tensor d = t.narrow(0, 0, pairs) - t.narrow(0, pairs, pairs);
  return at::cat({d, d}, 0);
}

// sign(t), with 1 for 0: the stabiliser pushes a zero denominator away from zero.
at::Tensor stabilised(const at::Tensor& t, double epsilon) {
  return t + epsilon * at::where(t >= 0, at::ones_like(t), -at::ones_like(t));
}

void push_result(::torch::jit::Stack* stack, bool in_place, const at::Tensor& self,
                 const at::Tensor& result) {
  if (in_place) {
    self.copy_(result);
    stack->emplace_back(self);
  } else {
    stack->emplace_back(result);
  }
}

}  // namespace

void RuleOverride::call(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* stack) {
  if (elementwise(op, stack) || softmax(op, stack) || linear(op, stack)) return;
  pass_through(op, keys, stack);
}

bool RuleOverride::elementwise(const c10::OperatorHandle& op, ::torch::jit::Stack* stack) {
  const auto [name, in_place] = base_name(op);
  if (std::find(std::begin(kElementwise), std::end(kElementwise), name) == std::end(kElementwise))
    return false;
  const Propagation p = rules_.propagation;
  const bool relu = name == "relu";
  if ((p == Propagation::guided_backprop || p == Propagation::deconvnet) && !relu) return false;
  const auto& arguments = op.schema().arguments();
  if (arguments.empty() || !stack->at(stack->size() - arguments.size()).isTensor()) return false;
  const at::Tensor self = stack->at(stack->size() - arguments.size()).toTensor();
  if (!self.requires_grad() || !self.is_floating_point()) return false;
  if (p == Propagation::deeplift_rescale && (self.dim() == 0 || self.size(0) != 2 * pairs_)) return false;
  // The out-of-place op computes the result (Note [Surrogate derivatives]).
  c10::OperatorHandle out_of_place = op;
  if (in_place) {
    const auto found =
        c10::Dispatcher::singleton().findSchema({"aten::" + std::string(name), op.schema().overload_name()});
    if (!found) return false;
    out_of_place = *found;
  }
  std::vector<c10::IValue> args = pop_arguments(op, stack);
  const at::Tensor z = in_place ? self.clone() : self;
  args[0] = z;
  const at::Tensor y = run_op(out_of_place, std::move(args));
  at::Tensor result;
  switch (p) {
    case Propagation::deeplift_rescale: {
      const auto [m, plain] = multipliers(paired_difference(z.detach(), pairs_),
                                          paired_difference(y.detach(), pairs_), rules_.deeplift_epsilon);
      result = with_derivative(z, y, m, plain);
      break;
    }
    case Propagation::lrp: {
      // Relevance passes through unchanged (Captum's rule for ReLU and Tanh): z dL/dz = y dL/dy.
      const auto [m, plain] = multipliers(z.detach(), y.detach(), rules_.deeplift_epsilon);
      result = with_derivative(z, y, m, plain);
      break;
    }
    case Propagation::guided_backprop:
      result = y;
      break;
    case Propagation::deconvnet:
      result = z + (y - z).detach();
      break;
  }
  if (p == Propagation::guided_backprop || p == Propagation::deconvnet) {
    result.register_hook([](const at::Tensor& grad) { return grad.clamp_min(0); });
  }
  push_result(stack, in_place, self, result);
  return true;
}

bool RuleOverride::softmax(const c10::OperatorHandle& op, ::torch::jit::Stack* stack) {
  if (rules_.propagation != Propagation::deeplift_rescale) return false;
  const auto [name, in_place] = base_name(op);
  if ((name != "softmax" && name != "_softmax") || in_place) return false;
  const std::size_t n = op.schema().arguments().size();
  if (n < 2 || !stack->at(stack->size() - n).isTensor() || !stack->at(stack->size() - n + 1).isInt())
    return false;
  const at::Tensor z = stack->at(stack->size() - n).toTensor();
  if (!z.requires_grad() || z.dim() < 2 || z.size(0) != 2 * pairs_) return false;
  std::int64_t dim = stack->at(stack->size() - n + 1).toInt();
  if (dim < 0) dim += z.dim();
  if (dim <= 0 || dim >= z.dim()) return false;  // along the batch: no pairs
  const at::Tensor y = run_op(op, pop_arguments(op, stack));
  // Captum's softmax rule: the rescale multipliers, then the mean of the incoming terms
  // subtracted (per softmax row here; Captum takes it over the whole batch). With
  // s = m * (z - mean z), ds/dz_j applied to g is g_j m_j - mean_k(g_k m_k).
  const auto [m, plain] = multipliers(paired_difference(z.detach(), pairs_),
                                      paired_difference(y.detach(), pairs_), rules_.deeplift_epsilon);
  const at::Tensor s = m * (z - z.mean({dim}, /*keepdim=*/true));
  stack->emplace_back(at::where(plain, y, y.detach() + (s - s.detach())));
  return true;
}

bool RuleOverride::linear(const c10::OperatorHandle& op, ::torch::jit::Stack* stack) {
  if (rules_.propagation != Propagation::lrp) return false;
  const auto [name, in_place] = base_name(op);
  if (in_place) return false;
  // Where the layer's input and weight are: LibTorch's C++ nn::Linear calls addmm(bias, x, W^T)
  // or matmul(x, W^T); a matmul or mm takes a rule only when its second operand is a parameter
  // (a product of two activations, attention's, keeps its derivative).
  std::size_t input_at = 0, weight_at = 1;
  bool parameter_only = false;
  if (name == "addmm") {
    input_at = 1;
    weight_at = 2;
  } else if (name == "mm" || name == "matmul") {
    parameter_only = true;
  } else if (!(name == "linear" || name == "conv1d" || name == "conv2d" || name == "conv3d" ||
               name == "convolution" || name == "_convolution")) {
    return false;
  }
  const std::size_t n = op.schema().arguments().size();
  if (n <= weight_at || !stack->at(stack->size() - n + input_at).isTensor() ||
      !stack->at(stack->size() - n + weight_at).isTensor())
    return false;
  const at::Tensor a = stack->at(stack->size() - n + input_at).toTensor();
  const at::Tensor w = stack->at(stack->size() - n + weight_at).toTensor();
  if (!a.requires_grad() || !a.is_floating_point()) return false;
  const std::string* module = parameters_.module_of(w);
  if (parameter_only && module == nullptr) return false;
  const interpret::LrpRule& rule = module != nullptr ? rules_.lrp_rule_for(*module) : rules_.lrp;
  std::vector<c10::IValue> args = pop_arguments(op, stack);
  at::Tensor z;
  {
    const at::NoGradGuard values_only;
    z = run_op(op, args);
  }
  at::Tensor s;
  switch (rule.kind) {
    case LrpRuleKind::identity: {
      // R_a = R_z: dL/da = z dL/dz / a, elementwise.
      if (a.numel() != z.numel()) {
        throw Error("the LRP identity rule" + (module ? " of '" + *module + "'" : std::string()) +
                    " needs an op whose input and output have as many elements (" +
                    std::to_string(a.numel()) + " in, " + std::to_string(z.numel()) + " out)");
      }
      const at::Tensor m = z.reshape(a.sizes()) / stabilised(a.detach(), rule.epsilon);
      s = (a * m).reshape(z.sizes());
      break;
    }
    case LrpRuleKind::epsilon:
    case LrpRuleKind::gamma:
    case LrpRuleKind::alpha1_beta0: {
      // dL/da = W_r^T (dL/dz * z / (z_r + epsilon sign z_r)), so that a dL/da is the rule's R_a.
      const at::Tensor wd = w.detach();
      if (rule.kind == LrpRuleKind::gamma) args[weight_at] = wd + rule.gamma * wd.clamp_min(0);
      if (rule.kind == LrpRuleKind::alpha1_beta0) args[weight_at] = wd.clamp_min(0);
      if (rule.kind == LrpRuleKind::epsilon) args[weight_at] = wd;
      const at::Tensor z_rule = run_op(op, std::move(args));
      s = z_rule * (z / stabilised(z_rule.detach(), rule.epsilon));
      break;
    }
  }
  stack->emplace_back(z + (s - s.detach()));
  return true;
}

}  // namespace tfdebug::torch::detail
