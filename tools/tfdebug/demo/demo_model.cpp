// The demo's transformer LM, its copy task and its faults (demo_model.hpp).
#include "demo_model.hpp"

#include <torch/nn/functional/loss.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include <array>
#include <cmath>
#include <vector>

namespace tfdebug::demo {
namespace {

constexpr std::array<std::string_view, 7> kNames = {"none", "lr", "log", "sqrt", "div", "dead", "init"};

// What a fault's log, sqrt or division is applied to: h + kShift for log and sqrt. The hidden
// layer starts with a standard deviation near 0.6, so nothing is negative at first; training
// stretches it until some values fall below -kShift.
constexpr double kShift = 4.0;
constexpr std::int64_t kGroup = 8;  // Fault::div normalises groups of 8 ReLU units

struct Attention : ::torch::nn::Module {
  Attention(std::int64_t d_model, std::int64_t heads)
      : heads_(heads),
        q(register_module("q", ::torch::nn::Linear(d_model, d_model))),
        k(register_module("k", ::torch::nn::Linear(d_model, d_model))),
        v(register_module("v", ::torch::nn::Linear(d_model, d_model))),
        o(register_module("o", ::torch::nn::Linear(d_model, d_model))) {}

  at::Tensor forward(const at::Tensor& x, const at::Tensor& mask) {
    const auto batch = x.size(0);
    const auto length = x.size(1);
    const auto d_model = x.size(2);
    const auto d_head = d_model / heads_;
    auto split = [&](const at::Tensor& t) { return t.view({batch, length, heads_, d_head}).transpose(1, 2); };
    auto scores = at::matmul(split(q(x)), split(k(x)).transpose(-2, -1)) / std::sqrt(double(d_head)) + mask;
    auto mixed = at::matmul(at::softmax(scores, -1), split(v(x)));
    return o(mixed.transpose(1, 2).contiguous().view({batch, length, d_model}));
  }

  std::int64_t heads_;
  ::torch::nn::Linear q, k, v, o;
};

struct Mlp : ::torch::nn::Module {
  Mlp(std::int64_t d_model, std::int64_t d_ff, Fault fault)
      : fault_(fault),
        fc1(register_module("fc1", ::torch::nn::Linear(d_model, d_ff))),
        fc2(register_module("fc2", ::torch::nn::Linear(d_ff, d_model))) {}

  at::Tensor forward(const at::Tensor& x) {
    auto h = fc1(x);
    switch (fault_) {
      case Fault::log:
        if (record_) argument_min_ = (h + kShift).min().item<double>();
        h = at::log(h + kShift);
        break;
      case Fault::sqrt:
        if (record_) argument_min_ = (h + kShift).min().item<double>();
        h = at::sqrt(h + kShift);
        break;
      case Fault::div: {
        auto grouped = at::relu(h).view({h.size(0), h.size(1), h.size(2) / kGroup, kGroup});
        auto norm = grouped.norm(2, {-1}, /*keepdim=*/true);
        if (record_) argument_min_ = norm.min().item<double>();
        h = (grouped / norm).view(h.sizes());
        break;
      }
      default:
        h = at::relu(h);
    }
    return fc2(h);
  }

  Fault fault_;
  bool record_ = false;
  std::optional<double> argument_min_;
  ::torch::nn::Linear fc1, fc2;
};

struct Block : ::torch::nn::Module {
  Block(const DemoConfig& c, Fault mlp_fault)
      : ln1(register_module("ln1", ::torch::nn::LayerNorm(::torch::nn::LayerNormOptions({c.d_model})))),
        attn(register_module("attn", std::make_shared<Attention>(c.d_model, c.heads))),
        ln2(register_module("ln2", ::torch::nn::LayerNorm(::torch::nn::LayerNormOptions({c.d_model})))),
        mlp(register_module("mlp", std::make_shared<Mlp>(c.d_model, c.d_ff, mlp_fault))) {}

  at::Tensor forward(const at::Tensor& x, const at::Tensor& mask) {
    auto h = x + attn->forward(ln1(x), mask);
    return h + mlp->forward(ln2(h));
  }

  ::torch::nn::LayerNorm ln1;
  std::shared_ptr<Attention> attn;
  ::torch::nn::LayerNorm ln2;
  std::shared_ptr<Mlp> mlp;
};

// Which block's MLP carries a fault: log and div in block 1 (the last, with 2 blocks), sqrt and
// dead in block 0.
std::int64_t fault_block(const DemoConfig& c) {
  switch (c.fault) {
    case Fault::log:
    case Fault::div:
      return std::min<std::int64_t>(1, c.layers - 1);
    case Fault::sqrt:
    case Fault::dead:
      return 0;
    default:
      return -1;
  }
}

struct TransformerLm : ::torch::nn::Module {
  explicit TransformerLm(const DemoConfig& c)
      : tok(register_module("tok", ::torch::nn::Embedding(c.vocab, c.d_model))),
        pos(register_module("pos", ::torch::nn::Embedding(2 * c.length, c.d_model))),
        blocks(register_module("blocks", ::torch::nn::ModuleList())),
        ln_f(register_module("ln_f", ::torch::nn::LayerNorm(::torch::nn::LayerNormOptions({c.d_model})))),
        head(register_module("head", ::torch::nn::Linear(c.d_model, c.vocab))) {
    const auto faulty = fault_block(c);
    for (std::int64_t i = 0; i < c.layers; ++i) {
      const bool mlp_fault = i == faulty && c.fault != Fault::dead;
      block_list.push_back(std::make_shared<Block>(c, mlp_fault ? c.fault : Fault::none));
      blocks->push_back(block_list.back());
    }
    const auto length = 2 * c.length;
    mask = at::triu(at::full({length, length}, -1e9), 1);  // causal; finite so no -inf is seen
  }

