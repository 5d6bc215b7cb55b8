// The models, data and faults of zoo.hpp.
#include "zoo.hpp"

#include <torch/nn/functional/activation.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/modules/transformercoder.h>
#include <torch/nn/modules/transformerlayer.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/rmsprop.h>
#include <torch/optim/sgd.h>
#include <torch/utils.h>

#include <array>
#include <cmath>
#include <limits>

namespace tfdebug::demo {
namespace {

constexpr std::array<std::string_view, 5> kModels = {"mlp", "cnn", "encoder", "gru", "sigmoid"};
constexpr std::array<std::string_view, 11> kFaults = {
    "none",      "domain",       "backward_inf", "input_nan", "masked_row",  "lr_jump",
    "dead_relu", "dead_channel", "saturate",     "param_nan", "f16_overflow"};

constexpr std::int64_t kFeatures = 32;  // mlp, sigmoid
constexpr std::int64_t kClasses = 8;

// Every task's labels are 10% noise, so that no model learns its task perfectly: a loss that goes
// to 0 makes every gradient vanish, which is not what a real run looks like.
at::Tensor with_label_noise(const at::Tensor& labels, std::int64_t classes) {
  auto noisy = at::rand({labels.size(0)}) < 0.1;
  return at::where(noisy, at::randint(0, classes, {labels.size(0)}, at::kLong), labels);
}

// A NaN written into a batch by a data loader: straight into memory, not through an aten op.
void plant_nan(at::Tensor& batch) {
  batch.data_ptr<float>()[5] = std::numeric_limits<float>::quiet_NaN();
}
// The data of the mlp and sigmoid models: kClasses Gaussian clusters around fixed centres.
struct Clusters {
  at::Tensor centres;  // [kClasses, kFeatures]
  Clusters() {
    // The same task for every seed: its own generator.
    auto generator = at::detail::createCPUGenerator(1234);
    centres = at::randn({kClasses, kFeatures}, generator) * 2.0;
  }
  std::pair<at::Tensor, at::Tensor> batch(std::int64_t n) const {
    auto labels = at::randint(0, kClasses, {n}, at::kLong);
    auto x = centres.index_select(0, labels) + at::randn({n, kFeatures});
    return {x, with_label_noise(labels, kClasses)};
  }
};

// The nonfinite fault's site in the model's own code (Fault::domain): log(h + 1 + shift), with a
// shift that makes the argument negative at the fault step.
at::Tensor domain_site(const at::Tensor& h, bool strike) {
  return at::log(h + (strike ? -10.0 : 1.0));
}

struct Mlp : ::torch::nn::Module {
  explicit Mlp(ZooFault fault)
      : fault_(fault),
        fc1(register_module("fc1", ::torch::nn::Linear(kFeatures, 128))),
        fc2(register_module("fc2", ::torch::nn::Linear(128, 128))),
        fc3(register_module("fc3", ::torch::nn::Linear(128, kClasses))) {}
  at::Tensor forward(const at::Tensor& x, bool strike) {
    auto h = at::relu(fc1(x));
    if (fault_ == ZooFault::domain) h = domain_site(h, strike);
    return fc3(at::relu(fc2(h)));
  }
  ZooFault fault_;
  ::torch::nn::Linear fc1, fc2, fc3;
};

struct Sigmoid : ::torch::nn::Module {
  Sigmoid() : layers(register_module("layers", ::torch::nn::ModuleList())) {
    for (int i = 0; i < 8; ++i) {
      auto layer = ::torch::nn::Linear(kFeatures, kFeatures);
      {
        ::torch::NoGradGuard no_grad;  // Glorot for sigmoids (4x): the healthy stack does not vanish
        layer->weight.normal_(0.0, std::sqrt(2.0 / double(2 * kFeatures)) * 4.0);
      }
      linears.push_back(layer);
      layers->push_back(layer);
    }
    head = register_module("head", ::torch::nn::Linear(kFeatures, kClasses));
  }
  at::Tensor forward(const at::Tensor& x) {
    auto h = x;
    for (auto& layer : linears) h = at::sigmoid(layer(h));
    return head(h);
  }
  ::torch::nn::ModuleList layers;
  std::vector<::torch::nn::Linear> linears;
  ::torch::nn::Linear head{nullptr};
};

constexpr std::int64_t kSide = 12;  // cnn images
constexpr std::int64_t kImageClasses = 4;

struct Cnn : ::torch::nn::Module {
  Cnn()
      : conv1(register_module("conv1", ::torch::nn::Conv2d(::torch::nn::Conv2dOptions(1, 8, 3).padding(1)))),
        bn1(register_module("bn1", ::torch::nn::BatchNorm2d(8))),
        conv2(register_module("conv2", ::torch::nn::Conv2d(::torch::nn::Conv2dOptions(8, 16, 3).padding(1)))),
        bn2(register_module("bn2", ::torch::nn::BatchNorm2d(16))),
        fc(register_module("fc", ::torch::nn::Linear(16, kImageClasses))) {}
  at::Tensor forward(const at::Tensor& x) {
    auto h = at::relu(bn1(conv1(x)));
    h = at::relu(bn2(conv2(h)));
    return fc(h.mean({2, 3}));
  }
  ::torch::nn::Conv2d conv1;
  ::torch::nn::BatchNorm2d bn1;
  ::torch::nn::Conv2d conv2;
  ::torch::nn::BatchNorm2d bn2;
  ::torch::nn::Linear fc;
};

// Bar images: class 0/1 a horizontal bar at row 3 or 8, class 2/3 a vertical bar at column 3 or 8.
std::pair<at::Tensor, at::Tensor> bar_images(std::int64_t n) {
  auto labels = at::randint(0, kImageClasses, {n}, at::kLong);
  auto images = at::randn({n, 1, kSide, kSide}) * 0.3;
  auto rows = at::zeros({kImageClasses, 1, kSide, kSide});
  rows.index_put_({0, 0, 3}, 1.0);
  rows.index_put_({1, 0, 8}, 1.0);
  rows.index_put_({2, 0, at::indexing::Slice(), 3}, 1.0);
  rows.index_put_({3, 0, at::indexing::Slice(), 8}, 1.0);
  auto x = images + rows.index_select(0, labels);
  return {x, with_label_noise(labels, kImageClasses)};
}

constexpr std::int64_t kVocab = 20;
constexpr std::int64_t kLength = 16;
constexpr std::int64_t kModel = 32;
constexpr std::int64_t kMarker = 7;  // the encoder's task: does token 7 appear?

struct Encoder : ::torch::nn::Module {
  Encoder()
      : tok(register_module("tok", ::torch::nn::Embedding(kVocab, kModel))),
        pos(register_module("pos", ::torch::nn::Embedding(kLength, kModel))),
        encoder(register_module(
            "encoder",
            ::torch::nn::TransformerEncoder(::torch::nn::TransformerEncoderOptions(
                ::torch::nn::TransformerEncoderLayerOptions(kModel, 4).dim_feedforward(64).dropout(0.1),
                2)))),
        head(register_module("head", ::torch::nn::Linear(kModel, 2))) {}
  // tokens [N, S], padding [N, S] (true: padding).
  at::Tensor forward(const at::Tensor& tokens, const at::Tensor& padding) {
    auto x = tok(tokens) + pos(at::arange(tokens.size(1), at::kLong));
    auto h = encoder(x.transpose(0, 1), /*src_mask=*/at::Tensor(), padding);  // [S, N, E]
    auto keep = padding.logical_not().transpose(0, 1).unsqueeze(-1).to(at::kFloat);
    auto pooled = (h * keep).sum(0) / keep.sum(0).clamp_min(1.0);
    return head(pooled);
  }
  ::torch::nn::Embedding tok, pos;
  ::torch::nn::TransformerEncoder encoder;
  ::torch::nn::Linear head;
};

struct Sequences {
  at::Tensor tokens, padding, labels;
};

Sequences sequences(std::int64_t n) {
  auto tokens = at::randint(1, kVocab, {n, kLength}, at::kLong);
  auto lengths = at::randint(4, kLength + 1, {n, 1}, at::kLong);
  auto padding = at::arange(kLength, at::kLong).unsqueeze(0) >= lengths;
  tokens = tokens.masked_fill(padding, 0);
  auto labels = tokens.eq(kMarker).any(1).to(at::kLong);
  return {tokens, padding, with_label_noise(labels, 2)};
}

constexpr std::int64_t kSteps = 16;  // gru sequences
constexpr std::int64_t kInputs = 4;

struct Gru : ::torch::nn::Module {
  Gru()
      : gru(register_module("gru", ::torch::nn::GRU(::torch::nn::GRUOptions(kInputs, 32)))),
        head(register_module("head", ::torch::nn::Linear(32, 2))) {}
  at::Tensor forward(const at::Tensor& x) {  // [S, N, kInputs]
    auto out = std::get<0>(gru(x));
    return head(out.select(0, out.size(0) - 1));
  }
  ::torch::nn::GRU gru;
  ::torch::nn::Linear head;
};

// The sign of the running sum of feature 0 at the end of the sequence.
std::pair<at::Tensor, at::Tensor> signed_sums(std::int64_t n) {
  auto x = at::randn({kSteps, n, kInputs});
  auto labels = (x.select(2, 0).sum(0) > 0).to(at::kLong);
  return {x, with_label_noise(labels, 2)};
}

}  // namespace

std::optional<ZooModel> parse_zoo_model(std::string_view name) {
  for (std::size_t i = 0; i < kModels.size(); ++i) {
    if (kModels[i] == name) return ZooModel(i);
  }
  return std::nullopt;
}
std::string_view zoo_model_name(ZooModel model) {
  return kModels[std::size_t(model)];
}
std::optional<ZooFault> parse_zoo_fault(std::string_view name) {
  for (std::size_t i = 0; i < kFaults.size(); ++i) {
    if (kFaults[i] == name) return ZooFault(i);
  }
  return std::nullopt;
}
std::string_view zoo_fault_name(ZooFault fault) {
  return kFaults[std::size_t(fault)];
}

struct ZooTrainer::Impl {
  ZooConfig config;
  std::shared_ptr<::torch::nn::Module> root;
  std::shared_ptr<Mlp> mlp;
  std::shared_ptr<Sigmoid> sigmoid;
  std::shared_ptr<Cnn> cnn;
  std::shared_ptr<Encoder> encoder;
  std::shared_ptr<Gru> gru;
  std::unique_ptr<::torch::optim::Optimizer> optimizer;
  Clusters clusters;
  double learning_rate = 0;

