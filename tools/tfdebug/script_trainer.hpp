// A TorchScript model with data, run under tfdebug: `tfdebug console --model M.pt --input X.npy
// [--labels y.npy]` and the same for `tfdebug dap` (debug_target.hpp). Each step runs the
// model's forward on the whole input and, with labels, a cross-entropy loss and its backward, so
// that gradients exist; the parameters are not updated. The LibTorch adapter attaches to a
// torch::nn::Module: module() mirrors the script module's tree with the very same parameter and
// buffer tensors, so ops, module paths, parameters and gradients are the script module's.
// Torch's headers stay inside script_trainer.cpp.
//
//   tfdebug::cli::ScriptTrainer trainer("model.pt", "x.npy", "y.npy");   // throws tfdebug::Error
//   auto debug = tfdebug::torch::attach(session, trainer.module());
//   debug.step(0, [&] { return trainer.train_step(); });
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace tfdebug::cli {

class ScriptTrainer {
 public:
  // Loads the model and the data and runs the forward (and the loss) once to check that they fit;
  // tfdebug::Error naming the file or the option and what was expected otherwise. `labels` "":
  // forward only. A floating-point input is given to the model as f32, an integer one (token
  // ids) as i64; labels are class indices, one per row of the model's output ([n, C] or
  // [n, ..., C] with labels [n, ...]).
  ScriptTrainer(const std::string& model, const std::string& input, const std::string& labels);
  ~ScriptTrainer();
  ScriptTrainer(const ScriptTrainer&) = delete;
  ScriptTrainer& operator=(const ScriptTrainer&) = delete;

  ::torch::nn::Module& module();
  // One step: forward, and with labels the loss and backward (gradients are zeroed first).
  // Returns the loss, or nullopt without labels.
  std::optional<double> train_step();
  std::int64_t parameter_count() const;
  std::vector<std::int64_t> input_shape() const;
  bool has_labels() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tfdebug::cli
