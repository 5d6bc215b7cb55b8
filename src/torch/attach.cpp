// The LibTorch adapter's attachment: attach(), the step markers (parameters, gradients, updates),
// Scope, and what a pause shows. How ops are seen: interception.cpp (the dispatcher fallback),
// unboxed_ops.cpp, op_path.cpp (around each op); which module an op runs in:
// module_attribution.hpp (Note [Module of an op]).
#include "tfdebug/torch/attach.hpp"

#include <ATen/record_function.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "attach_state.hpp"
#include "interception.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::torch {

namespace detail {

void AttachState::set_interception(bool on) {
  c10::impl::tls_set_dispatch_key_included(kModeKey, on);  // this thread's, whichever it is
  if (on == intercepting) return;
  intercepting = on;
  if (on) {
    ranges = at::addGlobalCallback(
        at::RecordFunctionCallback(&on_range_start, &on_range_end).scopes({at::RecordScope::USER_SCOPE}));
  } else if (ranges) {
    at::removeCallback(*ranges);
    ranges.reset();
  }
}

void AttachState::record_failure(std::atomic<std::int64_t>& counter, const char* where) noexcept {
  counter.fetch_add(1, std::memory_order_relaxed);
  try {
    const std::lock_guard<std::mutex> lock(failure_mutex);
    if (!first_failure.empty()) return;
    std::string what = "an exception that is not a std::exception";
    try {
      throw;  // called from a catch block: the exception being handled
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    first_failure = std::string(where) + ": " + what;
  } catch (...) {
    // Out of memory while recording: the count stands.
  }
}

// Note [Gradients zeroed after the optimizer]
// A loop may zero its gradients after the optimizer (backward, opt.step(), opt.zero_grad()), as
// much PyTorch code does. Watch reads the gradients before the optimizer's first op on the steps
// it samples (and diagnose on every step: Note [Optimizer]), but at step_end on the others, where
// such a loop has left zeros: the gradient rules saw a history of zeros (blind: a loss scaled 1e4x
// at one step raised no exploding_gradients), and a loop that accumulates over four steps read
// "vanishing" at its optimizer steps. So each backward's end records each gradient's tensor and
// version (the hooks queue it), and step_end reads a gradient rewritten since then (zeroed, set
// to none, unscaled in place) from a copy made at that backward's end, as the other passes read
// it; the loop's first such step reads nothing of it, and turns the copies on.
std::optional<TensorView> AttachState::gradient_view(Parameter& p) {
  const at::Tensor& grad = p.tensor.grad();
  const std::uint64_t pass = generation.load(std::memory_order_relaxed);
  if (p.backward_end_pass != pass || (grad.defined() && grad.unsafeGetTensorImpl() == p.backward_end_impl &&
                                      grad._version() == p.backward_end_version))
    return view_of(grad);
  if (p.backward_end_copy_pass == pass) return view_of(p.backward_end_copy);
  copy_gradients = true;
  return std::nullopt;
}

// Note [Parameters that sit out a step]
// Not every parameter takes part in every step: a branch chosen per step, a layer that LayerDrop
// skipped, a task head whose task is not this batch's. After zero_grad() such a parameter's
// gradient is 0 (or stale, without it) and under plain SGD its update is 0: an alternating branch
// read as "vanishing" at its first step off, an unused head as "barely moves". Each parameter's
// hook notes the pass whose backward reached it; a parameter that no backward of a pass reached,
// while others were, has neither its gradient nor its update observed in that step.
//
// Note [A backward after the optimizer]
// A step can run its optimizer before its last backward: a GAN steps its discriminator, then
// backpropagates the generator's loss through it; L-BFGS evaluates its closure again after each
// update. The first op of an optimizer reads the gradients of the parameters the backward passes so
// far reached; a later backward's hooks ask for the rest, read at step_end. Each parameter's
// gradient is observed once a step: as the first optimizer after its backward used it. Before,
// only the first optimizer's were read: a GAN's generator took "no gradient in 100 steps"
// (unused_parameters, every run) and its gradients reached no rule. And the ops after an
// optimizer went unobserved (Note [Optimizer] in op_path.cpp stops intercepting at its first op),
// so diagnose could not name a NaN made in the generator's half of the step: once a loop is seen
// running a backward after an optimizer, the steps that intercept go on intercepting through the
// optimizer's ops (each run as is, unobserved), at the price of those ops' interception.
// What is taken for the optimizer is the first op after a backward without grad mode: a frozen
// backbone run under NoGradGuard in a second micro-batch is taken for it too, so its gradients
// are read after the first micro-batch. An update in a step with a backward after the gradients
// were read is then not judged as the optimizer's own doing (its gradient may have gone bad
// after the read): a NaN planted in a frozen-backbone model's third micro-batch was blamed on
// the optimizer's update of each head parameter as well as named at its op.
void AttachState::observe_gradients() {
  const auto now = step.load(std::memory_order_relaxed);
  const std::uint64_t pass = generation.load(std::memory_order_relaxed);
  for (auto& p : parameters) {
    if (sat_out(p) || p.gradient_observed_pass == pass) continue;
    auto view = gradient_view(p);
    if (!view) continue;
    p.gradient_observed_pass = pass;
    p.gradient_finite = deliver({now, Phase::backward, Role::gradient, module_paths().name(p.module),
                                 module_paths().name(p.name), *view, std::nullopt});
  }
}

// Note [Pause channel]: the adapter's pause point. The op's output and the inputs it kept are
// alive for the whole pause, and so is every parameter (and its gradient).
class TorchPausePoint final : public PausePoint {
 public:
  TorchPausePoint(const AttachState& state, const Observation& o, std::span<const at::Tensor> inputs)
      : state_(state), observation_(o) {
    for (const at::Tensor& t : inputs) {
      if (auto view = view_of(t)) inputs_.push_back(*view);
    }
  }
  const Observation& observation() const noexcept override { return observation_; }
  std::span<const TensorView> inputs() const noexcept override { return inputs_; }
  std::vector<std::string> tensor_names() const override {
    std::vector<std::string> names;
    for (const Parameter& p : state_.parameters) {
      names.emplace_back(module_paths().name(p.name));
      if (p.tensor.grad().defined()) names.push_back(names.back() + ".grad");
    }
    return names;
  }
  std::optional<TensorView> tensor(std::string_view name) const override {
    const bool gradient = name.size() > 5 && name.substr(name.size() - 5) == ".grad";
    const std::string_view parameter = gradient ? name.substr(0, name.size() - 5) : name;
    for (const Parameter& p : state_.parameters) {
      if (module_paths().name(p.name) == parameter) return view_of(gradient ? p.tensor.grad() : p.tensor);
    }
    return std::nullopt;
  }

 private:
  const AttachState& state_;
  const Observation& observation_;
  std::vector<TensorView> inputs_;
};

void AttachState::pause(const Observation& observation, std::span<const at::Tensor> inputs) {
  const TorchPausePoint point(*this, observation, inputs);
  sink->pause(point);  // blocks for as long as the sink wants; deliver() catches what it throws
}

// User scopes (RECORD_USER_SCOPE), from the RecordFunction ranges around them.
std::unique_ptr<at::ObserverContext> on_range_start(const at::RecordFunction& fn) {
  try {
    thread_state().scopes.push_back(module_paths().intern(fn.name()));
  } catch (...) {
    // Out of memory: the scope is not tracked, and its end pops nothing of it (see below).
    thread_state().scopes.push_back(0);
  }
  return nullptr;
}

void on_range_end(const at::RecordFunction& /*fn*/, at::ObserverContext* /*context*/) {
  auto& scopes = thread_state().scopes;
  if (!scopes.empty()) scopes.pop_back();
}

}  // namespace detail

namespace {

using detail::dtype_of;

// The one exception the step markers throw into the loop: the sink was told to stop at the
// first error and found one.
void throw_if_stopping(const ObservationSink& sink, std::int64_t step, const char* when) {
  if (sink.should_stop()) {
    throw Error(std::string("tfdebug: stopping ") + when + " step " + std::to_string(step) +
                ": the session found an error and was told to stop at the first one");
  }
}

void copy_values(const at::Tensor& tensor, std::vector<std::byte>& into) {
  into.resize(std::size_t(tensor.numel()) * tensor.element_size());
  std::memcpy(into.data(), tensor.data_ptr(), into.size());
}

// before[i] = now[i] - before[i]: the update, in place (a third buffer, cold by step_end, cost
// as much again to write).
template <typename T>
void subtract_from(const std::byte* now, std::byte* before, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    T a;
    T b;
    std::memcpy(&a, now + i * sizeof(T), sizeof(T));
    std::memcpy(&b, before + i * sizeof(T), sizeof(T));
    const T d = a - b;
    std::memcpy(before + i * sizeof(T), &d, sizeof(T));
  }
}

bool trackable(const at::Tensor& tensor) {
  return tensor.is_cpu() && tensor.is_contiguous() &&
         (tensor.scalar_type() == at::kFloat || tensor.scalar_type() == at::kDouble);
}

}  // namespace

