// The diagnosis on models that neither the demo nor the zoo (zoo_test.cpp) trains, written as a
// user would: a two-layer LSTM with Adam and gradient clipping, a causal decoder block
// (Embedding, MultiheadAttention with an additive -inf mask, LayerNorm, GELU) with AdamW and
// gradient accumulation over two micro-batches, an MLP with LayerNorm, dropout and tanh under
// SGD with momentum and weight decay, a Conv1d + GroupNorm + SiLU + Conv1d + BatchNorm1d +
// in-place ReLU Sequential with Adam, a tied embedding with a frozen layer, a Gaussian
// negative log-likelihood regression (a loss below 0), a bag of embeddings with sparse
// gradients under SGD, and branches and task heads that sit out steps. Planted faults are named where they
// happened, in watch (with Attachment::step's replay) and in diagnose; healthy runs stay quiet.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>
#include <torch/nn/modules/rnn.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numbers>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "findings_text.hpp"
#include "tfdebug/session/session.hpp"
#include "tfdebug/torch/attach.hpp"

namespace {

using tfdebug::Finding;
using tfdebug::Tier;
using tfdebug::testing::findings_text;

enum class Fault {
  none,
  input_nan,
  domain,
  param_nan,
  lr_jump,
  exp_overflow,
  dead_channels,
  where_trap,
  backward_inf,
  all_ignored
};

struct LstmNet : ::torch::nn::Module {
  LstmNet()
      : lstm(register_module("lstm", ::torch::nn::LSTM(::torch::nn::LSTMOptions(4, 24).num_layers(2)))),
        head(register_module("head", ::torch::nn::Linear(24, 2))) {}
  ::torch::nn::LSTM lstm;
  ::torch::nn::Linear head;
};

struct DecoderNet : ::torch::nn::Module {
  DecoderNet()
      : embed(register_module("embed", ::torch::nn::Embedding(16, 32))),
        attn(register_module("attn", ::torch::nn::MultiheadAttention(32, 4))),
        norm1(register_module("norm1", ::torch::nn::LayerNorm(::torch::nn::LayerNormOptions({32})))),
        up(register_module("up", ::torch::nn::Linear(32, 64))),
        down(register_module("down", ::torch::nn::Linear(64, 32))),
        norm2(register_module("norm2", ::torch::nn::LayerNorm(::torch::nn::LayerNormOptions({32})))),
        head(register_module("head", ::torch::nn::Linear(32, 16))) {}
  ::torch::nn::Embedding embed;
  ::torch::nn::MultiheadAttention attn;
  ::torch::nn::LayerNorm norm1;
  ::torch::nn::Linear up, down;
  ::torch::nn::LayerNorm norm2;
  ::torch::nn::Linear head;
};

struct TanhNet : ::torch::nn::Module {
  TanhNet()
      : fc1(register_module("fc1", ::torch::nn::Linear(16, 64))),
        norm(register_module("norm", ::torch::nn::LayerNorm(::torch::nn::LayerNormOptions({64})))),
        drop(register_module("drop", ::torch::nn::Dropout(0.1))),
        fc2(register_module("fc2", ::torch::nn::Linear(64, 64))),
        fc3(register_module("fc3", ::torch::nn::Linear(64, 4))) {}
  ::torch::nn::Linear fc1;
  ::torch::nn::LayerNorm norm;
  ::torch::nn::Dropout drop;
  ::torch::nn::Linear fc2, fc3;
};

// Conv1d + GroupNorm + SiLU + Conv1d + BatchNorm1d + in-place ReLU, in a Sequential.
struct ConvNet : ::torch::nn::Module {
  ConvNet()
      : body(register_module(
            "body",
            ::torch::nn::Sequential(
                ::torch::nn::Conv1d(::torch::nn::Conv1dOptions(2, 16, 5).padding(2)),
                ::torch::nn::GroupNorm(::torch::nn::GroupNormOptions(4, 16)), ::torch::nn::SiLU(),
                ::torch::nn::Conv1d(::torch::nn::Conv1dOptions(16, 16, 5).padding(2)),
                ::torch::nn::BatchNorm1d(16), ::torch::nn::ReLU(::torch::nn::ReLUOptions().inplace(true))))),
        head(register_module("head", ::torch::nn::Linear(16, 3))) {}
  ::torch::nn::Sequential body;
  ::torch::nn::Linear head;
};

// An embedding whose matrix is also the output layer (tied), a residual tanh layer, and a frozen
// layer (requires_grad false), under SGD with momentum.
struct TiedNet : ::torch::nn::Module {
  TiedNet()
      : embed(register_module("embed", ::torch::nn::Embedding(20, 24))),
        mix(register_module("mix", ::torch::nn::Linear(24, 24))),
        frozen(register_module("frozen", ::torch::nn::Linear(24, 24))) {
    for (auto& p : frozen->parameters()) p.set_requires_grad(false);
  }
  ::torch::nn::Embedding embed;
  ::torch::nn::Linear mix, frozen;
};

// A regression that predicts a mean and a log-variance, trained on the Gaussian negative
// log-likelihood: a loss that goes below 0 as the variance shrinks.
struct GaussianNet : ::torch::nn::Module {
  GaussianNet()
      : fc1(register_module("fc1", ::torch::nn::Linear(4, 32))),
        mean(register_module("mean", ::torch::nn::Linear(32, 1))),
        log_variance(register_module("log_variance", ::torch::nn::Linear(32, 1))) {}
  ::torch::nn::Linear fc1, mean, log_variance;
};

// A bag of embeddings with sparse gradients (Embedding's sparse=true: its gradient is a sparse
// COO tensor, one row per token), under plain SGD, the optimizer that takes them.
struct SparseBagNet : ::torch::nn::Module {
  SparseBagNet()
      : embed(register_module("embed",
                              ::torch::nn::Embedding(::torch::nn::EmbeddingOptions(50, 16).sparse(true)))),
        head(register_module("head", ::torch::nn::Linear(16, 5))) {}
  ::torch::nn::Embedding embed;
  ::torch::nn::Linear head;
};

// A stem, two branches and two task heads: the ways a parameter sits out a step.
struct BranchNet : ::torch::nn::Module {
  BranchNet()
      : stem(register_module("stem", ::torch::nn::Linear(8, 32))),
        a(register_module("a", ::torch::nn::Linear(32, 32))),
        b(register_module("b", ::torch::nn::Linear(32, 32))),
        head(register_module("head", ::torch::nn::Linear(32, 3))),
        side(register_module("side", ::torch::nn::Linear(32, 2))) {}
  ::torch::nn::Linear stem, a, b, head, side;
};

struct Trained {
  std::vector<Finding> findings;
  std::int64_t replays = 0;
};

const Finding* first_of(const std::vector<Finding>& findings, const std::string& rule) {
  for (const Finding& f : findings) {
    if (f.rule == rule) return &f;
  }
  return nullptr;
}

Trained drive(::torch::nn::Module& model, Tier tier, std::int64_t steps,
              const std::function<double(std::int64_t)>& step_fn,
              const std::function<void(std::int64_t)>& before = {},
              const tfdebug::torch::AttachOptions& options = {}) {
  tfdebug::RunConfig run;
  run.tier = tier;
  tfdebug::Session session(run);
  Trained out;
  {
    auto debug = tfdebug::torch::attach(session, model, options);
    for (std::int64_t step = 0; step < steps; ++step) {
      if (before) before(step);
      debug.step(step, [&] { return step_fn(step); });
    }
    out.replays = debug.counters().replays;
  }
  out.findings = session.finish().findings;
  return out;
}

Trained lstm(std::uint64_t seed, Fault fault, Tier tier, std::int64_t steps) {
  at::set_num_threads(1);
  ::torch::manual_seed(seed);
  LstmNet net;
  ::torch::optim::Adam opt(net.parameters(), ::torch::optim::AdamOptions(3e-3));
  return drive(net, tier, steps, [&](std::int64_t step) {
    auto x = ::torch::randn({12, 32, 4});  // (seq, batch, features)
    auto y = (x.sum(at::IntArrayRef{0, 2}) > 0).to(at::kLong);
    if (fault == Fault::input_nan && step == 20) x[3][5][1] = std::numeric_limits<float>::quiet_NaN();
    opt.zero_grad();
    auto [out, state] = net.lstm->forward(x);
    auto h = out[-1];
    if (fault == Fault::domain && step == 20) h = ::torch::sqrt(h - 0.5);
    auto loss = ::torch::nn::functional::cross_entropy(net.head->forward(h), y);
    loss.backward();
    ::torch::nn::utils::clip_grad_norm_(net.parameters(), 1.0);
    opt.step();
    return loss.template item<double>();
  });
}

// With `schedule`, the learning rate warms up linearly over 50 steps and decays to 0 along a
// cosine over the run, as transformers are trained.
Trained decoder(std::uint64_t seed, Fault fault, Tier tier, std::int64_t steps, bool schedule = false) {
  at::set_num_threads(1);
  ::torch::manual_seed(seed);
  DecoderNet net;
  ::torch::optim::AdamW opt(net.parameters(), ::torch::optim::AdamWOptions(1e-3).weight_decay(1e-2));
  const std::int64_t len = 10;
  auto causal = ::torch::full({len, len}, -std::numeric_limits<float>::infinity()).triu(1);
  return drive(
      net, tier, steps,
      [&](std::int64_t step) {
        if (schedule) {
          const double warm = std::min(1.0, double(step) / 50.0);
          const double cosine = 0.5 * (1 + std::cos(std::numbers::pi * double(step) / double(steps)));
          static_cast<::torch::optim::AdamWOptions&>(opt.param_groups()[0].options())
              .lr(1e-3 * warm * cosine);
        }
        opt.zero_grad();
        double total = 0;
        for (int micro = 0; micro < 2; ++micro) {  // gradient accumulation
          auto start = ::torch::randint(0, 16, {1, 16});
          auto stride = ::torch::randint(1, 4, {1, 16});
          auto tokens =
              (start + ::torch::arange(len + 1).unsqueeze(1) * stride).remainder(16);  // (len+1, batch)
          auto in = tokens.slice(0, 0, len);
          auto target = tokens.slice(0, 1, len + 1);
          auto e = net.embed->forward(in);  // (len, batch, 32)
          auto [a, w] = net.attn->forward(e, e, e, {}, false, causal);
          auto h = net.norm1->forward(e + a);
          h = net.norm2->forward(h + net.down->forward(::torch::gelu(net.up->forward(h))));
          auto logits = net.head->forward(h);
          auto loss =
              ::torch::nn::functional::cross_entropy(logits.reshape({-1, 16}), target.reshape({-1})) / 2;
          loss.backward();
          total += loss.template item<double>();
        }
        opt.step();
        return total;
      },
      [&](std::int64_t step) {
        if (fault == Fault::param_nan && step == 20) {
          ::torch::NoGradGuard g;
          net.up->weight.data_ptr<float>()[7] = std::numeric_limits<float>::quiet_NaN();
        }
      });
}

Trained tanh_mlp(std::uint64_t seed, Fault fault, Tier tier, std::int64_t steps) {
  at::set_num_threads(1);
  ::torch::manual_seed(seed);
  TanhNet net;
  auto centers = ::torch::randn({4, 16}) * 2;
  ::torch::optim::SGD opt(net.parameters(),
                          ::torch::optim::SGDOptions(0.05).momentum(0.9).weight_decay(1e-4));
  return drive(net, tier, steps, [&](std::int64_t step) {
    if (fault == Fault::lr_jump && step == 20)
      static_cast<::torch::optim::SGDOptions&>(opt.param_groups()[0].options()).lr(2.0);
    auto y = ::torch::randint(0, 4, {64});
    auto x = centers.index_select(0, y) + ::torch::randn({64, 16});
    if (fault == Fault::input_nan && step == 20) x[5][3] = std::numeric_limits<float>::quiet_NaN();
    if (fault == Fault::all_ignored && step == 20) y.fill_(-100);  // cross_entropy's ignore_index
    opt.zero_grad();
    auto h = ::torch::tanh(net.norm->forward(net.fc1->forward(x)));
    h = net.drop->forward(h);
    auto g = net.fc2->forward(h);
    if (fault == Fault::domain && step == 20) g = ::torch::log(g);
    h = ::torch::tanh(g);
    auto loss = ::torch::nn::functional::cross_entropy(net.fc3->forward(h), y);
    if (fault == Fault::where_trap && step == 20) {
      // An entropy bonus over normalised ReLU activations, with its zeros masked out by where:
      // forward finite, but log's backward at p = 0 is 0 / 0.
      auto p = ::torch::relu(g);
      p = p / (p.sum(1, true) + 1e-6);
      loss = loss - 0.01 * ::torch::where(p > 0, p * ::torch::log(p), ::torch::zeros_like(p)).sum(1).mean();
    }
    loss.backward();
    opt.step();
    return loss.template item<double>();
  });
}

// Three kinds of waves in one channel beside noise in another; three classes.
Trained conv(std::uint64_t seed, Fault fault, Tier tier, std::int64_t steps,
             const tfdebug::torch::AttachOptions& options = {}) {
  at::set_num_threads(1);
  ::torch::manual_seed(seed);
  ConvNet net;
  ::torch::optim::Adam opt(net.parameters(), ::torch::optim::AdamOptions(3e-3));
  const auto frequencies = ::torch::tensor({0.1f, 0.3f, 0.6f});
  const auto t = ::torch::arange(48).to(at::kFloat);
  return drive(
      net, tier, steps,
      [&](std::int64_t step) {
        auto y = ::torch::randint(0, 3, {32});
        auto phase = ::torch::rand({32, 1}) * 6;
        auto wave = ::torch::sin(frequencies.index_select(0, y).unsqueeze(1) * t.unsqueeze(0) + phase);
        auto x = ::torch::cat({wave.unsqueeze(1), ::torch::randn({32, 1, 48}) * 0.3}, 1);  // (N, C, L)
        opt.zero_grad();
        auto logits = net.head->forward(net.body->forward(x).mean(2));
        if (fault == Fault::exp_overflow && step == 20) logits = ::torch::log(::torch::exp(logits * 200));
        auto loss = ::torch::nn::functional::cross_entropy(logits, y);
        loss.backward();
        opt.step();
        return loss.template item<double>();
      },
      [&](std::int64_t step) {
        // Channels 3 and 9 of the BatchNorm before the ReLU shifted far below 0: dead from here.
        if (fault == Fault::dead_channels && step == 20) {
          const ::torch::NoGradGuard no_grad;
          auto bias = net.body[4]->as<::torch::nn::BatchNorm1d>()->bias;
          bias[3].fill_(-100);
          bias[9].fill_(-100);
        }
      },
      options);
}

// Tokens to the next token (mod 20) through the tied embedding.
Trained tied(std::uint64_t seed, Fault /*fault*/, Tier tier, std::int64_t steps) {
  at::set_num_threads(1);
  ::torch::manual_seed(seed);
  TiedNet net;
  ::torch::optim::SGD opt(net.parameters(), ::torch::optim::SGDOptions(0.1).momentum(0.9));
  return drive(net, tier, steps, [&](std::int64_t /*step*/) {
    auto tokens = ::torch::randint(0, 20, {64});
    opt.zero_grad();
    auto e = net.embed->forward(tokens);
    auto h = e + ::torch::tanh(net.mix->forward(e)) + 0.1 * net.frozen->forward(e);
    auto logits = ::torch::matmul(h, net.embed->weight.t());
    auto loss = ::torch::nn::functional::cross_entropy(logits, (tokens + 1).remainder(20));
    loss.backward();
    opt.step();
    return loss.template item<double>();
  });
}

// From step `drift_from` on (when not negative) the targets' noise grows 3% a step: the data
// drifts away from what the model learned, and its loss climbs back.
Trained gaussian_nll(std::uint64_t seed, Tier tier, std::int64_t steps, double& last_loss,
                     std::int64_t drift_from = -1) {
  at::set_num_threads(1);
  ::torch::manual_seed(seed);
  GaussianNet net;
  ::torch::optim::Adam opt(net.parameters(), ::torch::optim::AdamOptions(3e-3));
  const auto w = ::torch::randn({4, 1});
  return drive(net, tier, steps, [&](std::int64_t step) {
    auto x = ::torch::randn({64, 4});
    const double noise =
        0.05 * (drift_from >= 0 && step > drift_from ? std::pow(1.03, double(step - drift_from)) : 1.0);
    auto y = ::torch::matmul(x, w) + noise * ::torch::randn({64, 1});
    opt.zero_grad();
    auto h = ::torch::relu(net.fc1->forward(x));
    auto v = net.log_variance->forward(h);
    auto loss = (0.5 * (v + (y - net.mean->forward(h)).pow(2) / ::torch::exp(v))).mean();
    loss.backward();
    opt.step();
    last_loss = loss.template item<double>();
    return last_loss;
  });
}

// Fault::domain: log(h - 10) at step 20, NaN in forward; the weights go NaN and the run trains
// on. Fault::backward_inf: h + sqrt(h - h.detach()), 0 in forward and an infinite gradient,
// which reaches only the embedding's sparse gradient.
Trained sparse_bag(std::uint64_t seed, Fault fault, Tier tier, std::int64_t steps) {
  at::set_num_threads(1);
  ::torch::manual_seed(seed);
  SparseBagNet net;
  ::torch::optim::SGD opt(net.parameters(), ::torch::optim::SGDOptions(0.1));
  return drive(net, tier, steps, [&](std::int64_t step) {
    auto tokens = ::torch::randint(0, 50, {32, 6});
    auto y = tokens.select(1, 0).remainder(5);
    opt.zero_grad();
    auto h = net.embed->forward(tokens).mean(1);
    if (fault == Fault::domain && step == 20) h = ::torch::log(h - 10);
    if (fault == Fault::backward_inf && step == 20) h = h + ::torch::sqrt(h - h.detach());
    auto loss = ::torch::nn::functional::cross_entropy(net.head->forward(h), y);
    loss.backward();
    opt.step();
    return loss.template item<double>();
  });
}

// How parameters sit out steps: branch a on even steps and b on odd ones; LayerDrop (a skipped
// with probability 0.3); the side task every third step, on the head the others do not use.
enum class SitOut { alternating, layer_drop, alternating_task };

// `cut`: branch a's output times 0 from step 40 on, a branch that takes part and learns nothing.
Trained branches(SitOut kind, Tier tier, std::int64_t steps, bool cut = false) {
  at::set_num_threads(1);
  ::torch::manual_seed(1);
  BranchNet net;
  ::torch::optim::Adam opt(net.parameters(), ::torch::optim::AdamOptions(1e-3));
  const auto w = ::torch::randn({8, 3});
  return drive(net, tier, steps, [&](std::int64_t step) {
    auto x = ::torch::randn({32, 8});
    auto y = ::torch::matmul(x, w).argmax(1);
    opt.zero_grad();
    auto h = ::torch::relu(net.stem->forward(x));
    const double a_gain = cut && step >= 40 ? 0.0 : 1.0;
    if (kind == SitOut::alternating) {
      h = step % 2 == 0 ? h + a_gain * ::torch::relu(net.a->forward(h))
                        : h + ::torch::relu(net.b->forward(h));
    } else {
      if (kind != SitOut::layer_drop || ::torch::rand({1}).template item<float>() > 0.3f)
        h = h + a_gain * ::torch::relu(net.a->forward(h));
      if (kind == SitOut::layer_drop) h = h + ::torch::relu(net.b->forward(h));
    }
    auto loss = kind == SitOut::alternating_task && step % 3 == 2
                    ? ::torch::nn::functional::cross_entropy(net.side->forward(h), (y > 0).to(at::kLong))
                    : ::torch::nn::functional::cross_entropy(net.head->forward(h), y);
    loss.backward();
    opt.step();
    return loss.template item<double>();
  });
}

using Maker = Trained (*)(std::uint64_t, Fault, Tier, std::int64_t);

// The run's first nonfinite finding, checked to name `op` in `module` at `step`; nullptr (and a
// failure) when there is none.
const Finding* first_nonfinite(const Trained& run, std::string_view op, std::string_view module,
                               std::int64_t step) {
  const Finding* f = first_of(run.findings, "nonfinite");
  if (f == nullptr) {
    ADD_FAILURE() << "no nonfinite finding:\n" << findings_text(run.findings);
    return nullptr;
  }
  EXPECT_EQ(f->op, op) << f->message;
  EXPECT_EQ(f->module, module) << f->message;
  EXPECT_EQ(f->phase, tfdebug::Phase::forward) << f->message;
  EXPECT_EQ(f->step, step) << f->message;
  return f;
}

class Faults : public ::testing::TestWithParam<Tier> {};

// sqrt of a negative value in the model's own code, after an LSTM's TensorList parameters.
TEST_P(Faults, LstmDomainErrorIsNamed) {
  const Trained run = lstm(1, Fault::domain, GetParam(), 24);
  const Finding* f = first_nonfinite(run, "aten::sqrt", "", 20);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->evidence_value("producer"), 1);
  EXPECT_EQ(run.replays, GetParam() == Tier::watch ? 1 : 0);
}

