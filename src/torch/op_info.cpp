#include "op_info.hpp"

#include <algorithm>
#include <iterator>

namespace tfdebug::torch::detail {

namespace {
bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

}  // namespace

OpInfo describe_op(const c10::FunctionSchema& schema) {
  OpInfo info;
  std::string_view name = schema.name();
  info.name = name;
  info.arguments = static_cast<std::uint32_t>(schema.arguments().size());
  info.returns = static_cast<std::uint32_t>(schema.returns().size());
  info.uninitialised = starts_with(name, "aten::empty") || starts_with(name, "aten::new_empty") ||
                       name == "aten::resize_" || name == "aten::resize_as_" || name == "aten::set_";
  info.gelu = name == "aten::gelu";
  static constexpr std::string_view kFilled[] = {
      "aten::fill_",       "aten::fill",     "aten::zero_",        "aten::zeros",        "aten::zeros_like",
      "aten::new_zeros",   "aten::ones",     "aten::ones_like",    "aten::new_ones",     "aten::full",
      "aten::full_like",   "aten::new_full", "aten::masked_fill",  "aten::masked_fill_", "aten::index_fill",
      "aten::index_fill_", "aten::where",    "aten::_s_where",     "aten::arange",       "aten::linspace",
      "aten::logspace",    "aten::eye",      "aten::scalar_tensor"};
  info.filled = std::find(std::begin(kFilled), std::end(kFilled), name) != std::end(kFilled);
  static constexpr std::string_view kActivations[] = {
      "aten::relu",        "aten::relu_",     "aten::gelu",      "aten::sigmoid",     "aten::sigmoid_",
      "aten::tanh",        "aten::tanh_",     "aten::silu",      "aten::silu_",       "aten::leaky_relu",
      "aten::leaky_relu_", "aten::elu",       "aten::elu_",      "aten::selu",        "aten::celu",
      "aten::softplus",    "aten::hardtanh",  "aten::hardtanh_", "aten::hardswish",   "aten::hardsigmoid",
      "aten::mish",        "aten::threshold", "aten::relu6",     "aten::log_sigmoid", "aten::prelu"};
  info.activation =
      std::find(std::begin(kActivations), std::end(kActivations), name) != std::end(kActivations);
  info.convolution = starts_with(name, "aten::conv") || starts_with(name, "aten::_convolution") ||
                     starts_with(name, "aten::mkldnn_convolution") || starts_with(name, "aten::slow_conv") ||
                     starts_with(name, "aten::thnn_conv");
  info.channel_norm = starts_with(name, "aten::batch_norm") || starts_with(name, "aten::native_batch_norm") ||
                      starts_with(name, "aten::_batch_norm") || starts_with(name, "aten::instance_norm") ||
                      starts_with(name, "aten::group_norm") || starts_with(name, "aten::native_group_norm");
  const auto& returns = schema.returns();
  for (std::size_t i = 0; i < returns.size() && i < 64; ++i) {
    const auto* alias = returns[i].alias_info();
    if (alias && !alias->isWrite()) info.view_outputs |= std::uint64_t{1} << i;
  }
  info.views_only = !returns.empty() && returns.size() <= 64 &&
                    info.view_outputs ==
                        (returns.size() == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << returns.size()) - 1);
  static constexpr std::string_view kOverwrites[] = {
      "aten::zero_",      "aten::fill_",   "aten::copy_",      "aten::normal_",
      "aten::uniform_",   "aten::random_", "aten::bernoulli_", "aten::exponential_",
      "aten::geometric_", "aten::cauchy_", "aten::log_normal_"};
  const bool overwrites =
      std::find(std::begin(kOverwrites), std::end(kOverwrites), name) != std::end(kOverwrites);
  const auto& arguments = schema.arguments();
  for (std::size_t i = 0; i < arguments.size() && i < 64; ++i) {
    const auto* alias = arguments[i].alias_info();
    if (!alias || !alias->isWrite()) continue;
    if (arguments[i].is_out() || (overwrites && i == 0))
      info.overwritten_inputs |= std::uint64_t{1} << i;
    else
      info.written_inputs |= std::uint64_t{1} << i;
  }
  // Note [Nothing to observe]
  // Every step calls ops that cannot make a NaN or an Inf and whose outputs no rule reads: the
  // backward's seed (ones_like), loss.item(), the random numbers and index ranges a batch is
  // drawn from, an RNN's zero initial state. Each cost a boxed call into the adapter (9 of the
  // zoo MLP's intercepted ops a step were boxed, 6 of them these). They get an unboxed kernel
  // that only runs them, outer ops only (unboxed_ops.cpp); prepare skips an overload left to the
  // boxed fallback the same way. Neither is observed or counted, and this is the one place that
  // decides: unboxed_ops.cpp registers a quiet kernel only for an op cleared here. A factory's
  // values are finite whatever its arguments: zeros and ones, arange (an infinite bound is an
  // error), eye, and the random draws (uniform in [0, 1), Box-Muller from (0, 1], integers);
  // full, linspace, normal and bernoulli are not among them (their arguments can be NaN or
  // infinite), nor are the empty factories (garbage: OpInfo::uninitialised), nor the out=
  // overloads (they write a tensor the step holds).
  static constexpr std::string_view kFiniteFactories[] = {
      "aten::zeros",    "aten::zeros_like", "aten::new_zeros", "aten::ones",         "aten::ones_like",
      "aten::new_ones", "aten::arange",     "aten::eye",       "aten::rand",         "aten::rand_like",
      "aten::randn",    "aten::randn_like", "aten::randint",   "aten::randint_like", "aten::randperm"};
  const bool finite_factory =
      std::find(std::begin(kFiniteFactories), std::end(kFiniteFactories), name) != std::end(kFiniteFactories);
  bool tensor_returned = false;
  for (const auto& r : returns) {
    switch (r.type()->kind()) {
      case c10::TypeKind::BoolType:
      case c10::TypeKind::IntType:
      case c10::TypeKind::FloatType:
      case c10::TypeKind::ComplexType:
      case c10::TypeKind::NumberType:
      case c10::TypeKind::StringType:
      case c10::TypeKind::NoneType:
      case c10::TypeKind::SymIntType:
        break;
      default:
        tensor_returned = true;  // a tensor, a list or tuple of them, or a type not listed here
    }
  }
  info.nothing_to_observe = (finite_factory || (!returns.empty() && !tensor_returned)) &&
                            info.written_inputs == 0 && info.overwritten_inputs == 0;
  return info;
}

}  // namespace tfdebug::torch::detail