// ---- Attachment ----------------------------------------------------------------------------------

Attachment attach(ObservationSink& sink, ::torch::nn::Module& module, const AttachOptions& options) {
  detail::register_fallback();
  auto state = std::make_unique<detail::AttachState>();
  state->sink = &sink;
  state->options = options;
  state->schedule = detail::WatchSchedule(
      {.every = options.watch_every, .every_max = options.watch_every_max, .budget = options.watch_budget});
  Interner& paths = detail::module_paths();
  detail::map_modules(module, paths, state->modules, state->module_of_storage);
  detail::for_each_module(module, [&](const std::string& path, ::torch::nn::Module& m) {
    const auto module_id = paths.intern(path);
    for (const auto& parameter : m.named_parameters(/*recurse=*/false)) {
      detail::Parameter p;
      p.name = paths.intern(path.empty() ? parameter.key() : path + "." + parameter.key());
      p.module = module_id;
      p.tensor = parameter.value();
      state->parameters.push_back(std::move(p));
    }
  });
  for (const auto& buffer : module.buffers(/*recurse=*/true)) state->buffers.push_back(buffer);
  detail::AttachState* expected = nullptr;
  if (!detail::live_attachment().compare_exchange_strong(expected, state.get())) {
    throw Error("tfdebug::torch::attach: another attachment is live in this process; destroy it first");
  }
  return Attachment(std::move(state));
}

