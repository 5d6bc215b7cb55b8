#include "tfdebug/session/probe.hpp"

#include <string>
#include <vector>

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/stats.hpp"

namespace tfdebug {

namespace {

struct SplitName {
  std::string_view module;
  std::string_view op;
};

// "blocks.1.relu" -> {"blocks.1", "relu"}; "relu" -> {"", "relu"}.
SplitName split_name(std::string_view name) {
  const std::size_t dot = name.rfind('.');
  if (dot == std::string_view::npos) return {{}, name};
  return {name.substr(0, dot), name.substr(dot + 1)};
}

// Note [Pause channel]: the Probe stops right after the observation, with the caller's views.
class ProbePausePoint final : public PausePoint {
 public:
  ProbePausePoint(const Observation& o, std::span<const TensorView> inputs)
      : observation_(o), inputs_(inputs) {}
  const Observation& observation() const noexcept override { return observation_; }
  std::span<const TensorView> inputs() const noexcept override { return inputs_; }

 private:
  const Observation& observation_;
  std::span<const TensorView> inputs_;
};

// The caller's input views, for consumers of their shapes (inputs_finite is set beside it).
class ProbeInputs final : public InputsCheck {
 public:
  explicit ProbeInputs(std::span<const TensorView> inputs) : inputs_(inputs) {}
  std::optional<bool> inputs_finite() const override {
    for (const TensorView& input : inputs_) {
      if (is_floating(input.dtype()) && !all_finite(input)) return false;
    }
    return true;
  }
  std::vector<TensorView> input_views() const override { return {inputs_.begin(), inputs_.end()}; }

 private:
  std::span<const TensorView> inputs_;
};

void deliver(ObservationSink& sink, Observation o, std::span<const TensorView> inputs = {}) {
  const ProbeInputs probe_inputs(inputs);
  if (!inputs.empty()) o.inputs = &probe_inputs;
  if (sink.observe(o).pause) sink.pause(ProbePausePoint(o, inputs));
}

}  // namespace

void Probe::begin_step(std::int64_t step) {
  step_ = step;
  sink_->begin_step(step);
}

void Probe::observe(std::string_view name, Phase phase, TensorView output,
                    std::optional<bool> inputs_finite) {
  const SplitName split = split_name(name);
  deliver(*sink_, Observation{step_, phase, Role::output, split.module, split.op, output, inputs_finite});
}

void Probe::observe(std::string_view name, Phase phase, TensorView output,
                    std::initializer_list<TensorView> inputs) {
  observe(name, phase, output, std::span<const TensorView>(inputs.begin(), inputs.size()));
}

void Probe::observe(std::string_view name, Phase phase, TensorView output,
                    std::span<const TensorView> inputs) {
  bool finite = true;
  for (const TensorView& input : inputs) {
    if (is_floating(input.dtype()) && !all_finite(input)) {
      finite = false;
      break;
    }
  }
  const SplitName split = split_name(name);
  deliver(*sink_, Observation{step_, phase, Role::output, split.module, split.op, output, finite}, inputs);
}

void Probe::observe_role(Role role, std::string_view name, TensorView value) {
  const Phase phase = role == Role::gradient ? Phase::backward
                      : role == Role::update ? Phase::optimizer
                                             : Phase::forward;
  deliver(*sink_, Observation{step_, phase, role, split_name(name).module, name, value, std::nullopt});
}

void Probe::observe_parameter(std::string_view name, TensorView value) {
  observe_role(Role::parameter, name, value);
}

void Probe::observe_gradient(std::string_view name, TensorView gradient) {
  observe_role(Role::gradient, name, gradient);
}

void Probe::observe_update(std::string_view name, TensorView update) {
  observe_role(Role::update, name, update);
}

void Probe::end_step(std::optional<double> loss) {
  sink_->end_step(step_, loss);
  if (sink_->should_stop())
    throw Error("tfdebug: stopping at step " + std::to_string(step_) +
                ": an error-level finding was reported and the run was configured with "
                "stop_on_error");
}

}  // namespace tfdebug
