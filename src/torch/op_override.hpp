// Op overrides: the dispatcher hook that interpretability uses to see and change a model's ops
// (capture a layer's output or an attention matrix, run an activation with another backward rule).
// Private to tfdebug::torch.
//
// Note [Op overrides]
// The adapter's interception (Note [Interception]) sees every non-view op of a thread that has
// the mode key in its dispatch keys, through the boxed fallback on_op and the unboxed hot-op
// kernels. An OverrideScope puts that key in the thread's keys and installs an OpOverride for the
// thread; while it lives, every op the thread calls (forward, and backward on the CPU, which the
// autograd engine runs on the calling thread) goes to the override instead of the adapter, boxed.
// The override runs with the mode key excluded, so what it calls (the op itself through
// redispatch, or other ops in its place) is not intercepted again: outer ops only. An override
// must leave the op's returns on the stack, as the op would; the usual thing for the ops it does
// not care about is `op.redispatchBoxed(keys & kAfterMode, stack)` (pass_through).
//
//   struct Capture : OpOverride {
//     void call(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* s) override {
//       pass_through(op, keys, s);
//       if (op.schema().name() == "aten::softmax") seen.push_back(s->back().toTensor());
//     }
//     std::vector<at::Tensor> seen;
//   } capture;
//   { OverrideScope scope(capture); model->forward(x); }
//
// The adapter's hot path pays one thread-local load per op for this (nullptr unless a scope
// lives). A scope on a thread that also steps an attachment takes that thread's ops from it.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

namespace tfdebug::torch::detail {

class OpOverride {
 public:
  virtual ~OpOverride() = default;
  virtual void call(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* stack) = 0;
};

// The override of this thread; nullptr when no OverrideScope lives on it.
OpOverride* current_override() noexcept;

// Runs the op as if nothing had intercepted it.
void pass_through(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* stack);

// Installs `override` for this thread and includes the mode key in its dispatch keys until
// destroyed (scopes nest: the inner one wins, the outer one is back after it). Registers the
// adapter's fallback first (tfdebug::Error if the key is taken).
class OverrideScope {
 public:
  explicit OverrideScope(OpOverride& override);
  ~OverrideScope();
  OverrideScope(const OverrideScope&) = delete;
  OverrideScope& operator=(const OverrideScope&) = delete;

 private:
  OpOverride* previous_;
  c10::impl::IncludeDispatchKeyGuard include_;
};

// The call of an intercepted op when an override lives (on_op and the unboxed kernels):
// the mode key excluded, the override's call.
void call_override(OpOverride& override, const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                   ::torch::jit::Stack* stack);

}  // namespace tfdebug::torch::detail
