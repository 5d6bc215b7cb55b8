// One decision of an op's module (Note [Module of an op] in src/torch/module_attribution.hpp):
// on the demo model, every op the adapter observes is named with the module under which the op
// profiler, watching the same steps, files the same op. A finding and a profile row agree. And
// the ops of a torch::nn::Sequential's children without parameters (Note [Between two layers of a
// Sequential]): named where that is certain, left to their Sequential where it is not.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/functional.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/pooling.h>
#include <torch/optim/sgd.h>

#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "demo_model.hpp"
#include "findings_text.hpp"
#include "tfdebug/session/session.hpp"
#include "tfdebug/torch/attach.hpp"
#include "tfdebug/torch/profiler.hpp"

namespace {

using namespace tfdebug;
using Key = std::tuple<std::string, std::string, Phase>;  // op, module, phase

class Recorder : public ObservationSink {
 public:
  void begin_step(std::int64_t) override {}
  Verdict observe(const Observation& o) override {
    if (o.role != Role::output) return std::nullopt;
    const std::lock_guard lock(mutex);
    seen.emplace(std::string(o.op), std::string(o.module), o.phase);
    return std::nullopt;
  }
  void end_step(std::int64_t, std::optional<double>) override {}
  Tier tier() const noexcept override { return Tier::diagnose; }
  bool should_stop() const noexcept override { return false; }
  std::mutex mutex;
  std::set<Key> seen;
};

TEST(ModuleAttribution, TheAdapterAndTheProfilerNameTheSameModuleForEveryOp) {
  at::set_num_threads(1);
  demo::DemoTrainer trainer(demo::DemoConfig{});
  Recorder recorder;
  tfdebug::torch::ProfilerOptions options;
  options.memory = false;
  tfdebug::torch::Profiler profiler(trainer.model(), options);
  {
    auto debug = tfdebug::torch::attach(recorder, trainer.model());
    for (std::int64_t step = 0; step < 2; ++step) {
      profiler.step_begin(step);
      debug.step_begin(step);
      const double loss = trainer.train_step();
      debug.step_end(step, loss);
      profiler.step_end(step);
    }
  }
  const profile::OpProfile p = profiler.stop();
  std::set<Key> rows;
  for (const auto& row : p.ops) rows.emplace(row.op, row.module, row.phase);
  ASSERT_GT(recorder.seen.size(), 50u);
  for (const Key& k : recorder.seen) {
    if (std::get<2>(k) == Phase::optimizer) continue;  // not intercepted (Note [Optimizer])
    std::string elsewhere;
    for (const Key& r : rows)
      if (std::get<0>(r) == std::get<0>(k) && std::get<2>(r) == std::get<2>(k))
        elsewhere += " '" + std::get<1>(r) + "'";
    EXPECT_TRUE(rows.contains(k)) << std::get<0>(k) << " in '" << std::get<1>(k) << "' ("
                                  << phase_name(std::get<2>(k)) << "): the profiler files it under"
                                  << elsewhere;
  }
  // The attention scores and the mix (q k^T, then the weights times v) read no parameter: they run
  // in the attention module, not in attn.k or attn.v, the last layers read.
  EXPECT_TRUE(recorder.seen.contains(Key{"aten::matmul", "blocks.0.attn", Phase::forward}));
  EXPECT_TRUE(recorder.seen.contains(Key{"aten::softmax", "blocks.0.attn", Phase::forward}));
  EXPECT_FALSE(recorder.seen.contains(Key{"aten::softmax", "blocks.0.attn.k", Phase::forward}));
  // The MLP's activation runs in the MLP, whose fc1 it follows.
  EXPECT_TRUE(recorder.seen.contains(Key{"aten::gelu", "blocks.0.mlp", Phase::forward}) ||
              recorder.seen.contains(Key{"aten::relu", "blocks.0.mlp", Phase::forward}));
}

// ---- Sequential ----------------------------------------------------------------------------------

namespace nn = ::torch::nn;

// What the adapter (in diagnose) and the profiler saw of `steps` SGD steps of `model`, whose
// forward is `forward` and whose loss is a cross-entropy over 3 classes of `input`'s batch.
struct Seen {
  std::set<Key> adapter, profiler;
};
Seen observe(nn::Module& model, const std::function<at::Tensor(const at::Tensor&)>& forward,
             const std::vector<std::int64_t>& input, std::int64_t steps = 2) {
  at::set_num_threads(1);
  ::torch::optim::SGD opt(model.parameters(), 0.01);
  Recorder recorder;
  tfdebug::torch::ProfilerOptions options;
  options.memory = false;
  tfdebug::torch::Profiler profiler(model, options);
  {
    auto debug = tfdebug::torch::attach(recorder, model);
    for (std::int64_t step = 0; step < steps; ++step) {
      profiler.step_begin(step);
      debug.step(step, [&] {
        opt.zero_grad();
        const auto x = ::torch::randn(input);
        const auto loss = nn::functional::cross_entropy(forward(x), ::torch::randint(3, {input[0]}));
        loss.backward();
        opt.step();
        return loss.item<double>();
      });
      profiler.step_end(step);
    }
  }
  Seen seen;
  seen.adapter = recorder.seen;
  for (const auto& row : profiler.stop().ops) seen.profiler.emplace(row.op, row.module, row.phase);
  return seen;
}

std::string modules_of(const std::set<Key>& seen, const std::string& op, Phase phase) {
  std::string modules;
  for (const Key& k : seen) {
    if (std::get<0>(k) == op && std::get<2>(k) == phase) modules += " '" + std::get<1>(k) + "'";
  }
  return modules;
}

// The child without parameters between two linear layers runs the ops between them, forward and
// backward; of two between (Tanh, Dropout), the one whose kind runs the op. A child whose ops are
// not known (a Functional) among several, or a last child, leaves them to the Sequential. The
// profiler files each op where the adapter names it.
TEST(ModuleAttribution, TheChildBetweenTwoLayersOfASequentialRunsTheOpsBetweenThem) {
  struct Net : nn::Module {
    nn::Sequential body{nn::Linear(6, 16),
                        nn::ReLU(),
                        nn::Linear(16, 16),
                        nn::Tanh(),
                        nn::Dropout(0.1),
                        nn::Linear(16, 16),
                        nn::Functional([](const at::Tensor& h) { return h * 2.0; }),
                        nn::ReLU(),
                        nn::Linear(16, 3),
                        nn::Sigmoid()};
    Net() { register_module("body", body); }
  } net;
  const Seen seen = observe(net, [&](const at::Tensor& x) { return net.body->forward(x); }, {8, 6});
  for (const auto& [op, module, phase] : std::vector<Key>{
           {"aten::relu", "body.1", Phase::forward},
           {"aten::threshold_backward", "body.1", Phase::backward},
           {"aten::tanh", "body.3", Phase::forward},
           {"aten::tanh_backward", "body.3", Phase::backward},
           {"aten::dropout", "body.4", Phase::forward},
           {"aten::mul", "body", Phase::forward},      // the Functional's, beside a ReLU
           {"aten::relu", "body", Phase::forward},     // that ReLU
           {"aten::sigmoid", "body", Phase::forward},  // last: its op and the loss's look the same
       }) {
    EXPECT_TRUE(seen.adapter.contains(Key{op, module, phase}))
        << op << " (" << phase_name(phase) << ") named in" << modules_of(seen.adapter, op, phase);
    EXPECT_TRUE(seen.profiler.contains(Key{op, module, phase}))
        << op << " (" << phase_name(phase) << ") filed in" << modules_of(seen.profiler, op, phase);
  }
}

// A Sequential attached as the model itself (its children are "0", "1", ...), of convolutions:
// a ReLU between a BatchNorm and a zero-padded convolution is named; one before a convolution
// that pads by reflection (a pad op runs before its parameters') is left to the Sequential.
TEST(ModuleAttribution, ConvolutionsInASequentialAttachedAsTheModel) {
  nn::Sequential net(nn::Conv2d(nn::Conv2dOptions(1, 4, 3).padding(1)), nn::BatchNorm2d(4), nn::ReLU(),
                     nn::Conv2d(nn::Conv2dOptions(4, 4, 3).padding(1)), nn::GELU(),
                     nn::Conv2d(nn::Conv2dOptions(4, 3, 3).padding(1).padding_mode(::torch::kReflect)),
                     nn::AdaptiveAvgPool2d(1), nn::Flatten());
  const Seen seen = observe(*net, [&](const at::Tensor& x) { return net->forward(x); }, {4, 1, 6, 6});
  EXPECT_TRUE(seen.adapter.contains(Key{"aten::relu", "2", Phase::forward}))
      << modules_of(seen.adapter, "aten::relu", Phase::forward);
  EXPECT_TRUE(seen.adapter.contains(Key{"aten::gelu", "", Phase::forward}))
      << modules_of(seen.adapter, "aten::gelu", Phase::forward);
  EXPECT_TRUE(seen.profiler.contains(Key{"aten::relu", "2", Phase::forward}))
      << modules_of(seen.profiler, "aten::relu", Phase::forward);
}

// A finding names the child: log() in a Functional between two linear layers makes NaN once its
// input goes negative, found in the default tier (replayed) and in diagnose at "body.1".
TEST(ModuleAttribution, ANonFiniteValueMadeInAChildWithoutParametersNamesIt) {
  for (const Tier tier : {Tier::watch, Tier::diagnose}) {
    ::torch::manual_seed(3);
    at::set_num_threads(1);
    nn::Sequential body(nn::Linear(4, 8),
                        nn::Functional([](const at::Tensor& h) { return at::log(h + 1.0); }),
                        nn::Linear(8, 3));
    ::torch::optim::SGD opt(body->parameters(), 0.01);
    tfdebug::RunConfig run;
    run.tier = tier;
    tfdebug::Session session(run);
    {
      auto debug = tfdebug::torch::attach(session, *body);
      for (std::int64_t step = 0; step < 6; ++step) {
        debug.step(step, [&] {
          opt.zero_grad();
          auto x = ::torch::rand({16, 4}) * 0.1;
          if (step == 4) x = x * 400.0;  // the first layer's outputs go below -1 somewhere
          const auto loss = nn::functional::cross_entropy(body->forward(x), ::torch::randint(3, {16}));
          loss.backward();
          opt.step();
          return loss.item<double>();
        });
      }
    }
    const auto findings = session.finish().findings;
    const tfdebug::Finding* nonfinite = tfdebug::testing::first_finding(findings, "nonfinite");
    ASSERT_NE(nonfinite, nullptr) << tfdebug::testing::findings_text(findings);
    EXPECT_EQ(nonfinite->op, "aten::log") << nonfinite->message;
    EXPECT_EQ(nonfinite->module, "1") << nonfinite->message;
    EXPECT_EQ(nonfinite->phase, Phase::forward);
    EXPECT_EQ(nonfinite->step, 4);
  }
}

}  // namespace
