// The model and task behind `tfdebug demo`: a small transformer language model trained with
// LibTorch on a copy task (a random token sequence, a separator, then the same sequence again;
// the loss is on the copy), with optional injected faults. Shared by the CLI, the tests and the
// overhead benchmark. Torch's nn headers stay inside demo_model.cpp.
//
//   tfdebug::demo::DemoTrainer trainer(config);
//   auto debug = tfdebug::torch::attach(sink, trainer.model());
//   for (std::int64_t step = 0; step < config.steps; ++step) {
//     debug.step_begin(step);
//     debug.step_end(step, trainer.train_step());
//   }
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "tfdebug/core/tensor_view.hpp"

namespace at {
class Tensor;
}  // namespace at
namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace tfdebug::demo {

enum class Fault : std::uint8_t {
  none,
  lr,    // plain SGD with a learning rate far too high: gradients explode
  log,   // blocks.1.mlp takes log(2 + h) of its hidden layer, which goes below -2 as it trains
  sqrt,  // blocks.0.mlp takes sqrt(2 + h) the same way
  div,   // blocks.1.mlp divides its ReLU units by their norm, which vanishes for some tokens
  dead,  // blocks.0.mlp.fc1 initialised with a bias of -10: its ReLU units never fire
  init,  // every linear layer initialised 30x too large
};

inline constexpr std::string_view kFaultNames = "none|lr|log|sqrt|div|dead|init";
std::optional<Fault> parse_fault(std::string_view name);
std::string_view fault_name(Fault fault);

struct DemoConfig {
  std::int64_t steps = 200;
  std::uint64_t seed = 1;
  Fault fault = Fault::none;
  std::int64_t vocab = 16;  // tokens 1..vocab-1; 0 is the separator
  std::int64_t length = 8;  // tokens to copy; sequences are 2 * length + 1 long
  std::int64_t batch = 32;
  std::int64_t d_model = 32;
  std::int64_t heads = 4;
  std::int64_t layers = 2;
  std::int64_t d_ff = 64;
  double learning_rate = 3e-3;  // Adam (Fault::lr: SGD at 50)
};

class DemoTrainer {
 public:
  explicit DemoTrainer(const DemoConfig& config);
  ~DemoTrainer();
  DemoTrainer(const DemoTrainer&) = delete;
  DemoTrainer& operator=(const DemoTrainer&) = delete;

  ::torch::nn::Module& model();
  // One training step: a fresh batch, forward, loss, backward, optimizer step. Returns the loss.
  double train_step();
  // Accuracy of the copy on a fresh batch (no gradients).
  double evaluate();
  // For tests: the smallest value the injected log/sqrt fault took the log or sqrt of (or the
  // smallest norm the div fault divided by) in the last forward pass, when recording is on.
  void record_fault_argument(bool on);
  std::optional<double> last_fault_argument_min() const;
  std::int64_t parameter_count() const;
  // One forward pass of the model, without gradients, on a batch made now (so that running it
  // runs only the model's ops): what tfdebug::torch::trace_graph records.
  std::function<void()> forward_pass();
  // The model's logits [batch, n, vocab] for token ids [batch, n] (long, n <= 2 * length), in
  // eval mode's terms (the model has no dropout); what tfdebug explain --model demo explains.
  at::Tensor logits(const at::Tensor& tokens);
  // The same from token embeddings [batch, n, d_model] (rows of the token embedding, before the
  // positions are added): the gradient of a loss with respect to them gives a token attack's
  // one-hot gradient (tfdebug attack --model demo).
  at::Tensor logits_from_embeddings(const at::Tensor& embedded);
  // The token embedding matrix tok.weight, [vocab, d_model] f32; valid while the trainer lives.
  TensorView token_embedding() const;
  at::Tensor token_embedding_weight() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tfdebug::demo