Attachment::Attachment(std::unique_ptr<detail::AttachState> state) : state_(std::move(state)) {}
Attachment::Attachment(Attachment&& other) noexcept = default;
Attachment& Attachment::operator=(Attachment&& other) noexcept {
  if (this != &other) {
    detach();
    state_ = std::move(other.state_);
  }
  return *this;
}
Attachment::~Attachment() {
  detach();
}

void Attachment::detach() noexcept {
  if (!state_) return;
  state_->set_interception(false);
  state_->replay_armed.store(false);
  detail::remove_hooks(*state_);
  detail::live_attachment().store(nullptr, std::memory_order_release);
  // This thread's remembered tensors refer to the attachment's steps; forget them now.
  for (auto& seen : detail::thread_state().seen) seen = detail::SeenTensor{};
  state_.reset();
}

void detail::AttachState::begin_pass(std::int64_t at, Tier pass_tier, bool replaying, bool arm) {
  tier.store(pass_tier);
  // Note [Watch budget]: a watch pass is timed from here to step_end, for the schedule.
  timing = pass_tier == Tier::watch && !replaying;
  if (timing) pass_start = std::chrono::steady_clock::now();
  set_interception(pass_tier == Tier::diagnose || (!replaying && schedule.due(at)));
  if (intercepting) sampled_steps.fetch_add(1, std::memory_order_relaxed);
  step.store(at);
  generation.fetch_add(1);
  backward_seen.store(false);
  gradients_pending.store(true);
  backward_after_read.store(false);
  step_nonfinite.store(false);
  check_queued.store(false);
  // The hooks note which parameters each backward reaches (Note [Parameters that sit out a
  // step]) and, in a watch step that reads its gradients at step_end, record them at each
  // backward's end (Note [Gradients zeroed after the optimizer]).
  register_hooks(*this);
  for (auto& p : parameters) {
    p.gradient_finite.reset();
    p.value_finite.reset();
    p.seen_version = p.tensor._version();  // Note [A step that moved its parameters] (replay.cpp)
    if (!replaying) p.before_is_value = false;
    if (!intercepting) continue;  // Note [Op steps]: a watch step between the observed ones
    auto view = view_of(p.tensor);
    if (!view) continue;
    Observation value{
        at,    Phase::forward, Role::parameter, module_paths().name(p.module), module_paths().name(p.name),
        *view, std::nullopt};
    // Rule unused_parameters: a parameter whose gradient is sparse gets no gradient observation.
    const at::Tensor& grad = p.tensor.grad();
    value.trainable = p.tensor.requires_grad() && !(grad.defined() && grad.layout() != at::kStrided);
    p.value_finite = deliver(value);
    // A frozen parameter (requires_grad false: a fine-tuned model's backbone) is not meant to
    // move: its update of 0 would read as a layer that does not learn.
    if (!replaying && options.track_updates && p.tensor.requires_grad() && trackable(p.tensor)) {
      copy_values(p.tensor, p.before);
      p.before_is_value = true;
    }
  }
  if (arm) arm_replay(*this);
  in_step.store(true);
}

