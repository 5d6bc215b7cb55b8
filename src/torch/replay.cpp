// Replaying a bad watch step in diagnose (Attachment::step).
//
// Note [Replay]
// Watch, the default tier, sees parameters, gradients and updates every step and layer outputs
// every few steps, so when a NaN or Inf shows in a watch step it can say where it was seen (a
// gradient after backward), not which op made it: only diagnose, which observes every op,
// can. Diagnose costs every op of every step, so instead the step that went bad runs a second
// time in diagnose. Megatron-LM's rerun machinery does this for a whole iteration, configured by
// the user, to tell a transient fault from a deterministic one; here it is automatic, per step,
// and it names the op.
//
// The step is handed over as a callable (Attachment::step). What a replay needs is saved when an
// armed step begins (arm_replay): LibTorch's default CPU generator's engine (dropout, and a batch
// drawn from it), a copy of the module's buffers (BatchNorm's running statistics change in the
// forward), and each parameter's gradient as it was: none, or the version of the gradient
// tensor, and a copy made by its hook when the step's backward reaches it before the step's code
// wrote it (a loop that carries gradients into the step; a loop that zeroes them first costs no
// copy). Parameters and the optimizer's state are not copied: the
// step is stopped before the optimizer changes them. Each parameter that requires a gradient gets
// a hook, which the first gradient of a backward uses to queue a check at the end of that backward
// (Engine::queue_callback): when a gradient is not finite there, the check throws ReplayRequest,
// which leaves backward() and the rest of the user's callable (the optimizer step) unrun.
// A step whose gradients stay finite but whose loss is not (or where the sink saw a NaN or Inf),
// and after which no parameter changed (the optimizer did not run: the loop skips bad steps), is
// replayed too. restore_for_replay puts the saved state back, the sink forgets the first pass
// (ObservationSink::restart_step), and the callable runs again in diagnose, to its end: the
// optimizer then steps as it would have without tfdebug, so the run goes on from the state one
// run of the step leaves.
//
// A replay is exact when the callable is deterministic given that state: same ops, same random
// numbers, same batch. It is not when the callable draws its batch from a data loader that moves
// on (draw the batch outside the callable), uses another generator (CUDA's, a std::mt19937),
// runs non-deterministic kernels, or changes state the adapter does not save (a learning-rate
// scheduler stepped inside the callable, a counter). A replay that sees no NaN or Inf says so.
// Not replayed: a step whose parameters were already not finite when it began (the replay would
// see the same), a step already in diagnose, a NaN made by the optimizer itself (its update
// names it without a replay), and a step whose parameters moved before its gradients went bad
// (Note [A step that moved its parameters]). The parameters' values are read on the steps watch samples;
// after a step that ended with a NaN or Inf they are read again before each step is armed, until they are
// finite: a run whose weights went NaN and trains on replayed every later step, each at 2-3 times a step's
// cost, to find the same NaN (an embedding model under SGD: 39 replays in the 50 steps after its NaN, where
// one was due).
#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/GradMode.h>
#include <torch/csrc/autograd/engine.h>

#include <cstring>
#include <mutex>

#include "attach_state.hpp"
#include "tfdebug/core/stats.hpp"

