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
  return info;
}

}  // namespace tfdebug::torch::detail