void Attachment::step_begin(std::int64_t step) {
  if (!state_) throw Error("tfdebug::torch: step_begin on a detached attachment");
  auto& s = *state_;
  throw_if_stopping(*s.sink, step, "before");
  s.in_step.store(false);
  s.replay_armed.store(false);
  s.sink->begin_step(step);
  s.begin_pass(step, s.sink->tier(), /*replaying=*/false, /*arm=*/false);
}

// Note [Replay] (replay.cpp)
std::optional<double> Attachment::run_step(std::int64_t step,
                                           const std::function<std::optional<double>()>& fn) {
  if (!state_) throw Error("tfdebug::torch: step on a detached attachment");
  auto& s = *state_;
  throw_if_stopping(*s.sink, step, "before");
  s.in_step.store(false);
  s.sink->begin_step(step);
  const Tier tier = s.sink->tier();
  s.begin_pass(step, tier, /*replaying=*/false, /*arm=*/s.options.replay && tier == Tier::watch);
  const bool armed = s.replay_armed.load();
  std::optional<double> loss;
  bool replay = false;
  try {
    loss = fn();
  } catch (const detail::ReplayRequest&) {
    replay = true;
  } catch (...) {
    s.replay_armed.store(false);
    s.in_step.store(false);
    throw;
  }
  s.replay_armed.store(false);
  // A bad loss (or a NaN the sink saw) with finite gradients, and the optimizer did not run.
  if (armed && !replay && ((loss && !std::isfinite(*loss)) || s.step_nonfinite.load()) &&
      detail::parameters_unchanged(s))
    replay = true;
  if (replay) {
    s.in_step.store(false);
    s.timing = false;  // a replayed step is no measure of a watch step
    detail::restore_for_replay(s);
    s.sink->restart_step(step);
    s.begin_pass(step, Tier::diagnose, /*replaying=*/true, /*arm=*/false);
    s.replays.fetch_add(1);
    try {
      loss = fn();
    } catch (...) {
      s.in_step.store(false);
      throw;
    }
  }
  step_end(step, loss);
  return loss;
}

