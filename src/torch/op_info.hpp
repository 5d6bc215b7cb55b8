// What the adapter needs to know of an op, read once from its schema (per op and thread): which
// returns are views, which arguments it writes in place, whether its outputs are uninitialised.
#pragma once

#include <ATen/core/function_schema.h>

#include <cstdint>
#include <string_view>

namespace tfdebug::torch::detail {

struct OpInfo {
  bool uninitialised = false;        // empty*, resize_, set_: outputs hold garbage
  std::uint64_t view_outputs = 0;    // bit i: return i aliases an input without writing it
  std::uint64_t written_inputs = 0;  // bit i: argument i is written in place, its values read first
  // bit i: argument i is written in place without its values being read: out= arguments, and
  // self of the ops that overwrite it whole (zero_, fill_, copy_, the random fills). Neither
  // scanned before the op nor an input the output depends on.
  std::uint64_t overwritten_inputs = 0;
  bool views_only = false;      // every return is a view of an input: nothing to observe
  std::uint32_t arguments = 0;  // schema argument and return counts: the op's stack slots
  std::uint32_t returns = 0;
  std::string_view name;  // the schema's: lives as long as the op is registered
  bool gelu = false;      // aten::gelu: its input goes with its output (saturation rule)
  // Its outputs hold values the caller chose, not values computed from its inputs (zeros, full,
  // fill_, masked_fill, where, arange): Observation::filled.
  bool filled = false;
  // An elementwise activation (relu, gelu, sigmoid, tanh, ...): watch observes its outputs too,
  // on the steps it observes layers (the dead-unit and saturation rules read them).
  bool activation = false;
  // A convolution: its output holds channels in dimension 1, and so do the ops after it until
  // the next layer that is not a convolution or a normalisation of channels (Note [Channels]).
  bool convolution = false;
  bool channel_norm = false;  // batch_norm, instance_norm, group_norm: channels stay in dimension 1
  // Note [Nothing to observe]: a factory whose values are finite whatever its arguments (zeros,
  // ones, arange, rand, randn, randint, ...), or an op that returns no tensor and writes none
  // (item, equal, is_nonzero).
  bool nothing_to_observe = false;
};

OpInfo describe_op(const c10::FunctionSchema& schema);

}  // namespace tfdebug::torch::detail