// A NaN the loop writes into its batch with an indexing assignment (aten::fill_ on a view): the
// op that wrote it, and the caller's value, not "from finite inputs".
TEST_P(Faults, ANanWrittenIntoTheBatchIsTheCallers) {
  for (Maker make : {&lstm, &tanh_mlp}) {
    const Trained run = make(1, Fault::input_nan, GetParam(), 24);
    const Finding* f = first_nonfinite(run, "aten::fill_", "", 20);
    ASSERT_NE(f, nullptr);
    EXPECT_NE(f->message.find("wrote 1 NaN of 1 values"), std::string::npos) << f->message;
    EXPECT_NE(f->message.find("the caller passed NaN"), std::string::npos) << f->message;
  }
}

// log of the tanh MLP's second pre-activation, about half of it negative.
TEST_P(Faults, TanhMlpDomainErrorIsNamed) {
  const Trained run = tanh_mlp(1, Fault::domain, GetParam(), 24);
  const Finding* f = first_nonfinite(run, "aten::log", "", 20);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->evidence_value("producer"), 1);
}

// A weight overwritten with NaN between steps, in a decoder that accumulates gradients over two
// backward passes a step and masks with an additive -inf causal mask (intended: no finding).
TEST_P(Faults, DecoderParameterNanIsTheParameter) {
  const Trained run = decoder(1, Fault::param_nan, GetParam(), 24);
  const Finding* f = first_nonfinite(run, "up.weight", "up", 20);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("it held them when the step began"), std::string::npos) << f->message;
  for (const Finding& other : run.findings) EXPECT_GE(other.step, 20) << other.message;
}