namespace tfdebug::torch::detail {

namespace {

bool dense_cpu_float(const at::Tensor& t) {
  return t.defined() && t.layout() == at::kStrided && t.is_cpu() && t.is_floating_point();
}

// What a gradient holds: itself, or a sparse gradient's values (an Embedding with sparse=true),
// a view taken past the adapter's own interception.
at::Tensor gradient_values(const at::Tensor& grad) {
  if (!grad.defined() || grad.layout() != at::kSparse) return grad;
  const c10::impl::ExcludeDispatchKeyGuard unobserved(kModeKey);
  return grad._values();
}

// dst = src, for a dst made by empty_like(src) (or src.clone()): one memcpy when both are
// contiguous CPU tensors, which every buffer and gradient of a CPU model is (Tensor::copy_ costs
// ~4,000 instructions a call in TensorIterator set-up, a few dozen times a step).
void copy_into(at::Tensor& dst, const at::Tensor& src) {
  if (dst.is_cpu() && src.is_cpu() && dst.is_contiguous() && src.is_contiguous() &&
      dst.scalar_type() == src.scalar_type() && dst.sizes() == src.sizes() && !src.is_conj() &&
      !src.is_neg()) {
    std::memcpy(dst.data_ptr(), src.data_ptr(), src.nbytes());
  } else {
    dst.copy_(src);
  }
}

// Note [A step that moved its parameters]
// The replay puts back what arm_replay saved, and parameters are not among it: it counts on the
// step's gradients going bad before the optimizer moves them. An optimizer that evaluates the loss
// more than once a step moves them between its backward passes: L-BFGS calls its closure up to
// max_iter times in one step() and updates the parameters after each. On the iris set without a
// line search it diverged at step 5-10 in 3 of 4 runs: the step's first closure finite, its update
// NaN, the next closure's backward NaN. Replayed, the step began from the NaN parameters (watch
// said they "held them when the step began") and L-BFGS from a state its first pass had half
// updated, so the user's run was no longer one run of the step. So a step whose parameters moved
// before its gradients went bad is not replayed: it goes on as it would without tfdebug, and each
// parameter that moved and is no longer finite is observed there, in the optimizer phase: the
// step's own update made it so (its value and gradient were finite at the last check). A step
// that writes its parameters before its first backward (a clamp, an optimizer stepped first) is
// not replayed either: the replay would apply that write twice. A step that intercepts its ops
// makes the same observation at the first op of the forward after an optimizer (Note [A backward
// after the optimizer] in attach.cpp), before that forward reads the parameters: in diagnose,
// L-BFGS's next closure reported its first Linear "holds NaN (its inputs were already
// non-finite)" where the parameter its update wrote is the first non-finite value.

// The end of a backward: records each gradient as backward left it (Note [Gradients zeroed after
// the optimizer] in attach.cpp); in an armed step, throws ReplayRequest when one is not finite.
void end_of_backward(AttachState& s) {
  s.check_queued.store(false, std::memory_order_relaxed);
  const std::uint64_t pass = s.generation.load(std::memory_order_relaxed);
  for (Parameter& p : s.parameters) {
    const at::Tensor& grad = p.tensor.grad();
    if (!grad.defined()) continue;
    p.backward_end_pass = pass;
    p.backward_end_impl = grad.unsafeGetTensorImpl();
    p.backward_end_version = grad._version();
    if (!s.copy_gradients || !dense_cpu_float(grad)) continue;
    const at::NoGradGuard no_grad;
    if (!p.backward_end_copy.defined() || p.backward_end_copy.sizes() != grad.sizes() ||
        p.backward_end_copy.scalar_type() != grad.scalar_type())
      p.backward_end_copy = at::empty_like(grad, at::MemoryFormat::Preserve);
    copy_into(p.backward_end_copy, grad);
    p.backward_end_copy_pass = pass;
  }
  if (!s.replay_armed.load(std::memory_order_relaxed)) return;
  for (const Parameter& p : s.parameters) {
    const at::Tensor grad = gradient_values(p.tensor.grad());
    if (!dense_cpu_float(grad)) continue;
    auto view = view_of(grad);
    if (view && !all_finite(*view)) {
      s.replay_armed.store(false, std::memory_order_relaxed);
      if (parameters_unchanged(s)) throw ReplayRequest();
      observe_moved_parameters(s);  // Note [A step that moved its parameters]
      return;
    }
  }
}

// A parameter's gradient hook, before its gradient accumulates into .grad: notes the pass whose
// backward reached the parameter (Note [Parameters that sit out a step] in attach.cpp); in an
// armed step, keeps the gradient as the step began when the step's code has not written it (a
// loop that carries gradients into the step); and queues end_of_backward, once per backward.
void on_gradient(AttachState& s, Parameter& p) {
  // Note [Parameters that sit out a step] (attach.cpp)
  p.gradient_pass = s.gradients_pass = s.generation.load(std::memory_order_relaxed);
  // Note [A backward after the optimizer] (attach.cpp)
  if (!s.gradients_pending.load(std::memory_order_relaxed) && s.in_step.load(std::memory_order_relaxed)) {
    s.gradients_pending.store(true);
    s.backward_after_optimizer.store(true, std::memory_order_relaxed);
    s.backward_after_read.store(true, std::memory_order_relaxed);
  }
  if (s.replay_armed.load(std::memory_order_relaxed) &&
      p.gradient_at_begin == Parameter::Gradient::unwritten) {
    const at::Tensor& grad = p.tensor.grad();
    if (grad.defined() && grad.unsafeGetTensorImpl() == p.gradient_impl &&
        grad._version() == p.gradient_version) {
      const at::NoGradGuard no_grad;
      if (!p.saved_gradient.defined() || p.saved_gradient.sizes() != grad.sizes() ||
          p.saved_gradient.scalar_type() != grad.scalar_type())
        p.saved_gradient = at::empty_like(grad, at::MemoryFormat::Preserve);
      copy_into(p.saved_gradient, grad);
      p.gradient_at_begin = Parameter::Gradient::saved;
    } else {
      p.gradient_at_begin = Parameter::Gradient::rewritten;  // zero_grad: the replay does it again
    }
  }
  if (s.check_queued.exchange(true)) return;
  ::torch::autograd::Engine::get_default_engine().queue_callback([&s] { end_of_backward(s); });
}

}  // namespace

void register_hooks(AttachState& s) {
  if (s.hooks_registered) return;
  s.hooks_registered = true;
  for (Parameter& p : s.parameters) {
    if (!p.tensor.requires_grad()) continue;
    AttachState* state = &s;
    Parameter* parameter = &p;
    p.hook = p.tensor.register_hook(
        [state, parameter](const at::Tensor& /*grad*/) { on_gradient(*state, *parameter); });
  }
}

bool arm_replay(AttachState& s) {
  for (const Parameter& p : s.parameters) {
    if (p.value_finite == false) return false;
  }
  if (s.parameters_suspect) {  // the values, read once here when no sample read them this step
    for (const Parameter& p : s.parameters) {
      if (p.value_finite) continue;
      auto view = view_of(p.tensor);
      if (view && !all_finite(*view)) return false;
    }
    s.parameters_suspect = false;
  }
  register_hooks(s);
  const at::NoGradGuard no_grad;
  {
    auto generator = at::detail::getDefaultCPUGenerator();
    const std::lock_guard<std::mutex> lock(generator.mutex());
    auto* cpu = at::check_generator<at::CPUGeneratorImpl>(generator);
    s.saved_generator = {cpu->engine(), cpu->next_float_normal_sample(), cpu->next_double_normal_sample()};
  }
  s.saved_buffers.resize(s.buffers.size());
  for (std::size_t i = 0; i < s.buffers.size(); ++i) {
    const at::Tensor& buffer = s.buffers[i];
    at::Tensor& saved = s.saved_buffers[i];
    if (!buffer.defined()) continue;
    if (!saved.defined() || saved.sizes() != buffer.sizes() || saved.scalar_type() != buffer.scalar_type())
      saved = at::empty_like(buffer, at::MemoryFormat::Preserve);
    copy_into(saved, buffer);
  }
  for (Parameter& p : s.parameters) {
    p.version = p.tensor._version();
    const at::Tensor& grad = p.tensor.grad();
    if (!grad.defined()) {
      p.gradient_at_begin = Parameter::Gradient::none;
      continue;
    }
    // Copied only if the step's backward reaches it before the step's code writes it (on_gradient).
    p.gradient_at_begin = Parameter::Gradient::unwritten;
    p.gradient_impl = grad.unsafeGetTensorImpl();
    p.gradient_version = grad._version();
  }
  s.check_queued.store(false, std::memory_order_relaxed);
  s.replay_armed.store(true, std::memory_order_relaxed);
  return true;
}

void restore_for_replay(AttachState& s) {
  const at::NoGradGuard no_grad;
  {
    auto generator = at::detail::getDefaultCPUGenerator();
    const std::lock_guard<std::mutex> lock(generator.mutex());
    auto* cpu = at::check_generator<at::CPUGeneratorImpl>(generator);
    cpu->set_engine(s.saved_generator.engine);
    cpu->set_next_float_normal_sample(s.saved_generator.next_float);
    cpu->set_next_double_normal_sample(s.saved_generator.next_double);
  }
  for (std::size_t i = 0; i < s.buffers.size() && i < s.saved_buffers.size(); ++i) {
    if (s.buffers[i].defined() && s.saved_buffers[i].defined()) copy_into(s.buffers[i], s.saved_buffers[i]);
  }
  for (Parameter& p : s.parameters) {
    at::Tensor& grad = p.tensor.mutable_grad();
    switch (p.gradient_at_begin) {
      case Parameter::Gradient::none:
        grad.reset();
        break;
      case Parameter::Gradient::saved:
        if (grad.defined() && grad.sizes() == p.saved_gradient.sizes())
          copy_into(grad, p.saved_gradient);
        else
          grad = p.saved_gradient.clone();
        break;
      case Parameter::Gradient::unwritten:  // no gradient reached it: as it was, unless the
      case Parameter::Gradient::rewritten:  // step's code wrote it, which the replay does again
        break;
    }
  }
}

bool parameters_unchanged(const AttachState& s) {
  for (const Parameter& p : s.parameters) {
    if (p.tensor._version() != p.version) return false;
  }
  return true;
}

// Note [A step that moved its parameters]
void observe_moved_parameters(AttachState& s) {
  const std::int64_t step = s.step.load(std::memory_order_relaxed);
  const std::uint64_t pass = s.generation.load(std::memory_order_relaxed);
  for (Parameter& p : s.parameters) {
    const std::int64_t version = p.tensor._version();
    if (version == p.seen_version) continue;
    p.seen_version = version;
    if (p.moved_nonfinite_pass == pass) continue;
    auto view = view_of(p.tensor);
    if (!view || all_finite(*view)) continue;
    p.moved_nonfinite_pass = pass;
    s.deliver({step, Phase::optimizer, Role::parameter, module_paths().name(p.module),
               module_paths().name(p.name), *view, std::nullopt});
  }
}

void remove_hooks(AttachState& s) noexcept {
  for (Parameter& p : s.parameters) {
    if (!p.hook) continue;
    try {
      p.tensor.remove_hook(*p.hook);
    } catch (...) {
      // The tensor no longer takes gradients: its hooks went with that.
    }
    p.hook.reset();
  }
  s.hooks_registered = false;
}

}  // namespace tfdebug::torch::detail
