// The adapter's state: one AttachState per attachment (what attach() set up, the step's flags, the
// counters), and per thread the state of the ops it intercepts (ThreadState). Private to
// tfdebug::torch; shared by attach.cpp (the attachment and its step markers), interception.cpp
// (the boxed fallback), unboxed_ops.cpp and op_path.cpp (what happens around each op).
#pragma once

#include <ATen/core/MT19937RNGEngine.h>
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/record_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/csrc/autograd/function.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "module_attribution.hpp"
#include "op_info.hpp"
#include "tensor_views.hpp"
#include "tfdebug/session/observation.hpp"
#include "tfdebug/torch/attach.hpp"
#include "watch_schedule.hpp"

namespace tfdebug::torch::detail {

constexpr std::size_t kMaxInputs = 8;
constexpr std::size_t kSeen = 8;

// Note [Interception] (interception.cpp): the dispatch key the adapter's fallback is registered for.
constexpr c10::DispatchKey kModeKey = c10::DispatchKey::TESTING_ONLY_GenericMode;

// Note [Seen once] (op_path.cpp): a tensor observed this step.
struct SeenTensor {
  c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl> impl{
      c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>(
          c10::intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>())};
  std::int64_t version = -1;
  std::int8_t finite = -1;  // what the sink said of its values: -1 unknown, 0 some NaN/Inf, 1 finite
  // Its memory, for tensors that share it without being views (aten::_unsafe_view's output):
  // the storage, the first element's offset, the element count and type; contiguous tensors only.
  const c10::StorageImpl* storage = nullptr;
  std::int64_t offset = 0;
  std::int64_t numel = 0;
  at::ScalarType dtype = at::ScalarType::Undefined;
};

// The storage of a contiguous CPU tensor, nullptr for any other.
inline const c10::StorageImpl* contiguous_storage(const c10::TensorImpl& impl) {
  if (impl.layout() != at::kStrided || !impl.is_cpu() || !impl.is_contiguous()) return nullptr;
  return impl.unsafe_storage().unsafeGetStorageImpl();
}
struct ThreadState {
  std::uint64_t generation = 0;            // the step generation these fields belong to
  std::uint32_t last_module = 0;           // forward: the last parameter-reading op's module
  std::uint32_t last_backward_module = 0;  // backward: the last node's module
  // Note [A custom function's node]: the autograd sequence number after the thread's last
  // forward op this step (UINT64_MAX: none yet).
  std::uint64_t sequence_end = UINT64_MAX;
  std::vector<std::uint32_t> scopes;  // tfdebug::torch::Scope and USER_SCOPE paths
  // Note [Module of an op] (3): the op running on this thread whose inner ops are intercepted too
  // (AttachOptions::nested_ops), and its module.
  bool enclosed = false;
  std::uint32_t enclosing_module = 0;
  // The backward node of the thread's last backward op, its sequence number and what it means for
  // the op (Note [Current node]): its module, and whether it accumulates a gradient.
  const ::torch::autograd::Node* node = nullptr;
  std::uint64_t node_sequence = 0;
  std::uint32_t node_module = 0;
  bool node_accumulates = false;
  // Note [Channels]: a convolution ran since the last layer that is not one (or a normalisation
  // of channels) on this thread this step: outputs hold their units in dimension 1.
  bool channels_first = false;
  // Note [A backward after the optimizer] (attach.cpp): the thread's last op was the optimizer's.
  bool after_optimizer = false;
  std::array<SeenTensor, kSeen> seen;
  std::size_t seen_next = 0;
  std::unordered_map<const c10::FunctionSchema*, OpInfo> ops;
  std::array<std::pair<const c10::FunctionSchema*, const OpInfo*>, 256> recent_ops{};
};

inline ThreadState& thread_state() {
  thread_local ThreadState state;
  return state;
}

// One op call being observed: what the fallback keeps from before the op runs for after it.
struct OpCall {
  const OpInfo* info = nullptr;
  Phase phase = Phase::forward;
  std::uint32_t module = 0;
  bool observe = false;
  bool inputs_overflow = false;     // more floating inputs than kMaxInputs: finiteness unknown
  std::int8_t written_finite = -1;  // -1: no in-place input; else whether it was finite before
  InputKinds written_kinds;         // what the in-place inputs held before the op, when not finite
  std::int8_t unit_dim = -1;        // Observation::unit_dim of its outputs (Note [Channels])
  const ::torch::autograd::Node* node = nullptr;  // backward: the node it runs in, alive until it returns
  bool complete = false;  // every op of the step is observed (diagnose): inputs can be from outside
  std::uint8_t input_count = 0;
  std::array<at::Tensor, kMaxInputs> inputs;
};

// User scopes (RECORD_USER_SCOPE), from the RecordFunction ranges around them (attach.cpp).
std::unique_ptr<at::ObserverContext> on_range_start(const at::RecordFunction& fn);
void on_range_end(const at::RecordFunction& fn, at::ObserverContext* context);

struct Parameter {
  std::uint32_t name = 0;    // interned full name, "blocks.0.attn.q.weight"
  std::uint32_t module = 0;  // interned module path, "blocks.0.attn.q"
  at::Tensor tensor;
  // The value at step_begin (track_updates); step_end turns it into the update (new - old).
  std::vector<std::byte> before;
  bool before_is_value = false;  // false once step_end made it the update
  // What the sink said of its values at step_begin and of its gradient this step (Note
  // [Optimizer]); nullopt when it did not read them or they were not observed.
  std::optional<bool> value_finite;
  std::optional<bool> gradient_finite;
  // Note [Replay] (replay.cpp): the hook that checks the gradients after backward, the version
  // counter when the step began (the optimizer changes it), and the gradient as it was: none,
  // not yet written this step (its tensor and version then), copied by the first gradient of the
  // step's backward before it accumulated, or written by the step's own code first (zero_grad).
  std::optional<unsigned> hook;
  std::int64_t version = 0;
  enum class Gradient : std::uint8_t { none, unwritten, saved, rewritten } gradient_at_begin = Gradient::none;
  const void* gradient_impl = nullptr;
  std::int64_t gradient_version = 0;
  at::Tensor saved_gradient;
  // Note [Gradients zeroed after the optimizer] (attach.cpp): the gradient as the pass's last
  // backward left it (its tensor and version), and a copy of it once the loop was seen zeroing
  // gradients before step_end.
  // Note [Parameters that sit out a step] (attach.cpp): the last pass whose backward reached it.
  std::uint64_t gradient_pass = 0;
  // Note [A backward after the optimizer] (attach.cpp): the last pass that observed its gradient;
  // its version counter when last looked at, and the last pass that found it moved and not finite
  // (Note [A step that moved its parameters] in replay.cpp).
  std::uint64_t gradient_observed_pass = 0;
  std::int64_t seen_version = 0;
  std::uint64_t moved_nonfinite_pass = 0;
  std::uint64_t backward_end_pass = 0;  // the pass (`generation`) whose backward ended; 0: none
  const void* backward_end_impl = nullptr;
  std::int64_t backward_end_version = 0;
  at::Tensor backward_end_copy;
  std::uint64_t backward_end_copy_pass = 0;
};

struct AttachState {
  ObservationSink* sink = nullptr;
  AttachOptions options;
  // Note [Op steps]: ops are intercepted only in the steps that observe them (diagnose: every
  // step; watch: the steps its schedule samples), on the thread that calls step_begin.
  bool intercepting = false;
  WatchSchedule schedule{{}};  // Note [Watch budget]
  // This pass is a watch pass the schedule times (not diagnose, not a replay): since when.
  bool timing = false;
  std::chrono::steady_clock::time_point pass_start;
  std::atomic<std::int64_t> sampled_steps{0};
  std::optional<at::CallbackHandle> ranges;  // user scopes, while intercepting
  void set_interception(bool on);