// Note [A loss with nothing left to learn] (src/session/rules/gradients.cpp): the learning rate
// 40x at step 20 makes the tanh MLP overconfident on its next batch (loss 1.5e-5 against ~0.005),
// and every layer's gradient falls 500-1000x with it: no layer vanished.
TEST_P(Faults, AnOverconfidentStepIsNoVanishing) {
  const Trained run = tanh_mlp(1, Fault::lr_jump, GetParam(), 40);
  EXPECT_EQ(first_of(run.findings, "vanishing_gradients"), nullptr) << findings_text(run.findings);
  // What did happen, seen where every op is observed (watch sees outputs in its samples only).
  if (GetParam() == Tier::diagnose) {
    const Finding* saturated = first_of(run.findings, "saturation");
    ASSERT_NE(saturated, nullptr) << findings_text(run.findings);
    EXPECT_EQ(saturated->op, "aten::tanh");
  }
}

// exp overflowing to +Inf, then a NaN from it in the loss: the Inf's producer is the first.
TEST_P(Faults, ConvExpOverflowIsTheInfinitysProducer) {
  const Trained run = conv(1, Fault::exp_overflow, GetParam(), 24);
  const Finding* f = first_nonfinite(run, "aten::exp", "", 20);
  ASSERT_NE(f, nullptr);
  EXPECT_GT(f->evidence_value("pos_inf"), 0);
  EXPECT_EQ(f->evidence_value("producer"), 1);
}

