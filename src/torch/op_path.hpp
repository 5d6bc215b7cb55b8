// What happens around each op the adapter intercepts, whether it reaches the boxed fallback
// (interception.cpp) or an unboxed kernel (unboxed_ops.cpp): before the op, its phase, module and
// whether to observe it (prepare); after it, the module of the autograd nodes it made and its
// outputs (after_op). Private to tfdebug::torch.
#pragma once

#include <ATen/SequenceNumber.h>
#include <ATen/core/function_schema.h>
#include <ATen/core/ivalue.h>

#include <cstdint>

#include "attach_state.hpp"

namespace tfdebug::torch::detail {

// Before the op runs: its phase and module, and whether (and what) to observe. Leaves call.info
// null when there is nothing to do after the op. `stack`: the op's arguments last (the boxed
// fallback's stack, or the tensors an unboxed kernel was called with, Note [Unboxed hot ops]).
void prepare(AttachState& s, ThreadState& t, const c10::FunctionSchema& schema,
             c10::ArrayRef<c10::IValue> stack, OpCall& call);
// prepare, for the kernels: a failure in it is recorded (Counters::hook_failures) and the op runs
// unobserved; nothing throws into the training loop.
inline void begin_op(AttachState& s, ThreadState& t, const c10::FunctionSchema& schema,
                     c10::ArrayRef<c10::IValue> stack, OpCall& call) noexcept {
  try {
    prepare(s, t, schema, stack, call);
  } catch (...) {
    call.info = nullptr;
    call.observe = false;
    s.record_failure(s.hook_failures, "before an op");
  }
}

// After a forward op: every autograd sequence number it consumed gets its module.
void remember_sequences(AttachState& s, ThreadState& t, const OpCall& call, std::uint64_t first_sequence);
// One output of an observed op.
void observe_output(AttachState& s, ThreadState& t, const OpCall& call, const at::Tensor& tensor,
                    std::size_t index);

inline const c10::DispatchKeySet kAfterMode(c10::DispatchKeySet::FULL_AFTER, kModeKey);

// After the op ran: its autograd nodes' module, then its outputs (for_each_output(f) calls
// f(tensor, return index) for each).
template <typename ForEachOutput>
void after_op(AttachState& s, ThreadState& t, const OpCall& call, std::uint64_t first_sequence,
              const ForEachOutput& for_each_output) {
  if (call.info == nullptr) return;
  if (call.phase == Phase::forward) remember_sequences(s, t, call, first_sequence);
  if (!call.observe) return;
  try {
    for_each_output(
        [&](const at::Tensor& tensor, std::size_t index) { observe_output(s, t, call, tensor, index); });
  } catch (...) {
    s.record_failure(s.hook_failures, "after an op");
  }
}

// Note [Module of an op] (3): while an op whose inner ops are intercepted runs (nested_ops), it
// encloses them.
class EnclosingOp {
 public:
  // Encloses only when `call`'s inner ops are intercepted too: a forward op, with nested_ops.
  EnclosingOp(const AttachState& s, ThreadState& t, const OpCall& call)
      : EnclosingOp(t, s.options.nested_ops && call.info != nullptr && call.phase == Phase::forward,
                    call.module) {}
  EnclosingOp(ThreadState& t, bool active, std::uint32_t module) : t_(active ? &t : nullptr) {
    if (t_ == nullptr) return;
    was_enclosed_ = t.enclosed;
    was_module_ = t.enclosing_module;
    t.enclosed = true;
    t.enclosing_module = module;
  }
  ~EnclosingOp() {
    if (t_ == nullptr) return;
    t_->enclosed = was_enclosed_;
    t_->enclosing_module = was_module_;
  }
  EnclosingOp(const EnclosingOp&) = delete;
  EnclosingOp& operator=(const EnclosingOp&) = delete;

 private:
  ThreadState* t_;
  bool was_enclosed_ = false;
  std::uint32_t was_module_ = 0;
};

}  // namespace tfdebug::torch::detail
