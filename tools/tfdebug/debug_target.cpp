#include "debug_target.hpp"

#include <filesystem>
#include <utility>

#include "demo_model.hpp"
#include "script_trainer.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/ide/shape_recorder.hpp"
#include "tfdebug/torch/attach.hpp"

namespace tfdebug::cli {

struct DebugTarget::Model {
  std::unique_ptr<demo::DemoTrainer> demo;
  std::unique_ptr<ScriptTrainer> script;
};

DebugTarget::DebugTarget(const DebugTargetOptions& options)
    : options_(options), model_(std::make_unique<Model>()) {
  const bool script = !options.model.empty();
  if (options.demo == script)
    throw Error(options.demo ? "expected --demo or --model, not both"
                             : "expected --demo (the demo's transformer LM) or --model M.pt --input X.npy");
  if (options.tier != "watch" && options.tier != "diagnose")
    throw Error("--tier: expected watch or diagnose, got '" + options.tier + "'");
  tier_ = options.tier == "watch" ? Tier::watch : Tier::diagnose;
  steps_ = options.steps >= 0 ? options.steps : (script ? 1 : 200);
  if (steps_ < 1) throw Error("--steps: expected at least 1");
  if (script) {
    if (options.input.empty()) throw Error("--model needs --input X.npy (the batch its forward runs on)");
    if (options.fault != "none") throw Error("--fault applies to --demo only");
    model_->script = std::make_unique<ScriptTrainer>(options.model, options.input, options.labels);
    return;
  }
  if (!options.input.empty() || !options.labels.empty())
    throw Error("--input and --labels apply to --model only");
  demo::DemoConfig config;
  config.steps = steps_;
  config.seed = options.seed;
  const auto fault = demo::parse_fault(options.fault);
  if (!fault)
    throw Error("--fault: unknown fault '" + options.fault + "'; expected " + std::string(demo::kFaultNames));
  config.fault = *fault;
  model_->demo = std::make_unique<demo::DemoTrainer>(config);
}

DebugTarget::~DebugTarget() = default;

std::string DebugTarget::description() const {
  const std::string run =
      "tier " + options_.tier + "; " + std::to_string(steps_) + (steps_ == 1 ? " step" : " steps");
  if (model_->script) {
    std::string shape;
    for (const std::int64_t d : model_->script->input_shape())
      shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    return options_.model + ", " + std::to_string(model_->script->parameter_count()) +
           " parameters; input [" + shape + "] from " + options_.input + "; " +
           (model_->script->has_labels() ? "cross-entropy on " + options_.labels + ", backward"
                                         : "forward only") +
           "; " + run;
  }
  return "demo transformer LM, " + std::to_string(model_->demo->parameter_count()) + " parameters; fault " +
         options_.fault + "; " + run + "; seed " + std::to_string(options_.seed);
}

void DebugTarget::add_sinks(Session& session) const {
  if (!options_.out.empty())
    session.add_sink(
        std::make_shared<ide::ShapeRecorder>((std::filesystem::path(options_.out) / "shapes.json").string()));
}

std::int64_t DebugTarget::run(Session& session, const std::function<bool()>& stop,
                              const std::function<void(std::int64_t, std::optional<double>)>& on_step) const {
  ::torch::nn::Module& module = model_->script ? model_->script->module() : model_->demo->model();
  auto debug = tfdebug::torch::attach(session, module);
  std::int64_t run = 0;
  for (std::int64_t step = 0; step < steps_ && !stop(); ++step) {
    const std::optional<double> loss = model_->script
                                           ? debug.step(step, [&] { return model_->script->train_step(); })
                                           : debug.step(step, [&] { return model_->demo->train_step(); });
    ++run;
    on_step(step, loss);
  }
  return run;
}

}  // namespace tfdebug::cli