// Dead channels of a Conv1d stack (NCL: the units are dimension 1) behind an in-place ReLU in a
// Sequential: the op is aten::relu_, in the Sequential (the ReLU module has no parameter to place
// it by). Watch on the fixed schedule, which samples every 10th step (Note [Watch budget]).
TEST_P(Faults, DeadChannelsBehindAnInPlaceRelu) {
  tfdebug::torch::AttachOptions options;
  options.watch_budget = 0;
  const Trained run = conv(1, Fault::dead_channels, GetParam(), 125, options);
  const Finding* f = first_of(run.findings, "dead_units");
  ASSERT_NE(f, nullptr) << findings_text(run.findings);
  EXPECT_EQ(f->op, "aten::relu_");
  EXPECT_EQ(f->module, "body");
  // 100 steps (the window) after the last step they were seen active: 19, or watch's sample 10.
  EXPECT_EQ(f->step, GetParam() == Tier::watch ? 110 : 119);
  const auto* which = f->find_evidence("dead_units");
  ASSERT_NE(which, nullptr);
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(*which), (std::vector<std::int64_t>{3, 9})) << f->message;
  EXPECT_NE(f->message.find("2 of 16 channels"), std::string::npos) << f->message;
}

// A frozen layer (requires_grad false) does not move: no update of 0 read as a layer that does
// not learn (update_ratio warned from step 19 in diagnose before the adapter skipped them).
TEST_P(Faults, FrozenParametersHaveNoUpdate) {
  const Trained run = tied(1, Fault::none, GetParam(), GetParam() == Tier::watch ? 300 : 60);
  for (const Finding& f : run.findings) {
    EXPECT_NE(f.module, "frozen") << f.message;
    EXPECT_NE(f.severity, tfdebug::Severity::error) << f.message;
  }
}

