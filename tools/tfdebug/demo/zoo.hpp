// Models other than the demo's transformer LM, each with its own optimizer, data and faults planted
// at a known step: what tfdebug::torch is tested and measured on (tests/torch/zoo_test.cpp,
// bench/torch_overhead --model). The demo is one model among many, never the target.
//
//   tfdebug::demo::ZooTrainer trainer({.model = tfdebug::demo::ZooModel::cnn,
//                                      .fault = tfdebug::demo::ZooFault::dead_channel, .fault_step = 30});
//   auto debug = tfdebug::torch::attach(session, trainer.model());
//   for (std::int64_t step = 0; step < 100; ++step) {
//     trainer.before_step(step);                       // faults that corrupt state between steps
//     debug.step(step, [&] { return trainer.train_step(step); });
//   }
//
// Every batch is drawn from LibTorch's default CPU generator, so a step replayed with that
// generator restored trains on the same batch.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tfdebug/core/phase.hpp"

namespace torch::nn {
class Module;
}  // namespace torch::nn
namespace torch::optim {
class Optimizer;
}  // namespace torch::optim

namespace tfdebug::demo {

enum class ZooModel : std::uint8_t {
  mlp,      // 3 Linear + ReLU, SGD with momentum; 8 Gaussian clusters in 32-D
  cnn,      // 2 x (Conv2d + BatchNorm2d + ReLU) + pooling + Linear, Adam; bar images 12x12
  encoder,  // TransformerEncoderLayer x 2 with key-padding masks, AdamW; variable-length sequences
  gru,      // GRU + Linear, RMSprop; the sign of a running sum
  sigmoid,  // 8 x (Linear + Sigmoid), SGD; the MLP's data
};
inline constexpr std::string_view kZooModelNames = "mlp|cnn|encoder|gru|sigmoid";
std::optional<ZooModel> parse_zoo_model(std::string_view name);
std::string_view zoo_model_name(ZooModel model);

enum class ZooFault : std::uint8_t {
  none,
  domain,        // forward: log of a negative value in the model's own code (mlp, gru)
  backward_inf,  // log(softmax(x)) with one probability subnormal: finite forward, inf in backward (mlp)
  input_nan,     // a NaN in the input batch: the data is the producer (every model)
  masked_row,    // a sequence whose every key is padding: softmax of -inf only (encoder)
  lr_jump,       // the learning rate x 1000 from the fault step on (every model)
  dead_relu,     // the first layer's bias set to -100: its ReLUs never fire again (mlp)
  dead_channel,  // one channel of the first convolution zeroed: its ReLU channel is 0 (cnn)
  saturate,      // the first layer's weights x 50: the sigmoids saturate (sigmoid)
  param_nan,     // one weight overwritten with NaN between steps, outside any op (every model)
  f16_overflow,  // the input scaled by 1e5: activations beyond f16's range (mlp)
};
inline constexpr std::string_view kZooFaultNames =
    "none|domain|backward_inf|input_nan|masked_row|lr_jump|dead_relu|dead_channel|saturate|param_nan|"
    "f16_overflow";
std::optional<ZooFault> parse_zoo_fault(std::string_view name);
std::string_view zoo_fault_name(ZooFault fault);

struct ZooConfig {
  ZooModel model = ZooModel::mlp;
  ZooFault fault = ZooFault::none;
  std::int64_t fault_step = 20;  // the step the fault strikes (from then on for lr_jump, dead_*)
  std::uint64_t seed = 1;
  // Skip the optimizer step when the loss or a gradient is not finite, as AMP's GradScaler does:
  // the run survives its bad step, so that what comes after it can be compared.
  bool skip_nonfinite_steps = false;
};

// What tfdebug should say about a planted fault: the rule, where, and from which step.
struct ZooExpectation {
  std::string rule;    // "nonfinite", "dead_units", ...
  std::string module;  // the module path of the finding
  std::string op;      // the op, or the parameter's name
  Phase phase = Phase::forward;
  std::int64_t step = 0;  // the first step it may be reported (exactly, for nonfinite)
};

class ZooTrainer {
 public:
  explicit ZooTrainer(const ZooConfig& config);
  ~ZooTrainer();
  ZooTrainer(const ZooTrainer&) = delete;
  ZooTrainer& operator=(const ZooTrainer&) = delete;

  ::torch::nn::Module& model();
  ::torch::optim::Optimizer& optimizer();
  // Faults that corrupt the state between steps (param_nan) strike here, before step `step`.
  void before_step(std::int64_t step);
  // One training step: a fresh batch, forward, loss, backward, optimizer step. Returns the loss.
  double train_step(std::int64_t step);
  // Whether the faults this model supports include `fault`.
  static bool supports(ZooModel model, ZooFault fault);
  // What tfdebug should report for the configured fault (nullopt for none).
  std::optional<ZooExpectation> expectation() const;
  const ZooConfig& config() const noexcept;
  std::int64_t parameter_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tfdebug::demo
