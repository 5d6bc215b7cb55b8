// TorchRuleModel and ParameterPaths (tfdebug/torch/rule_model.hpp): the forward under a
// RuleOverride (Note [Rules at ops] in rule_override.cpp), then one backward to the input only.
#include "tfdebug/torch/rule_model.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "batch_tensor.hpp"
#include "rule_override.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::torch {

struct ParameterPaths::Entries {
  std::map<const c10::StorageImpl*, std::string> modules;
  std::vector<at::Tensor> parameters;  // keeps the storages (the map's keys) alive
};

ParameterPaths::ParameterPaths() : entries_(std::make_unique<Entries>()) {}
ParameterPaths::~ParameterPaths() = default;
ParameterPaths::ParameterPaths(ParameterPaths&&) noexcept = default;
ParameterPaths& ParameterPaths::operator=(ParameterPaths&&) noexcept = default;

void ParameterPaths::add(const std::string& name, const at::Tensor& parameter) {
  if (!parameter.defined() || !parameter.has_storage()) return;
  const auto dot = name.rfind('.');
  entries_->modules[parameter.storage().unsafeGetStorageImpl()] =
      dot == std::string::npos ? std::string() : name.substr(0, dot);
  entries_->parameters.push_back(parameter);
}

const std::string* ParameterPaths::module_of(const at::Tensor& tensor) const {
  if (!entries_ || !tensor.defined() || !tensor.has_storage()) return nullptr;
  const auto it = entries_->modules.find(tensor.storage().unsafeGetStorageImpl());
  return it == entries_->modules.end() ? nullptr : &it->second;
}

bool ParameterPaths::empty() const {
  return !entries_ || entries_->modules.empty();
}

TorchRuleModel::TorchRuleModel(TorchModel::Forward forward, std::vector<std::int64_t> input_shape,
                               ParameterPaths parameters)
    : forward_(forward),
      plain_(std::move(forward), std::move(input_shape)),
      parameters_(std::move(parameters)) {}

namespace {

using detail::batch_of;

std::string first_line(std::string what) {
  if (const auto cut = what.find('\n'); cut != std::string::npos) what.resize(cut);  // c10's backtraces
  return what;
}

}  // namespace

void TorchRuleModel::rule_gradient(const TensorView& inputs, const TensorView* references,
                                   std::int64_t target, const interpret::BackwardRules& rules,
                                   std::span<float> scores, std::span<float> reference_scores,
                                   std::span<float> gradients) {
  const bool paired = rules.propagation == interpret::Propagation::deeplift_rescale;
  if (paired && references == nullptr) throw Error("DeepLIFT needs a reference for each input");
  const std::int64_t n = inputs.shape(0);
  at::Tensor batch = batch_of(inputs).clone();
  if (paired) {
    const at::Tensor r = batch_of(*references);
    if (r.sizes() != batch.sizes()) throw Error("the references' shape differs from the inputs'");
    batch = at::cat({batch, r}, 0);  // Note [DeepLIFT's pairs]
  }
  batch.set_requires_grad(true);
  const at::AutoGradMode grad_mode(true);
  detail::RuleOverride rule(rules, paired ? n : 0, parameters_);
  at::Tensor y;
  try {
    const detail::OverrideScope scope(rule);
    y = forward_(batch);
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw Error("the model's forward failed under backward rules: " + first_line(e.what()));
  }
  const std::int64_t rows = batch.size(0);
  if (y.dim() == 1) y = y.unsqueeze(1);
  if (y.dim() != 2 || y.size(0) != rows || y.size(1) != output_size())
    throw Error("the model's outputs changed shape under backward rules");
  const at::Tensor score = y.select(1, target);
  const at::Tensor own = score.narrow(0, 0, n);
  // Gradients to the input only: the parameters' .grad stay as they were. An output that does not
  // depend on the input has no graph: its gradient is zero.
  const at::Tensor total = own.sum();
  at::Tensor g;
  if (total.requires_grad()) {
    g = ::torch::autograd::grad({total}, {batch}, {}, /*retain_graph=*/false, /*create_graph=*/false,
                                /*allow_unused=*/true)[0];
  }
  const at::Tensor s = score.detach().to(at::kFloat).contiguous();
  std::copy_n(s.data_ptr<float>(), n, scores.begin());
  if (paired) std::copy_n(s.data_ptr<float>() + n, n, reference_scores.begin());
  if (g.defined()) {
    const at::Tensor own_grad = g.narrow(0, 0, n).contiguous();
    std::copy_n(own_grad.data_ptr<float>(), own_grad.numel(), gradients.begin());
  } else {
    std::fill(gradients.begin(), gradients.end(), 0.0f);
  }
}

}  // namespace tfdebug::torch