// where(p > 0, p * log(p), 0), the NaN-gradient trap: the forward's -Inf and NaN are masked, the
// loss is finite, and the gradients are NaN: made in backward, by log's 0 / 0 at p = 0. Watch
// replays the step and names it there; the forward's -Inf (log(0)) comes first.
TEST_P(Faults, TheWhereTrapIsNamedInBackward) {
  const Trained run = tanh_mlp(1, Fault::where_trap, GetParam(), 22);
  const Finding* first = first_nonfinite(run, "aten::log", "", 20);
  ASSERT_NE(first, nullptr);
  EXPECT_GT(first->evidence_value("neg_inf"), 0);
  const auto backward = std::find_if(run.findings.begin(), run.findings.end(), [](const Finding& f) {
    return f.rule == "nonfinite" && f.phase == tfdebug::Phase::backward;
  });
  ASSERT_NE(backward, run.findings.end()) << findings_text(run.findings);
  EXPECT_EQ(backward->op, "aten::div");
  EXPECT_EQ(backward->step, 20);
  EXPECT_EQ(backward->evidence_value("producer"), 1);
  EXPECT_NE(backward->message.find("from finite inputs"), std::string::npos) << backward->message;
  EXPECT_NE(backward->suggestion.find("a derivative that is infinite"), std::string::npos)
      << backward->suggestion;
  // Note [The node says which derivative] (src/session/rules/nonfinite_hints.cpp)
  EXPECT_NE(backward->message.find("aten::div (LogBackward0)"), std::string::npos) << backward->message;
  EXPECT_NE(backward->suggestion.find("the derivative of log at 0"), std::string::npos)
      << backward->suggestion;
  EXPECT_NE(backward->suggestion.find("where(x > 0, f(x), 0) still differentiates f at 0"), std::string::npos)
      << backward->suggestion;
  EXPECT_NE(first->suggestion.find("log of 0"), std::string::npos) << first->suggestion;
  EXPECT_EQ(run.replays, GetParam() == Tier::watch ? 1 : 0);
}

