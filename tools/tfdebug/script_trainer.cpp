// Apart from debug_target.cpp because torch/script.h is what clang-tidy cannot parse
// (scripts/lint.sh).
#include "script_trainer.hpp"

#include <torch/nn/module.h>
#include <torch/script.h>

#include <ATen/ops/cross_entropy_loss.h>
#include <ATen/ops/from_blob.h>
#include <cmath>
#include <string>
#include <utility>

#include "tfdebug/core/dtype.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/tensor.hpp"
#include "tfdebug/io/model_file.hpp"

namespace tfdebug::cli {

namespace {

// The first line of what LibTorch threw (its messages carry a C++ backtrace after it).
std::string first_line(const std::exception& e) {
  std::string what = e.what();
  if (const auto cut = what.find('\n'); cut != std::string::npos) what.resize(cut);
  return what;
}

// A .npy file's array as a tensor: floating point as f32, integers as i64.
at::Tensor read_array(const std::string& path, const char* option) {
  if (!path.ends_with(".npy"))
    throw Error(std::string(option) + ": expected a .npy file, got '" + path + "'");
  const io::ModelFile file = io::ModelFile::open(path);
  if (file.tensors().size() != 1) throw Error(path + ": expected one array");
  const io::NamedTensor& t = file.tensors().front();
  if (t.quantized) throw Error(path + ": a block-quantised array cannot be an input");
  const auto shape = t.view.shape();
  std::vector<std::int64_t> sizes(shape.begin(), shape.end());
  if (t.view.numel() == 0) throw Error(path + ": the array is empty");
  const Tensor values = Tensor::copy_of(t.view, DType::f32);
  const auto data = values.values<float>();
  at::Tensor out =
      at::from_blob(const_cast<float*>(data.data()), sizes, at::TensorOptions().dtype(at::kFloat)).clone();
  if (is_floating(t.view.dtype())) return out;
  for (const float v : data) {
    if (v != std::floor(v) || std::abs(v) > 16777216.0F)
      throw Error(path + ": integer array with a value an i64 index cannot be: " + std::to_string(v));
  }
  return out.to(at::kLong);
}

// An nn::Module holding the script module's own parameter and buffer tensors, submodules by the
// same names: what tfdebug::torch::attach reads module paths, parameters and gradients from.
std::shared_ptr<::torch::nn::Module> mirror(const ::torch::jit::Module& script) {
  auto module = std::make_shared<::torch::nn::Module>();
  for (const auto& p : script.named_parameters(/*recurse=*/false))
    module->register_parameter(p.name, p.value, p.value.requires_grad());
  for (const auto& b : script.named_buffers(/*recurse=*/false)) module->register_buffer(b.name, b.value);
  for (const auto& child : script.named_children()) module->register_module(child.name, mirror(child.value));
  return module;
}

}  // namespace

struct ScriptTrainer::State {
  ::torch::jit::Module script;
  std::shared_ptr<::torch::nn::Module> module;
  at::Tensor input;
  at::Tensor labels;  // undefined: forward only

  at::Tensor forward() {
    const c10::IValue out = script.forward({input});
    if (!out.isTensor()) throw Error("the model's forward returned no tensor (expected logits)");
    return out.toTensor();
  }
  at::Tensor loss_of(const at::Tensor& logits) const {
    const std::int64_t classes = logits.size(-1);
    return at::cross_entropy_loss(logits.reshape({-1, classes}), labels.reshape({-1}));
  }
};

ScriptTrainer::ScriptTrainer(const std::string& model, const std::string& input, const std::string& labels)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  try {
    s.script = ::torch::jit::load(model, at::Device(at::kCPU));
  } catch (const std::exception& e) {
    throw Error(model +
                ": not a TorchScript file torch::jit::load can read (save one with "
                "torch.jit.script(model).save(path)): " +
                first_line(e));
  }
  s.input = read_array(input, "--input");
  if (!labels.empty()) s.labels = read_array(labels, "--labels");
  if (s.labels.defined() && s.labels.scalar_type() != at::kLong)
    throw Error(labels + ": expected integer class indices");
  s.script.train(s.labels.defined());
  s.module = mirror(s.script);
  // One forward (and loss) now, untraced, so that a model and data that do not fit fail here with
  // one line instead of inside the debugged run.
  at::Tensor logits;
  try {
    const at::NoGradGuard no_grad;
    logits = s.forward();
  } catch (const Error& e) {
    throw Error(model + ": " + e.what());
  } catch (const std::exception& e) {
    throw Error(model + ": the forward failed on " + input + ": " + first_line(e));
  }
  if (!s.labels.defined()) return;
  if (logits.dim() < 2 || !at::isFloatingType(logits.scalar_type()))
    throw Error(model + ": --labels needs floating-point logits [n, C] from the forward, got " +
                std::to_string(logits.dim()) + " dimension(s)");
  if (logits.numel() / logits.size(-1) != s.labels.numel())
    throw Error(labels + ": " + std::to_string(s.labels.numel()) + " labels for " +
                std::to_string(logits.numel() / logits.size(-1)) +
                " rows of logits (expected one class index per row)");
  const std::int64_t classes = logits.size(-1);
  if (s.labels.min().item<std::int64_t>() < 0 || s.labels.max().item<std::int64_t>() >= classes)
    throw Error(labels + ": a class index outside 0.." + std::to_string(classes - 1));
}

ScriptTrainer::~ScriptTrainer() = default;

::torch::nn::Module& ScriptTrainer::module() {
  return *state_->module;
}

std::optional<double> ScriptTrainer::train_step() {
  State& s = *state_;
  if (!s.labels.defined()) {
    (void)s.forward();
    return std::nullopt;
  }
  for (auto& p : s.module->parameters()) {
    if (p.grad().defined()) p.mutable_grad() = at::Tensor();
  }
  const at::Tensor loss = s.loss_of(s.forward());
  loss.backward();
  return loss.item<double>();
}

std::int64_t ScriptTrainer::parameter_count() const {
  std::int64_t n = 0;
  for (const auto& p : state_->module->parameters()) n += p.numel();
  return n;
}

std::vector<std::int64_t> ScriptTrainer::input_shape() const {
  const auto sizes = state_->input.sizes();
  return {sizes.begin(), sizes.end()};
}

bool ScriptTrainer::has_labels() const {
  return state_->labels.defined();
}

}  // namespace tfdebug::cli
