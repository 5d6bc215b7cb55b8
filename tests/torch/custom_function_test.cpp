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

#include "findings_text.hpp"
#include "tfdebug/session/session.hpp"
#include "tfdebug/torch/attach.hpp"

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

// The loss stays finite at step 30 (the forward clamps); the division makes +-Inf, the product
// by 0 after it NaN, and every gradient of fc1 is NaN: watch replays the step and names the
// division, as diagnose does.
TEST(CustomFunction, AnInfinityMadeByAHandWrittenGradientIsNamedInBackward) {
  for (Tier tier : {Tier::watch, Tier::diagnose}) {
    at::set_num_threads(1);
    ::torch::manual_seed(1);
    Net net;
    ::torch::optim::Adam opt(net.parameters(), 1e-3);
    tfdebug::RunConfig run;
    run.tier = tier;
    tfdebug::Session session(run);
    {
      auto debug = tfdebug::torch::attach(session, net);
      for (std::int64_t step = 0; step < 40; ++step) {
        debug.step(step, [&] {
          opt.zero_grad();
          auto x = ::torch::randn({16, 6});
          auto y = ::torch::randint(3, {16});
          auto loss = ::torch::nn::functional::cross_entropy(net.forward(x, step == 30), y);
          loss.backward();
          opt.step();
          return loss.item<double>();
        });
      }
    }
    const auto findings = session.finish().findings;
    const tfdebug::Finding* f = tfdebug::testing::first_finding(findings, "nonfinite");
    ASSERT_NE(f, nullptr) << tfdebug::testing::findings_text(findings);
    EXPECT_EQ(f->op, "aten::div") << f->message;
    EXPECT_EQ(f->phase, tfdebug::Phase::backward) << f->message;
    EXPECT_EQ(f->step, 30) << f->message;
    EXPECT_EQ(f->module, "") << f->message;  // the function is applied in the model's own forward
    EXPECT_EQ(f->evidence_value("producer"), 1) << f->message;
  }
}
}  // namespace