// Note [A loss that is not a number] (src/session/rules/gradients.cpp): a batch whose targets are
// all ignore_index makes cross-entropy's mean 0 / 0, NaN, and every gradient exactly 0. The loss
// is named; its zero gradients are no vanishing layer (they were, on every layer).
TEST_P(Faults, AllTargetsIgnoredIsTheLossNotVanishing) {
  const Trained run = tanh_mlp(1, Fault::all_ignored, GetParam(), 24);
  const Finding* f = first_nonfinite(run, "aten::cross_entropy_loss", "", 20);
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("from finite inputs"), std::string::npos) << f->message;
  EXPECT_NE(f->suggestion.find("every target of the batch is ignore_index"), std::string::npos)
      << f->suggestion;
  EXPECT_EQ(first_of(run.findings, "vanishing_gradients"), nullptr) << findings_text(run.findings);
  EXPECT_EQ(run.replays, GetParam() == Tier::watch ? 1 : 0);
}

// An infinite gradient that reaches only a sparse gradient (the embedding's): watch's check
// reads its values and replays the step, which names the op in backward. Without that, watch
// blamed the embedding's weight at the next step ("it held them when the step began").
TEST_P(Faults, AnInfinityInASparseGradientIsNamedInBackward) {
  const Trained run = sparse_bag(1, Fault::backward_inf, GetParam(), 24);
  const Finding* f = first_of(run.findings, "nonfinite");
  ASSERT_NE(f, nullptr) << findings_text(run.findings);
  EXPECT_EQ(f->op, "aten::div") << f->message;
  EXPECT_EQ(f->phase, tfdebug::Phase::backward) << f->message;
  EXPECT_EQ(f->step, 20) << f->message;
  EXPECT_GT(f->evidence_value("pos_inf"), 0);
  EXPECT_EQ(run.replays, GetParam() == Tier::watch ? 1 : 0);
}