void Attachment::step_end(std::int64_t step, std::optional<double> loss) {
  if (!state_) throw Error("tfdebug::torch: step_end on a detached attachment");
  auto& s = *state_;
  s.in_step.store(false);
  // Without interception this step, backward went unseen: the gradients are read here.
  const bool backward = s.backward_seen.load() || !s.intercepting;
  if (backward && s.gradients_pending.exchange(false)) s.observe_gradients();
  if (s.options.track_updates && backward) {
    for (auto& p : s.parameters) {
      if (s.sat_out(p)) {  // Note [Parameters that sit out a step]
        p.before_is_value = false;
        continue;
      }
      if (!trackable(p.tensor) || !p.before_is_value ||
          p.before.size() != std::size_t(p.tensor.numel()) * p.tensor.element_size()) {
        continue;
      }
      p.before_is_value = false;
      const auto* now = static_cast<const std::byte*>(p.tensor.data_ptr());
      if (p.tensor.scalar_type() == at::kFloat) {
        subtract_from<float>(now, p.before.data(), std::size_t(p.tensor.numel()));
      } else {
        subtract_from<double>(now, p.before.data(), std::size_t(p.tensor.numel()));
      }
      auto shape = p.tensor.sizes();
      if (shape.size() > std::size_t(kMaxRank)) continue;
      TensorView update(p.before.data(), *dtype_of(p.tensor.scalar_type()),
                        std::span<const std::int64_t>(shape.data(), shape.size()));
      // Note [Optimizer]: the update's inputs, unless the optimizer's own ops were observed.
      // Note [A backward after the optimizer]: a gradient read before the step's last backward
      // may not be the one the optimizer used.
      std::optional<bool> inputs_finite;
      if (!(s.options.optimizer_ops && s.intercepting) && !s.backward_after_read.load() && p.value_finite &&
          p.gradient_finite)
        inputs_finite = *p.value_finite && *p.gradient_finite;
      s.deliver({step, Phase::optimizer, Role::update, detail::module_paths().name(p.module),
                 detail::module_paths().name(p.name), update, inputs_finite});
    }
  }
  if ((loss && !std::isfinite(*loss)) || s.step_nonfinite.load()) s.parameters_suspect = true;
  for (const auto& p : s.parameters) {
    if (p.gradient_finite == false) s.parameters_suspect = true;
  }
  s.sink->end_step(step, loss);
  if (s.timing) {
    s.timing = false;
    s.schedule.ended(step, s.intercepting,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - s.pass_start).count());
  }
  throw_if_stopping(*s.sink, step, "after");
}

Attachment::Counters Attachment::counters() const noexcept {
  if (!state_) return {};
  const auto& s = *state_;
  Counters c{s.ops.load(),
             s.observed.load(),
             s.skipped_views.load(),
             s.skipped_duplicates.load(),
             s.skipped_uninitialised.load(),
             s.sink_failures.load(),
             s.hook_failures.load(),
             s.replays.load(),
             s.sampled_steps.load(),
             s.intercepting,
             {}};
  std::lock_guard<std::mutex> lock(state_->failure_mutex);
  c.first_failure = s.first_failure;
  return c;
}

// ---- Scope ---------------------------------------------------------------------------------------

std::string_view detail::current_scope() noexcept {
  const auto& scopes = detail::thread_state().scopes;
  return scopes.empty() ? std::string_view() : detail::module_paths().name(scopes.back());
}

std::uint32_t detail::current_scope_id() noexcept {
  const auto& scopes = detail::thread_state().scopes;
  return scopes.empty() ? 0 : scopes.back();
}

Scope::Scope(std::string_view path) {
  detail::thread_state().scopes.push_back(detail::module_paths().intern(path));
}
Scope::~Scope() {
  auto& scopes = detail::thread_state().scopes;
  if (!scopes.empty()) scopes.pop_back();
}
}  // namespace tfdebug::torch
