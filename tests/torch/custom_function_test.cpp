// A custom autograd function (torch::autograd::Function) whose hand-written backward is wrong
// where the forward is fine: log with the gradient 1/x, infinite at 0 where the forward clamps.
// The classic bug of a hand-written gradient: in both tiers, its division is named in backward.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/autograd.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>
#include <torch/optim/sgd.h>

#include <functional>
#include <vector>

#include "findings_text.hpp"
#include "tfdebug/session/session.hpp"
#include "tfdebug/torch/attach.hpp"
#include "tfdebug/torch/profiler.hpp"

namespace {
using tfdebug::Tier;

// log(x) with a hand-written gradient 1/x: infinite at x == 0.
struct MyLog : ::torch::autograd::Function<MyLog> {
  static at::Tensor forward(::torch::autograd::AutogradContext* ctx, const at::Tensor& x) {
    ctx->save_for_backward({x});
    return at::log(x.clamp_min(1e-12));
  }
  static ::torch::autograd::variable_list backward(::torch::autograd::AutogradContext* ctx,
                                                   ::torch::autograd::variable_list grad) {
    const auto x = ctx->get_saved_variables()[0];
    return {grad[0] / x};
  }
};

struct Net : ::torch::nn::Module {
  Net()
      : fc1(register_module("fc1", ::torch::nn::Linear(6, 16))),
        head(register_module("head", ::torch::nn::Linear(16, 3))) {}
  at::Tensor forward(const at::Tensor& x, bool bad) {
    auto h = fc1->forward(x);
    auto p = MyLog::apply(bad ? h * 0.0 : h.abs() + 1.0);
    return head->forward(p);
  }
  ::torch::nn::Linear fc1, head;
};

// `steps` steps of Adam on random batches (16 x 6, 3 classes), each handed to Attachment::step
// in `tier`; `forward(step, batch)` is the model's output. The run's findings.
std::vector<tfdebug::Finding> train(::torch::nn::Module& net, Tier tier, std::int64_t steps,
                                    const std::function<at::Tensor(std::int64_t, at::Tensor)>& forward) {
  at::set_num_threads(1);
  ::torch::optim::Adam opt(net.parameters(), 1e-3);
  tfdebug::RunConfig run;
  run.tier = tier;
  tfdebug::Session session(run);
  {
    auto debug = tfdebug::torch::attach(session, net);
    for (std::int64_t step = 0; step < steps; ++step) {
      debug.step(step, [&] {
        opt.zero_grad();
        auto x = ::torch::randn({16, 6});
        auto y = ::torch::randint(3, {16});
        auto loss = ::torch::nn::functional::cross_entropy(forward(step, x), y);
        loss.backward();
        opt.step();
        return loss.item<double>();
      });
    }
  }
  return session.finish().findings;
}

// The loss stays finite at step 30 (the forward clamps); the division makes +-Inf, the product
// by 0 after it NaN, and every gradient of fc1 is NaN: watch replays the step and names the
// division, as diagnose does.
TEST(CustomFunction, AnInfinityMadeByAHandWrittenGradientIsNamedInBackward) {
  for (Tier tier : {Tier::watch, Tier::diagnose}) {
    ::torch::manual_seed(1);
    Net net;
    const auto findings =
        train(net, tier, 40, [&](std::int64_t step, at::Tensor x) { return net.forward(x, step == 30); });
    const tfdebug::Finding* f = tfdebug::testing::first_finding(findings, "nonfinite");
    ASSERT_NE(f, nullptr) << tfdebug::testing::findings_text(findings);
    EXPECT_EQ(f->op, "aten::div") << f->message;
    EXPECT_EQ(f->phase, tfdebug::Phase::backward) << f->message;
    EXPECT_EQ(f->step, 30) << f->message;
    EXPECT_EQ(f->module, "") << f->message;  // the function is applied in the model's own forward
    EXPECT_EQ(f->evidence_value("producer"), 1) << f->message;
  }
}

// 1/|x|'s hand-written gradient: infinite at x == 0, where the forward clamps.
struct LogAbs : ::torch::autograd::Function<LogAbs> {
  static at::Tensor forward(::torch::autograd::AutogradContext* ctx, const at::Tensor& x) {
    ctx->save_for_backward({x});
    return at::log(x.abs().clamp_min(1e-12));
  }
  static ::torch::autograd::variable_list backward(::torch::autograd::AutogradContext* ctx,
                                                   ::torch::autograd::variable_list grad) {
    const auto x = ctx->get_saved_variables()[0];
    return {grad[0] / x};
  }
};

// The function applied in a module of its own, right after a layer: no op between fc1's and the
// function's, so the function's node was named after fc1 (Note [A custom function's node]).
struct LogAbsLayer : ::torch::nn::Module {
  at::Tensor forward(const at::Tensor& x) { return LogAbs::apply(x); }
};

struct LayerNet : ::torch::nn::Module {
  explicit LayerNet(bool scoped)
      : fc1(register_module("fc1", ::torch::nn::Linear(::torch::nn::LinearOptions(6, 16).bias(false)))),
        act(register_module("act", std::make_shared<LogAbsLayer>())),
        head(register_module("head", ::torch::nn::Linear(16, 3))),
        scoped_(scoped) {}
  at::Tensor forward(const at::Tensor& x) {
    auto h = fc1->forward(x);
    at::Tensor p;
    if (scoped_) {
      const tfdebug::torch::Scope scope("act");  // what names the module's own ops
      p = act->forward(h);
    } else {
      p = act->forward(h);
    }
    return head->forward(p);
  }
  ::torch::nn::Linear fc1;
  std::shared_ptr<LogAbsLayer> act;
  ::torch::nn::Linear head;
  bool scoped_;
};

// The division is named in backward at the bad step, in the module the function's forward ran in
// (the scope's, or the top level's without one, as its forward ops are), never in fc1.
TEST(CustomFunction, AHandWrittenGradientInAModuleOfItsOwnIsNotNamedAfterThePreviousLayer) {
  for (bool scoped : {false, true}) {
    for (Tier tier : {Tier::watch, Tier::diagnose}) {
      ::torch::manual_seed(2);
      LayerNet net(scoped);
      const auto findings = train(net, tier, 20, [&](std::int64_t step, at::Tensor x) {
        if (step == 12) x[0].zero_();  // fc1 (no bias) gives 0 there; the clamp keeps the forward finite
        return net.forward(x);
      });
      const tfdebug::Finding* f = tfdebug::testing::first_finding(findings, "nonfinite");
      ASSERT_NE(f, nullptr) << tfdebug::testing::findings_text(findings);
      SCOPED_TRACE(std::string(scoped ? "scoped, " : "") + (tier == Tier::watch ? "watch" : "diagnose"));
      EXPECT_EQ(f->op, "aten::div") << f->message;
      EXPECT_EQ(f->phase, tfdebug::Phase::backward) << f->message;
      EXPECT_EQ(f->step, 12) << f->message;
      EXPECT_EQ(f->module, scoped ? "act" : "") << f->message;
      EXPECT_EQ(f->evidence_value("producer"), 1) << f->message;
    }
  }
}

// The op profiler files the function's backward ops where the adapter names them.
TEST(CustomFunction, TheProfilerFilesTheFunctionsBackwardOpsInItsModule) {
  at::set_num_threads(1);
  ::torch::manual_seed(3);
  LayerNet net(/*scoped=*/true);
  ::torch::optim::SGD opt(net.parameters(), 0.01);
  tfdebug::torch::Profiler profiler(net);
  for (std::int64_t step = 0; step < 3; ++step) {
    profiler.step_begin(step);
    opt.zero_grad();
    auto y = ::torch::randint(3, {16});
    auto loss = ::torch::nn::functional::cross_entropy(net.forward(::torch::randn({16, 6})), y);
    loss.backward();
    opt.step();
    profiler.step_end(step);
  }
  const auto report = profiler.stop();
  bool seen = false;
  for (const auto& row : report.ops) {
    if (row.op != "aten::div" || row.phase != tfdebug::Phase::backward) continue;
    seen = true;
    EXPECT_EQ(row.module, "act");
  }
  EXPECT_TRUE(seen);
}
}  // namespace