  std::vector<Parameter> parameters;
  StorageModules module_of_storage;  // parameter storage -> module (Note [Module of an op])
  ModuleTree modules;                // module -> parent

  std::atomic<std::int64_t> step{0};
  std::atomic<bool> in_step{false};
  std::atomic<Tier> tier{Tier::watch};
  std::atomic<std::uint64_t> generation{1};
  std::atomic<bool> backward_seen{false};
  std::atomic<bool> gradients_pending{false};
  // Note [A backward after the optimizer] (attach.cpp): the loop ran a backward after an
  // optimizer's first op in a step; intercepting steps then go on intercepting through the optimizer.
  std::atomic<bool> backward_after_optimizer{false};
  // ... and in this pass: the gradients read before it may not be those the optimizer used.
  std::atomic<bool> backward_after_read{false};

  SequenceModules sequence_modules;  // Note [Module of an op]

  // Note [Replay] (replay.cpp)
  std::vector<at::Tensor> buffers;        // the module's buffers (BatchNorm's running statistics)
  std::vector<at::Tensor> saved_buffers;  // their values when the step began
  // LibTorch's default CPU generator's state then: its engine and its cached normal samples
  // (what get_state() holds, without building a tensor every step).
  struct GeneratorState {
    at::mt19937 engine;
    c10::optional<float> next_float;
    c10::optional<double> next_double;
  } saved_generator;
  bool hooks_registered = false;
  std::atomic<bool> replay_armed{false};    // this step can be replayed: the hooks check gradients
  std::atomic<bool> check_queued{false};    // this backward's check is queued
  std::atomic<bool> step_nonfinite{false};  // the sink saw a NaN or Inf in this pass of the step
  // A step ended with a NaN or Inf (its loss, a gradient, an op the sink saw): the parameters are
  // checked before the next step is armed, and until they are finite again (Note [Replay]).
  bool parameters_suspect = false;
  // The loop zeroes gradients after its optimizer (Note [Gradients zeroed after the optimizer]):
  // each backward's end copies them.
  bool copy_gradients = false;
  // The last pass whose backward reached any parameter (Note [Parameters that sit out a step]).
  std::uint64_t gradients_pass = 0;
  // A backward of this pass reached others but not p: its gradient and update are not this step's.
  bool sat_out(const Parameter& p) const noexcept {
    const std::uint64_t pass = generation.load(std::memory_order_relaxed);
    return gradients_pass == pass && p.gradient_pass != pass;
  }

