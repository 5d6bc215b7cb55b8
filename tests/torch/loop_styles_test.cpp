// Training loops written the ways PyTorch code writes them, and what watch reads of their
// gradients (Note [Gradients zeroed after the optimizer] in src/torch/attach.cpp): zero_grad()
// before the forward or after the optimizer (to zeros, or to none), gradients accumulated over
// several steps, a loss scaled and its gradients unscaled in place; each handed over as
// Attachment::step's callable and between step_begin and step_end.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "findings_text.hpp"
#include "tfdebug/session/session.hpp"
#include "tfdebug/torch/attach.hpp"

namespace {

using tfdebug::Finding;
using tfdebug::Tier;
using tfdebug::testing::findings_text;

struct Mlp : ::torch::nn::Module {
  Mlp()
      : fc1(register_module("fc1", ::torch::nn::Linear(8, 32))),
        fc2(register_module("fc2", ::torch::nn::Linear(32, 3))) {}
  at::Tensor forward(const at::Tensor& x) { return fc2->forward(::torch::relu(fc1->forward(x))); }
  ::torch::nn::Linear fc1, fc2;
};

enum class Zero { first, after, after_to_none };
enum class Style { callable, markers };

struct Loop {
  Zero zero = Zero::first;
  Style style = Style::callable;
  std::int64_t accumulate = 1;  // steps whose gradients one optimizer step takes
  bool scaled = false;          // loss x 1024, gradients unscaled in place before the optimizer
  std::int64_t spike_at = -1;   // the loss x 1e4 at this step: every gradient explodes
  std::int64_t log_at = -1;     // log of the logits at this step: NaN in forward
};

std::vector<Finding> train(const Loop& loop, Tier tier, std::int64_t steps, std::int64_t* replays = nullptr) {
  at::set_num_threads(1);
  ::torch::manual_seed(1);
  Mlp net;
  ::torch::optim::SGD opt(net.parameters(), ::torch::optim::SGDOptions(0.05).momentum(0.9));
  const auto w = ::torch::randn({8, 3});
  tfdebug::RunConfig run;
  run.tier = tier;
  tfdebug::Session session(run);
  {
    auto debug = tfdebug::torch::attach(session, net);
    const auto step_fn = [&](std::int64_t step) {
      auto x = ::torch::randn({16, 8});
      auto y = ::torch::matmul(x, w).argmax(1);
      const bool steps_optimizer = step % loop.accumulate == loop.accumulate - 1;
      if (loop.zero == Zero::first && step % loop.accumulate == 0) opt.zero_grad();
      auto logits = net.forward(x);
      if (step == loop.log_at) logits = ::torch::log(logits);
      auto loss = ::torch::nn::functional::cross_entropy(logits, y) / double(loop.accumulate);
      if (step == loop.spike_at) loss = loss * 1e4;
      (loop.scaled ? loss * 1024.0 : loss).backward();
      if (steps_optimizer) {
        if (loop.scaled) {
          const at::NoGradGuard no_grad;
          for (auto& p : net.parameters()) p.mutable_grad().mul_(1.0 / 1024.0);
        }
        opt.step();
        if (loop.zero == Zero::after) opt.zero_grad();
        if (loop.zero == Zero::after_to_none) {  // LibTorch 1.13's zero_grad() has no set_to_none
          for (auto& p : net.parameters()) p.mutable_grad().reset();
        }
      }
      return loss.item<double>() * double(loop.accumulate);
    };
    for (std::int64_t step = 0; step < steps; ++step) {
      if (loop.style == Style::callable) {
        debug.step(step, [&] { return step_fn(step); });
      } else {
        debug.step_begin(step);
        debug.step_end(step, step_fn(step));
      }
    }
    if (replays != nullptr) *replays = debug.counters().replays;
  }
  return session.finish().findings;
}

const Finding* first_of(const std::vector<Finding>& findings, const std::string& rule) {
  for (const Finding& f : findings) {
    if (f.rule == rule) return &f;
  }
  return nullptr;
}

class LoopStyles : public ::testing::TestWithParam<Tier> {};

// A loss 1e4x its size at step 151 lifts every gradient 1e4x: exploding_gradients at that step,
// whenever the loop zeroes its gradients. Watch read zeros at step_end after opt.zero_grad() and
// was blind to it (its gradient history all zeros).
TEST_P(LoopStyles, AnExplosionIsSeenWhereverTheLoopZeroesItsGradients) {
  for (const Zero zero : {Zero::first, Zero::after, Zero::after_to_none}) {
    for (const Style style : {Style::callable, Style::markers}) {
      Loop loop;
      loop.zero = zero;
      loop.style = style;
      loop.spike_at = 151;
      const auto findings = train(loop, GetParam(), 160);
      const Finding* f = first_of(findings, "exploding_gradients");
      ASSERT_NE(f, nullptr) << "zero " << int(zero) << ", style " << int(style) << "\n"
                            << findings_text(findings);
      EXPECT_EQ(f->step, 151);
      EXPECT_EQ(f->module, "fc2") << f->message;
      EXPECT_GT(f->evidence_value("ratio_to_history"), 1e3) << f->message;
    }
  }
}

// Gradients accumulated over four steps, the optimizer and zero_grad() on every fourth: the
// zeroed gradients at those steps' ends are no vanishing layer, and a NaN is still named.
TEST_P(LoopStyles, GradientsAccumulatedOverStepsAreNotVanishing) {
  for (const Style style : {Style::callable, Style::markers}) {
    Loop loop;
    loop.zero = Zero::after;
    loop.style = style;
    loop.accumulate = 4;
    const auto healthy = train(loop, GetParam(), 200);
    EXPECT_TRUE(healthy.empty()) << findings_text(healthy);
  }
  Loop faulty;
  faulty.zero = Zero::after;
  faulty.accumulate = 4;
  faulty.log_at = 102;
  std::int64_t replays = 0;
  const auto findings = train(faulty, GetParam(), 110, &replays);
  const Finding* f = first_of(findings, "nonfinite");
  ASSERT_NE(f, nullptr) << findings_text(findings);
  EXPECT_EQ(f->op, "aten::log");
  EXPECT_EQ(f->step, 102);
  EXPECT_EQ(replays, GetParam() == Tier::watch ? 1 : 0);
  EXPECT_EQ(first_of(findings, "vanishing_gradients"), nullptr) << findings_text(findings);
}

// Gradients unscaled in place before the optimizer (a loss scaled by 1024, as mixed precision
// does): read as backward left them (Note [Optimizer]: ops under no_grad between backward and the
// optimizer count as the optimizer's), on every step alike, so the explosion reads 1024 times
// the norm it reads without the scale, at the same step.
TEST_P(LoopStyles, GradientsUnscaledInPlaceAreReadAsBackwardLeftThem) {
  Loop plain;
  plain.spike_at = 151;
  Loop scaled = plain;
  scaled.scaled = true;
  const auto a = train(plain, GetParam(), 160);
  const auto b = train(scaled, GetParam(), 160);
  const Finding* fa = first_of(a, "exploding_gradients");
  const Finding* fb = first_of(b, "exploding_gradients");
  ASSERT_NE(fa, nullptr) << findings_text(a);
  ASSERT_NE(fb, nullptr) << findings_text(b);
  EXPECT_EQ(fb->step, fa->step);
  EXPECT_NEAR(fb->evidence_value("norm"), 1024 * fa->evidence_value("norm"),
              1e-3 * 1024 * fa->evidence_value("norm"));
  EXPECT_NEAR(fb->evidence_value("ratio_to_history"), fa->evidence_value("ratio_to_history"),
              1e-3 * fa->evidence_value("ratio_to_history"));
}

INSTANTIATE_TEST_SUITE_P(Watch, LoopStyles, ::testing::Values(Tier::watch, Tier::diagnose),
                         [](const ::testing::TestParamInfo<Tier>& param) {
                           return param.param == Tier::watch ? "watch" : "diagnose";
                         });

}  // namespace
