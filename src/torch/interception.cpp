// How the adapter sees the ops of a training step: a boxed fallback kernel for a dispatch key.
//
// Note [Interception]
// An observer of ops pays on every op, so how it is called sets the floor of what diagnose costs.
// A RecordFunction callback costs every op a RecordFunction object with boxed inputs and
// outputs, even when the callback does nothing (1.6x the demo model's step); turning recording off
// inside the ops it saw (so that their inner ops cost nothing) rebuilt LibTorch's thread-local
// callback list twice per op, and still cost 1.3x. So ops are intercepted in the dispatcher
// instead: a boxed fallback kernel for a mode key, which the thread calling step_begin puts in its
// thread-local set of included dispatch keys for the steps that observe ops. Every op that thread
// calls (and the autograd engine's, which copies the thread-local state of the thread that called
// backward) dispatches to on_op first, with its arguments boxed on the stack; on_op looks at them,
// redispatches below the mode key, and reads the outputs from the stack. An empty fallback costs
// the demo step 1.01-1.05x once view-only ops pass through (Note [Views pass through]). LibTorch
// 1.13 has no mode key for C++ users: the Python dispatcher keys are libtorch's own, functorch's
// is functorch's; TESTING_ONLY_GenericMode is the one mode key nothing in LibTorch registers, so
// that is the key (attach says so if something else took it). User scopes are not ops: a
// RecordFunction callback on the USER_SCOPE scope only (so that ops and autograd nodes pay
// nothing for it) tracks them. Backward nodes are asked for, not tracked (Note [Current node]).
//
// Note [Outer ops only]
// Most of a step's ops run inside other ops: CPU bmm selects each matrix of the batch (12,000 of
// the demo model's 15,148 ops per step were such views), aten::linear calls aten::t and
// aten::addmm, layer_norm calls native_layer_norm. So an op is observed and the ops inside it are
// not: on_op excludes the mode key while the op runs, and a bad value is reported at the op the
// caller called (aten::layer_norm, not native_layer_norm). Autograd nodes are ops' callers too: the
// ops inside a backward node are seen (the engine calls them, not an op). The autograd nodes that
// the inner ops create take the module of the outer op (every sequence number consumed while it
// ran). AttachOptions::nested_ops keeps the key included inside ops and brings the inner ops back.
#include "interception.hpp"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/core/impl/LocalDispatchKeySet.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "op_override.hpp"
#include "op_path.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::torch::detail {

namespace {

// The boxed fallback for kModeKey: every op the intercepting thread calls (Note [Interception]).
void on_op(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* stack) {
  if (OpOverride* o = current_override(); o != nullptr) [[unlikely]] {  // Note [Op overrides]
    call_override(*o, op, keys, stack);
    return;
  }
  AttachState* s = live_attachment().load(std::memory_order_acquire);
  // Note [Outer ops only]: the ops this op calls do not come back here, unless asked for.
  std::optional<c10::impl::ExcludeDispatchKeyGuard> outer_only;
  if (s == nullptr || !s->options.nested_ops) outer_only.emplace(kModeKey);
  if (s == nullptr || !s->in_step.load(std::memory_order_relaxed)) {
    op.redispatchBoxed(keys & kAfterMode, stack);
    return;
  }
  ThreadState& t = thread_state();
  OpCall call;
  begin_op(*s, t, op.schema(), *stack, call);
  const std::uint64_t first_sequence = at::sequence_number::peek();
  {
    const EnclosingOp enclosing(*s, t, call);
    op.redispatchBoxed(keys & kAfterMode, stack);  // the op itself; what it throws is the caller's
  }
  after_op(*s, t, call, first_sequence, [&](const auto& observe) {
    if (call.info->returns > stack->size()) return;
    const auto outputs = ::torch::jit::last(*stack, call.info->returns);
    for (std::size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].isTensor()) {
        observe(outputs[i].toTensor(), i);
      } else if (outputs[i].isTensorList()) {
        const auto list = outputs[i].toTensorList();
        for (std::size_t j = 0; j < list.size(); ++j) observe(list.get(j), i);
      }
    }
  });
}

// Note [Views pass through]: ops that only return views of their inputs (view, t, select,
// expand, ...; a quarter of the ops a step calls) have nothing to observe, so they skip on_op
// altogether: each gets a fallthrough kernel for kModeKey, and the dispatcher leaves the key out
// of their dispatch (no boxing). So do the in-place views (tag inplace_view: detach_, squeeze_,
// t_, ...; zero_grad calls detach_ on every gradient), which change only a tensor's metadata, and
// aten::zero_ (zero_grad's other op), whose output is zeros.
// Ops registered after the first attach are intercepted as usual.
void let_views_pass(std::vector<std::unique_ptr<::torch::Library>>& libraries) {
  auto& dispatcher = c10::Dispatcher::singleton();
  std::map<std::string, std::vector<std::string>> views;  // namespace -> "name.overload"
  for (const auto& name : dispatcher.getAllOpNames()) {
    const auto op = dispatcher.findSchema(name);
    // In-place views (detach_, squeeze_, t_, ...) change only self's metadata, never its values.
    if (!op || !(describe_op(op->schema()).views_only || op->hasTag(at::Tag::inplace_view) ||
                 name.name == "aten::zero_"))
      continue;
    const auto colons = name.name.find("::");
    if (colons == std::string::npos) continue;
    std::string local = name.name.substr(colons + 2);
    if (!name.overload_name.empty()) local += "." + name.overload_name;
    views[name.name.substr(0, colons)].push_back(std::move(local));
  }
  for (const auto& [ns, names] : views) {
    libraries.push_back(
        std::make_unique<::torch::Library>(::torch::Library::IMPL, ns, kModeKey, __FILE__, __LINE__));
    for (const auto& local : names) {
      try {
        libraries.back()->impl(local.c_str(), ::torch::CppFunction::makeFallthrough());
      } catch (const std::exception&) {
        // Left intercepted: on_op skips a view's outputs anyway.
      }
    }
  }
}

}  // namespace

// Registers on_op as the process's fallback for kModeKey, once (Note [Interception]).
void register_fallback() {
  static std::once_flag once;
  static std::string failure;
  std::call_once(once, [] {
    // Never destroyed: the registrations live as long as the process.
    static auto* libraries = new std::vector<std::unique_ptr<::torch::Library>>();
    try {
      libraries->push_back(
          std::make_unique<::torch::Library>(::torch::Library::IMPL, "_", kModeKey, __FILE__, __LINE__));
      libraries->back()->fallback(::torch::CppFunction::makeFromBoxedFunction<&on_op>());
      let_views_pass(*libraries);
      libraries->push_back(
          std::make_unique<::torch::Library>(::torch::Library::IMPL, "aten", kModeKey, __FILE__, __LINE__));
      register_hot_ops(*libraries->back());
    } catch (const std::exception& e) {
      failure = e.what();
    }
  });
  if (!failure.empty()) {
    throw Error(
        "tfdebug::torch::attach: cannot register the op fallback for the dispatch key "
        "TESTING_ONLY_GenericMode (does something else in this process use it?): " +
        failure);
  }
}

}  // namespace tfdebug::torch::detail