  bool strikes(std::int64_t step) const {
    return config.fault != ZooFault::none && step == config.fault_step;
  }
  bool struck(std::int64_t step) const { return config.fault != ZooFault::none && step >= config.fault_step; }
  // The weight param_nan overwrites.
  at::Tensor& victim() {
    switch (config.model) {
      case ZooModel::mlp:
        return mlp->fc2->weight;
      case ZooModel::sigmoid:
        return sigmoid->linears[3]->weight;
      case ZooModel::cnn:
        return cnn->conv2->weight;
      case ZooModel::encoder:
        return encoder->head->weight;
      case ZooModel::gru:
        return gru->head->weight;
    }
    return mlp->fc2->weight;
  }
};

bool ZooTrainer::supports(ZooModel model, ZooFault fault) {
  switch (fault) {
    case ZooFault::none:
    case ZooFault::lr_jump:
    case ZooFault::param_nan:
      return true;
    case ZooFault::input_nan:
      return model != ZooModel::encoder;  // its inputs are token ids
    case ZooFault::domain:
      return model == ZooModel::mlp;
    case ZooFault::backward_inf:
    case ZooFault::dead_relu:
    case ZooFault::f16_overflow:
      return model == ZooModel::mlp;
    case ZooFault::dead_channel:
      return model == ZooModel::cnn;
    case ZooFault::masked_row:
      return model == ZooModel::encoder;
    case ZooFault::saturate:
      return model == ZooModel::sigmoid;
  }
  return false;
}

ZooTrainer::ZooTrainer(const ZooConfig& config) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.config = config;
  ::torch::manual_seed(config.seed);
  std::vector<at::Tensor> parameters;
  switch (config.model) {
    case ZooModel::mlp:
      s.mlp = std::make_shared<Mlp>(config.fault);
      s.root = s.mlp;
      s.learning_rate = 0.05;
      s.optimizer = std::make_unique<::torch::optim::SGD>(
          s.mlp->parameters(), ::torch::optim::SGDOptions(s.learning_rate).momentum(0.9));
      break;
    case ZooModel::sigmoid:
      s.sigmoid = std::make_shared<Sigmoid>();
      s.root = s.sigmoid;
      s.learning_rate = 0.5;
      s.optimizer = std::make_unique<::torch::optim::SGD>(s.sigmoid->parameters(),
                                                          ::torch::optim::SGDOptions(s.learning_rate));
      break;
    case ZooModel::cnn:
      s.cnn = std::make_shared<Cnn>();
      s.root = s.cnn;
      s.learning_rate = 1e-2;
      s.optimizer = std::make_unique<::torch::optim::Adam>(s.cnn->parameters(),
                                                           ::torch::optim::AdamOptions(s.learning_rate));
      break;
    case ZooModel::encoder:
      s.encoder = std::make_shared<Encoder>();
      s.root = s.encoder;
      s.learning_rate = 3e-3;
      s.optimizer = std::make_unique<::torch::optim::AdamW>(
          s.encoder->parameters(), ::torch::optim::AdamWOptions(s.learning_rate).weight_decay(1e-2));
      break;
    case ZooModel::gru:
      s.gru = std::make_shared<Gru>();
      s.root = s.gru;
      s.learning_rate = 1e-2;
      s.optimizer = std::make_unique<::torch::optim::RMSprop>(
          s.gru->parameters(), ::torch::optim::RMSpropOptions(s.learning_rate));
      break;
  }
}