// Note [Replay]: the run's weights are NaN from step 20 on and it trains 40 more steps: one
// replay names log, and the steps after it are not replayed to find the same NaN again (each
// one was, at 2-3 times a step's cost, before the adapter read the parameters after a bad step).
TEST_P(Faults, ARunThatStaysNanIsReplayedOnce) {
  const Trained run = sparse_bag(1, Fault::domain, GetParam(), 60);
  const Finding* f = first_nonfinite(run, "aten::log", "", 20);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(run.replays, GetParam() == Tier::watch ? 1 : 0);
}

// Note [Parameters that sit out a step] (src/torch/attach.cpp): a branch that sits out a step,
// a layer LayerDrop skipped, a head whose task is not this batch's, a head no loss uses: not
// "vanishing" (their gradient is 0 after zero_grad) nor "barely moves" (no update under Adam's
// zero moments). A branch that takes part and gets a gradient of 0 still vanishes.
TEST_P(Faults, ParametersThatSitOutAStepAreNotJudgedByIt) {
  for (const SitOut kind : {SitOut::alternating, SitOut::layer_drop, SitOut::alternating_task}) {
    const Trained run = branches(kind, GetParam(), 150);
    for (const Finding& f : run.findings) {
      EXPECT_NE(f.rule, "vanishing_gradients") << int(kind) << ": " << f.message;
      EXPECT_NE(f.rule, "update_ratio") << int(kind) << ": " << f.message;
    }
  }
  const Trained cut = branches(SitOut::alternating, GetParam(), 60, /*cut=*/true);
  const Finding* vanishing = first_of(cut.findings, "vanishing_gradients");
  ASSERT_NE(vanishing, nullptr) << findings_text(cut.findings);
  EXPECT_EQ(vanishing->module, "a");
  EXPECT_EQ(vanishing->step, 40);
}