  std::atomic<std::int64_t> ops{0};
  std::atomic<std::int64_t> observed{0};
  std::atomic<std::int64_t> skipped_views{0};
  std::atomic<std::int64_t> skipped_duplicates{0};
  std::atomic<std::int64_t> skipped_uninitialised{0};
  std::atomic<std::int64_t> sink_failures{0};
  std::atomic<std::int64_t> hook_failures{0};
  std::atomic<std::int64_t> replays{0};
  std::mutex failure_mutex;
  std::string first_failure;  // what the first sink or hook failure said

  // Nothing throws into the training loop (STYLE.md): a failure in the sink or in the adapter's
  // own bookkeeping is counted and the first one kept, and the op goes on.
  void record_failure(std::atomic<std::int64_t>& counter, const char* where) noexcept;

  // The sink's answer: whether the values were all finite, when it read them. When it answers
  // pause, the pause happens here (Note [Pause channel] in src/session/session.cpp), with
  // `inputs` (the op's kept inputs) alive.
  std::optional<bool> deliver(const Observation& observation, std::span<const at::Tensor> inputs = {}) {
    try {
      const Verdict verdict = sink->observe(observation);
      observed.fetch_add(1, std::memory_order_relaxed);
      if (verdict.finite == false && in_step.load(std::memory_order_relaxed))
        step_nonfinite.store(true, std::memory_order_relaxed);
      if (verdict.pause) pause(observation, inputs);
      return verdict.finite;
    } catch (...) {
      record_failure(sink_failures, "the sink's observe or pause");
      return std::nullopt;
    }
  }
  void pause(const Observation& observation, std::span<const at::Tensor> inputs);
  // Every parameter's gradient, as Role::gradient (Note [Gradients once]).
  void observe_gradients();
  // What to read of p's gradient now (Note [Gradients zeroed after the optimizer]).
  std::optional<TensorView> gradient_view(Parameter& p);
  // The start of a pass over step `step` in `tier`: the step's flags, the interception, every
  // parameter observed (and copied for its update, unless `replaying`: the copy of the first pass
  // stands), then in_step. `arm`: save what a replay needs first (Note [Replay]).
  void begin_pass(std::int64_t step, Tier tier, bool replaying, bool arm);
};

// Note [Replay] (replay.cpp)
// Saves what a replay of the step puts back; false (nothing armed) when a parameter was already
// not finite (a replay would see the same) or a gradient cannot be saved.
bool arm_replay(AttachState& s);
// Puts it back: the generator, the buffers, the gradients. With in_step false.
void restore_for_replay(AttachState& s);
// No parameter changed since arm_replay (the optimizer did not run).
bool parameters_unchanged(const AttachState& s);
// Each parameter written since it was last looked at that is no longer finite, observed in the
// optimizer phase, once a pass (Note [A step that moved its parameters]).
void observe_moved_parameters(AttachState& s);
// Removes the parameters' hooks (on detach).
void remove_hooks(AttachState& s) noexcept;
// A hook on each parameter that takes a gradient: the replay's (Note [Replay]) and the end of
// each backward's record of the gradients (Note [Gradients zeroed after the optimizer]).
void register_hooks(AttachState& s);
// Thrown by the end-of-backward check of an armed step to stop it before the optimizer.
struct ReplayRequest final : std::exception {
  const char* what() const noexcept override {
    return "tfdebug: a gradient is not finite; the step is stopped before the optimizer and replayed in "
           "diagnose";
  }
};

// The live attachment of the process, or nullptr.
inline std::atomic<AttachState*>& live_attachment() {
  static std::atomic<AttachState*> state{nullptr};
  return state;
}

}  // namespace tfdebug::torch::detail