ZooTrainer::~ZooTrainer() = default;

::torch::nn::Module& ZooTrainer::model() {
  return *impl_->root;
}

::torch::optim::Optimizer& ZooTrainer::optimizer() {
  return *impl_->optimizer;
}

const ZooConfig& ZooTrainer::config() const noexcept {
  return impl_->config;
}

std::int64_t ZooTrainer::parameter_count() const {
  std::int64_t n = 0;
  for (const auto& p : impl_->root->parameters()) n += p.numel();
  return n;
}

void ZooTrainer::before_step(std::int64_t step) {
  Impl& s = *impl_;
  ::torch::NoGradGuard no_grad;
  if (!s.strikes(step)) return;
  switch (s.config.fault) {
    case ZooFault::param_nan:
      s.victim().view({-1})[0] = std::numeric_limits<float>::quiet_NaN();
      break;
    case ZooFault::lr_jump:
      for (auto& group : s.optimizer->param_groups()) group.options().set_lr(s.learning_rate * 1000.0);
      break;
    case ZooFault::dead_relu:
      s.mlp->fc1->bias.fill_(-100.0);
      break;
    case ZooFault::dead_channel:
      s.cnn->bn1->bias[3] = -100.0;
      break;
    case ZooFault::saturate:
      s.sigmoid->linears[0]->weight.mul_(50.0);
      break;
    default:
      break;
  }
}