INSTANTIATE_TEST_SUITE_P(BeyondZoo, Faults, ::testing::Values(Tier::watch, Tier::diagnose),
                         [](const ::testing::TestParamInfo<Tier>& param) {
                           return std::string(param.param == Tier::watch ? "watch" : "diagnose");
                         });

// 300 healthy steps of each model, two seeds, in watch: no error, at most one warning in two runs.
// Note [A weight that learned] (src/session/rules/update_ratio.cpp): a cosine schedule's last
// steps move the weights by ~1e-7 of them; that is the schedule, no weight failing to learn.
TEST(BeyondZoo, AScheduledLearningRateStaysQuiet) {
  const Trained run = decoder(1, Fault::none, Tier::diagnose, 300, /*schedule=*/true);
  EXPECT_TRUE(run.findings.empty()) << findings_text(run.findings);
}

// Note [A loss below 0] (src/session/rules/loss.cpp): the Gaussian NLL goes from ~2 to ~-1.6;
// one batch jumps 0.9 above a median of -1.73 (z 9), said as such, not as "0.48x the median".
TEST(BeyondZoo, ASpikeOfALossBelowZeroIsSaidInItsTerms) {
  double last_loss = 0;
  const Trained run = gaussian_nll(1, Tier::watch, 400, last_loss);
  EXPECT_LT(last_loss, 0);
  const Finding* spike = first_of(run.findings, "loss_spike");
  ASSERT_NE(spike, nullptr) << findings_text(run.findings);
  EXPECT_LT(spike->evidence_value("median"), 0);
  EXPECT_NE(spike->message.find(" above the median, -"), std::string::npos) << spike->message;
  EXPECT_EQ(spike->message.find("x the median"), std::string::npos) << spike->message;
}

// Note [A loss that climbs back] (src/session/rules/loss.cpp): the same regression whose
// targets' noise grows from step 250 climbs from below 0 back above it; the healthy runs do not.
TEST(BeyondZoo, ALossBelowZeroThatClimbsBackDiverges) {
  double last_loss = 0;
  const Trained drifting = gaussian_nll(1, Tier::watch, 400, last_loss, /*drift_from=*/250);
  EXPECT_GT(last_loss, 0);
  const Finding* divergence = first_of(drifting.findings, "divergence");
  ASSERT_NE(divergence, nullptr) << findings_text(drifting.findings);
  EXPECT_EQ(divergence->severity, tfdebug::Severity::warning);
  EXPECT_LT(divergence->evidence_value("best_median"), 0);
  EXPECT_GT(divergence->step, 250);
  EXPECT_NE(divergence->message.find(" of its fall from "), std::string::npos) << divergence->message;
  for (std::uint64_t seed : {1, 2, 3}) {
    const Trained healthy = gaussian_nll(seed, Tier::watch, 400, last_loss);
    EXPECT_EQ(first_of(healthy.findings, "divergence"), nullptr) << findings_text(healthy.findings);
  }
}

TEST(BeyondZoo, HealthyRunsStayQuiet) {
  const Maker decoder_default = [](std::uint64_t seed, Fault fault, Tier tier, std::int64_t steps) {
    return decoder(seed, fault, tier, steps);
  };
  const Maker conv_default = [](std::uint64_t seed, Fault fault, Tier tier, std::int64_t steps) {
    return conv(seed, fault, tier, steps);
  };
  for (Maker make : {&lstm, decoder_default, &tanh_mlp, conv_default, &sparse_bag}) {
    std::int64_t warnings = 0;
    std::string text;
    for (std::uint64_t seed : {1, 2}) {
      const Trained run = make(seed, Fault::none, Tier::watch, 300);
      for (const Finding& f : run.findings) {
        EXPECT_NE(f.severity, tfdebug::Severity::error) << f.message;
        if (f.severity == tfdebug::Severity::warning) ++warnings;
      }
      EXPECT_EQ(run.replays, 0);
      text += findings_text(run.findings);
    }
    EXPECT_LE(warnings, 1) << text;
  }
}

}  // namespace