  at::Tensor forward(const at::Tensor& tokens) { return forward_embedded(tok(tokens)); }

  // The same from the token embeddings [batch, n, d_model] (before the positions are added).
  at::Tensor forward_embedded(const at::Tensor& embedded) {
    const auto n = embedded.size(1);
    auto x = embedded + pos(at::arange(n, at::kLong));
    // Shorter sequences (explain's inputs) take the mask's top-left corner; training's full ones
    // run the mask itself, as always.
    const at::Tensor causal = n == mask.size(0) ? mask : mask.slice(0, 0, n).slice(1, 0, n);
    for (auto& block : block_list) x = block->forward(x, causal);
    return head(ln_f(x));
  }

  ::torch::nn::Embedding tok, pos;
  ::torch::nn::ModuleList blocks;
  std::vector<std::shared_ptr<Block>> block_list;
  ::torch::nn::LayerNorm ln_f;
  ::torch::nn::Linear head;
  at::Tensor mask;
};

}  // namespace

std::optional<Fault> parse_fault(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return Fault(i);
  }
  return std::nullopt;
}

std::string_view fault_name(Fault fault) {
  return kNames[std::size_t(fault)];
}

struct DemoTrainer::Impl {
  DemoConfig config;
  std::shared_ptr<TransformerLm> model;
  std::unique_ptr<::torch::optim::Optimizer> optimizer;
  std::shared_ptr<Mlp> faulty_mlp;

  // A batch of the copy task: inputs and targets, both [batch, 2 * length].
  std::pair<at::Tensor, at::Tensor> batch() const {
    auto tokens = at::randint(1, config.vocab, {config.batch, config.length}, at::kLong);
    auto separator = at::zeros({config.batch, 1}, at::kLong);
    auto sequence = at::cat({tokens, separator, tokens}, 1);
    return {sequence.slice(1, 0, 2 * config.length), sequence.slice(1, 1, 2 * config.length + 1)};
  }
};

DemoTrainer::DemoTrainer(const DemoConfig& config) : impl_(std::make_unique<Impl>()) {
  impl_->config = config;
  ::torch::manual_seed(config.seed);
  impl_->model = std::make_shared<TransformerLm>(config);
  auto& model = *impl_->model;
  {
    ::torch::NoGradGuard no_grad;
    if (config.fault == Fault::dead) model.block_list[0]->mlp->fc1->bias.fill_(-10.0);
    if (config.fault == Fault::init) {
      for (auto& p : model.named_parameters()) {
        if (p.key().ends_with(".weight") && p.value().dim() == 2 && p.key().find("ln") == std::string::npos) {
          p.value().mul_(30.0);
        }
      }
    }
  }
  const auto block = fault_block(config);
  if (block >= 0 && config.fault != Fault::dead)
    impl_->faulty_mlp = model.block_list[std::size_t(block)]->mlp;
  if (config.fault == Fault::lr) {
    impl_->optimizer =
        std::make_unique<::torch::optim::SGD>(model.parameters(), ::torch::optim::SGDOptions(50.0));
  } else {
    impl_->optimizer = std::make_unique<::torch::optim::Adam>(
        model.parameters(), ::torch::optim::AdamOptions(config.learning_rate));
  }
}

DemoTrainer::~DemoTrainer() = default;

::torch::nn::Module& DemoTrainer::model() {
  return *impl_->model;
}

double DemoTrainer::train_step() {
  auto [inputs, targets] = impl_->batch();
  const auto& c = impl_->config;
  auto logits = impl_->model->forward(inputs).slice(1, c.length, 2 * c.length);
  auto loss = ::torch::nn::functional::cross_entropy(logits.reshape({-1, c.vocab}),
                                                     targets.slice(1, c.length, 2 * c.length).reshape({-1}));
  impl_->optimizer->zero_grad();
  loss.backward();
  impl_->optimizer->step();
  return loss.item<double>();
}

double DemoTrainer::evaluate() {
  ::torch::NoGradGuard no_grad;
  auto [inputs, targets] = impl_->batch();
  const auto& c = impl_->config;
  auto predicted = impl_->model->forward(inputs).slice(1, c.length, 2 * c.length).argmax(-1);
  return predicted.eq(targets.slice(1, c.length, 2 * c.length)).to(at::kDouble).mean().item<double>();
}

void DemoTrainer::record_fault_argument(bool on) {
  if (impl_->faulty_mlp) impl_->faulty_mlp->record_ = on;
}

std::optional<double> DemoTrainer::last_fault_argument_min() const {
  if (!impl_->faulty_mlp) return std::nullopt;
  return impl_->faulty_mlp->argument_min_;
}

std::int64_t DemoTrainer::parameter_count() const {
  std::int64_t count = 0;
  for (const auto& p : impl_->model->parameters()) count += p.numel();
  return count;
}

std::function<void()> DemoTrainer::forward_pass() {
  auto inputs = impl_->batch().first.contiguous();
  return [model = impl_->model, inputs] {
    ::torch::NoGradGuard no_grad;
    (void)model->forward(inputs);
  };
}

at::Tensor DemoTrainer::logits(const at::Tensor& tokens) {
  return impl_->model->forward(tokens);
}

at::Tensor DemoTrainer::logits_from_embeddings(const at::Tensor& embedded) {
  return impl_->model->forward_embedded(embedded);
}

at::Tensor DemoTrainer::token_embedding_weight() const {
  return impl_->model->tok->weight;
}

TensorView DemoTrainer::token_embedding() const {
  const at::Tensor& w = impl_->model->tok->weight;
  const std::array<std::int64_t, 2> shape = {w.size(0), w.size(1)};
  return TensorView(w.data_ptr<float>(), DType::f32, shape);
}

}  // namespace tfdebug::demo
