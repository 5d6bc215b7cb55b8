// Probe: the any-framework producer. Call it from a hand-written forward pass, a ggml callback,
// an ONNX Runtime loop or any code that can show its tensors as TensorViews; it feeds the same
// Session, monitors and rules as the LibTorch adapter.
//
//   tfdebug::Session session(config);
//   tfdebug::Probe probe(session);
//   probe.begin_step(step);
//   probe.observe("layer1.relu", tfdebug::Phase::forward, hidden_view);   // module "layer1", op "relu"
//   probe.observe("layer1.log", tfdebug::Phase::forward, out_view, {in_view});  // producer check
//   probe.observe_parameter("layer1.weight", w_view);
//   probe.observe_gradient("layer1.weight", dw_view);
//   probe.observe_update("layer1.weight", delta_view);
//   probe.end_step(loss);     // throws tfdebug::Error here if the run should stop
//
// Names: the part after the last '.' is the op, the part before it the module ("relu" alone is
// op "relu" at the top level). Parameter names keep their full name as op and use the part
// before the last '.' as module. Views must stay valid only for the duration of each call.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>

#include "tfdebug/core/tensor_view.hpp"
#include "tfdebug/session/observation.hpp"

namespace tfdebug {

class Probe {
 public:
  explicit Probe(ObservationSink& sink) : sink_(&sink) {}

  void begin_step(std::int64_t step);
  // An op's output. `inputs_finite`: whether every input was finite, when the caller knows.
  void observe(std::string_view name, Phase phase, TensorView output,
               std::optional<bool> inputs_finite = std::nullopt);
  // An op's output and its inputs: the probe checks the inputs for NaN/Inf (with the stats
  // kernel) so the session can tell the op that produced a bad value from ops that passed it on.
  void observe(std::string_view name, Phase phase, TensorView output,
               std::initializer_list<TensorView> inputs);
  void observe(std::string_view name, Phase phase, TensorView output, std::span<const TensorView> inputs);
  void observe_parameter(std::string_view name, TensorView value);
  void observe_gradient(std::string_view name, TensorView gradient);
  void observe_update(std::string_view name, TensorView update);
  // Ends the step. Throws tfdebug::Error when the session asks to stop (stop_on_error).
  void end_step(std::optional<double> loss = std::nullopt);

  // True in Tier::diagnose: observe every op, not only module outputs.
  bool diagnosing() const noexcept { return sink_->tier() == Tier::diagnose; }
  std::int64_t step() const noexcept { return step_; }

 private:
  void observe_role(Role role, std::string_view name, TensorView value);

  ObservationSink* sink_;
  std::int64_t step_ = 0;
};

}  // namespace tfdebug