double ZooTrainer::train_step(std::int64_t step) {
  Impl& s = *impl_;
  const bool strike = s.strikes(step);
  at::Tensor loss;
  switch (s.config.model) {
    case ZooModel::mlp: {
      auto [x, labels] = s.clusters.batch(128);
      if (strike && s.config.fault == ZooFault::input_nan) plant_nan(x);
      if (strike && s.config.fault == ZooFault::f16_overflow) x = x * 1e5;
      auto logits = s.mlp->forward(x, strike);
      if (s.config.fault == ZooFault::backward_inf) {
        // log(softmax(x)), the textbook mistake log_softmax exists for. At the fault step one
        // target's probability is e^-95 ~ 5e-42: subnormal, so log() is finite, but log's
        // backward, grad / p, overflows.
        if (strike) {
          const std::int64_t target = labels[0].item<std::int64_t>();
          auto row = logits.detach()[0].clone();
          const double own = row[target].item<double>();
          row[target] = -std::numeric_limits<float>::infinity();
          const double others = at::logsumexp(row, 0).item<double>();  // log p = own' - others
          auto offset = at::zeros_like(logits);
          offset.index_put_({0, target}, others - 95.0 - own);
          logits = logits + offset;
        }
        loss = ::torch::nn::functional::nll_loss(at::log(at::softmax(logits, 1)), labels);
      } else {
        loss = ::torch::nn::functional::cross_entropy(logits, labels);
      }
      break;
    }
    case ZooModel::sigmoid: {
      auto [x, labels] = s.clusters.batch(128);
      // Standardised (the clusters' features have variance 2^2 + 1): raw, they saturate the first
      // sigmoids of the stack from step 0.
      x = x / std::sqrt(5.0);
      if (strike && s.config.fault == ZooFault::input_nan) plant_nan(x);
      loss = ::torch::nn::functional::cross_entropy(s.sigmoid->forward(x), labels);
      break;
    }
    case ZooModel::cnn: {
      auto [x, labels] = bar_images(64);
      if (strike && s.config.fault == ZooFault::input_nan) plant_nan(x);
      loss = ::torch::nn::functional::cross_entropy(s.cnn->forward(x), labels);
      break;
    }
    case ZooModel::encoder: {
      Sequences b = sequences(32);
      if (strike && s.config.fault == ZooFault::masked_row) b.padding[0].fill_(true);
      loss = ::torch::nn::functional::cross_entropy(s.encoder->forward(b.tokens, b.padding), b.labels);
      break;
    }
    case ZooModel::gru: {
      auto [x, labels] = signed_sums(32);
      if (strike && s.config.fault == ZooFault::input_nan) plant_nan(x);
      loss = ::torch::nn::functional::cross_entropy(s.gru->forward(x), labels);
      break;
    }
  }
  s.optimizer->zero_grad();
  loss.backward();
  const double value = loss.item<double>();
  bool finite = std::isfinite(value);
  if (s.config.skip_nonfinite_steps) {
    for (const auto& p : s.root->parameters()) {
      if (finite && p.grad().defined()) finite = p.grad().isfinite().all().item<bool>();
    }
  }
  if (finite || !s.config.skip_nonfinite_steps) s.optimizer->step();
  return value;
}

