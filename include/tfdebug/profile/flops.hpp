// Floating-point operation counts of ATen ops from their name and arguments (shapes, int lists,
// flags), with no dependency on LibTorch: tfdebug::torch::Profiler fills OpArgs from an op's
// inputs, tests fill them by hand.
//
//   using tfdebug::profile::OpArg;
//   std::array<OpArg, 2> args = {OpArg::tensor({64, 32}), OpArg::tensor({32, 16})};
//   std::optional<double> f = tfdebug::profile::op_flops("aten::mm", args);  // 2*64*32*16 = 65536
//
// Conventions (docs/profiling.md lists every formula):
// - A multiply-add is 2 FLOPs; a matrix product [m,k]x[k,n] is 2mkn. The bias or beta*self add of
//   addmm, baddbmm and linear is not counted (as PyTorch's own flop counter).
// - Elementwise arithmetic and transcendental functions count 1 per output element (exp, erf,
//   tanh, sqrt, log each count 1); softmax is 5 per element (max, subtract, exp, sum, divide).
// - Ops that only move, view, allocate or gather data (view, t, copy_, cat, embedding, ...) are
//   known to have 0 FLOPs.
// - An op with no formula, or arguments that do not fit it, gives nullopt: the caller counts and
//   lists such ops instead of treating them as 0.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>

namespace tfdebug::profile {

// One argument of an op call, as far as the formulas need it. Fixed-size: no allocation.
struct OpArg {
  static constexpr std::size_t kMaxValues = 8;
  enum class Kind : std::uint8_t {
    kNone,    // None, an undefined tensor, or an argument that was not captured
    kTensor,  // values: the shape
    kInts,    // an int list or a bool list (values: the entries, bools as 0/1)
    kInt,     // values[0]
    kBool,    // values[0]: 0 or 1
    kDouble,  // real
    kString,  // text (valid only during the call)
    kOther,   // anything else, or a list/shape longer than kMaxValues
  };
  Kind kind = Kind::kNone;
  std::uint8_t size = 0;  // entries of values in use
  std::array<std::int64_t, kMaxValues> values{};
  double real = 0;
  std::string_view text;

  static OpArg tensor(std::initializer_list<std::int64_t> shape);
  static OpArg ints(std::initializer_list<std::int64_t> list);
  static OpArg integer(std::int64_t value);
  static OpArg boolean(bool value);
  static OpArg string(std::string_view text);
  static OpArg none() { return {}; }

  std::span<const std::int64_t> shape() const { return {values.data(), size}; }
};

// FLOPs of one call of `op` ("aten::mm" or "mm"), or nullopt when there is no formula for the op
// or its arguments do not fit the formula (a missing shape, a string padding, ...).
std::optional<double> op_flops(std::string_view op, std::span<const OpArg> args);

// Whether `op` has a formula at all (for listing the ops that have none).
bool has_flops_formula(std::string_view op);

}  // namespace tfdebug::profile
