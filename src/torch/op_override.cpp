// Note [Op overrides] (op_override.hpp).
#include "op_override.hpp"

#include "attach_state.hpp"
#include "interception.hpp"
#include "op_path.hpp"

namespace tfdebug::torch::detail {
namespace {

thread_local OpOverride* thread_override = nullptr;

}  // namespace

OpOverride* current_override() noexcept {
  return thread_override;
}

void pass_through(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* stack) {
  op.redispatchBoxed(keys & kAfterMode, stack);
}

OverrideScope::OverrideScope(OpOverride& override)
    : previous_((register_fallback(), thread_override)), include_(kModeKey) {
  thread_override = &override;
}

OverrideScope::~OverrideScope() {
  thread_override = previous_;
}

void call_override(OpOverride& override, const c10::OperatorHandle& op, c10::DispatchKeySet keys,
                   ::torch::jit::Stack* stack) {
  const c10::impl::ExcludeDispatchKeyGuard outer_only(kModeKey);
  override.call(op, keys, stack);
}

}  // namespace tfdebug::torch::detail