std::optional<ZooExpectation> ZooTrainer::expectation() const {
  const Impl& s = *impl_;
  const std::int64_t k = s.config.fault_step;
  // The module of the first op that reads the input batch.
  const auto first_layer = [&]() -> std::pair<std::string, std::string> {
    switch (s.config.model) {
      case ZooModel::mlp:
        return {"fc1", "aten::addmm"};  // nn::Linear on a 2-D input
      case ZooModel::sigmoid:
        return {"layers.0", "aten::addmm"};
      case ZooModel::cnn:
        return {"conv1", "aten::conv2d"};
      case ZooModel::gru:
        return {"gru", "aten::gru"};
      case ZooModel::encoder:
        return {"tok", "aten::embedding"};
    }
    return {};
  };
  const auto victim_name = [&]() -> std::pair<std::string, std::string> {
    switch (s.config.model) {
      case ZooModel::mlp:
        return {"fc2", "fc2.weight"};
      case ZooModel::sigmoid:
        return {"layers.3", "layers.3.weight"};
      case ZooModel::cnn:
        return {"conv2", "conv2.weight"};
      case ZooModel::encoder:
        return {"head", "head.weight"};
      case ZooModel::gru:
        return {"head", "head.weight"};
    }
    return {};
  };
  switch (s.config.fault) {
    case ZooFault::none:
      return std::nullopt;
    case ZooFault::domain:
      return ZooExpectation{"nonfinite", "", "aten::log", Phase::forward, k};
    case ZooFault::backward_inf:
      return ZooExpectation{"nonfinite", "", "aten::div", Phase::backward, k};
    case ZooFault::input_nan: {
      auto [module, op] = first_layer();
      return ZooExpectation{"nonfinite", module, op, Phase::forward, k};
    }
    case ZooFault::masked_row:
      return ZooExpectation{"nonfinite", "encoder.layers.0.self_attn", "aten::softmax", Phase::forward, k};
    case ZooFault::lr_jump:
      return ZooExpectation{"update_ratio", "", "", Phase::optimizer, k};
    case ZooFault::dead_relu:
      return ZooExpectation{"dead_units", "", "aten::relu", Phase::forward, k};
    case ZooFault::dead_channel:
      return ZooExpectation{"dead_units", "", "aten::relu", Phase::forward, k};
    case ZooFault::saturate:
      return ZooExpectation{"saturation", "layers", "aten::sigmoid", Phase::forward, k};
    case ZooFault::param_nan: {
      auto [module, name] = victim_name();
      return ZooExpectation{"nonfinite", module, name, Phase::forward, k};
    }
    case ZooFault::f16_overflow:
      return ZooExpectation{"headroom_overflow", "fc1", "aten::addmm", Phase::forward, k};
  }
  return std::nullopt;
}

}  // namespace tfdebug::demo
