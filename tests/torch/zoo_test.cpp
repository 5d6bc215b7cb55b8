// The diagnosis on models other than the demo (tools/tfdebug/demo/zoo.hpp: an MLP with SGD and
// momentum, a CNN with BatchNorm and Adam, a TransformerEncoder with padding masks and AdamW, a GRU
// with RMSprop, a deep sigmoid stack with SGD): every planted fault is named with its rule, op,
// module, phase and step, in the default tier (watch, with Attachment::step's replay) and in
// diagnose; healthy 300-step runs stay quiet; a replayed step leaves the run as one run of it
// would have.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "findings_text.hpp"
#include "tfdebug/session/session.hpp"
#include "tfdebug/torch/attach.hpp"
#include "zoo.hpp"

namespace {

using tfdebug::Finding;
using tfdebug::Phase;
using tfdebug::Severity;
using tfdebug::Tier;
using tfdebug::demo::ZooConfig;
using tfdebug::demo::ZooFault;
using tfdebug::demo::ZooModel;
using tfdebug::demo::ZooTrainer;
using tfdebug::testing::findings_text;

constexpr std::int64_t kFaultStep = 20;

struct Trained {
  tfdebug::RunSummary summary;
  tfdebug::torch::Attachment::Counters counters;
};

// Trains `config` for `steps` steps under a Session of `tier`: the step handed to
// Attachment::step (replay on) or marked with step_begin/step_end. With `until` and from step
// `until_from`, stops after the first step with a finding of that rule.
Trained train(const ZooConfig& config, Tier tier, std::int64_t steps, bool as_callable = true,
              const std::string& until = "", std::int64_t until_from = 0,
              const tfdebug::torch::AttachOptions& options = {}) {
  at::set_num_threads(1);
  ZooTrainer trainer(config);
  tfdebug::RunConfig run;
  run.tier = tier;
  if (config.fault == ZooFault::f16_overflow) run.target_dtype = tfdebug::DType::f16;
  tfdebug::Session session(run);
  Trained out;
  {
    auto debug = tfdebug::torch::attach(session, trainer.model(), options);
    for (std::int64_t step = 0; step < steps; ++step) {
      trainer.before_step(step);
      if (as_callable) {
        debug.step(step, [&] { return trainer.train_step(step); });
      } else {
        debug.step_begin(step);
        const double loss = trainer.train_step(step);
        debug.step_end(step, loss);
      }
      if (!until.empty() && step >= until_from) {
        const auto found = session.findings();
        if (std::any_of(found.begin(), found.end(), [&](const Finding& f) { return f.rule == until; })) break;
      }
    }
    out.counters = debug.counters();
  }
  out.summary = session.finish();
  return out;
}

const Finding* first_of(const std::vector<Finding>& findings, const std::string& rule) {
  const Finding* first = nullptr;
  for (const Finding& f : findings) {
    if (f.rule == rule && (first == nullptr || f.step < first->step)) first = &f;
  }
  return first;
}

struct Case {
  ZooModel model;
  ZooFault fault;
};

std::vector<Case> every_fault() {
  std::vector<Case> cases;
  for (auto model : {ZooModel::mlp, ZooModel::cnn, ZooModel::encoder, ZooModel::gru, ZooModel::sigmoid}) {
    for (int f = 1; f <= int(ZooFault::f16_overflow); ++f) {
      if (ZooTrainer::supports(model, ZooFault(f))) cases.push_back({model, ZooFault(f)});
    }
  }
  return cases;
}

class Fault : public ::testing::TestWithParam<std::tuple<Case, Tier>> {};

// The rules that read what only watch's samples observe (layer outputs, parameters, updates).
bool read_samples(const std::string& rule) {
  return rule == "update_ratio" || rule == "dead_units" || rule == "saturation" ||
         rule == "headroom_overflow";
}

// Every fault: the expected rule names the expected op, module and phase, at the fault step for
// the faults that show at once (non-finite values, a learning-rate jump, saturation, overflow)
// and after the rule's window for dead units; and nothing is an error before the fault.
// The rules that read watch's samples see a fault at the first sample at or after it; which
// steps sample depends on what a sample costs on the machine (Note [Watch budget]), so in watch
// these run on the fixed schedule (a sample every 10 steps, the fault step one of them), and
// ZooBudget below runs them on the default one.
TEST_P(Fault, IsNamedWhereItHappened) {
  const auto& [c, tier] = GetParam();
  ZooConfig config{.model = c.model, .fault = c.fault, .fault_step = kFaultStep};
  const auto expected = ZooTrainer(config).expectation();
  ASSERT_TRUE(expected);
  const bool dead = c.fault == ZooFault::dead_relu || c.fault == ZooFault::dead_channel;
  tfdebug::torch::AttachOptions options;
  if (read_samples(expected->rule)) options.watch_budget = 0;
  const Trained run = train(config, tier, kFaultStep + (dead ? 105 : 10), true, "", 0, options);
  const auto& findings = run.summary.findings;
  SCOPED_TRACE(findings_text(findings));
  // The first non-finite finding must be the expected one; of other rules, one of the findings
  // (an overflow shows in every layer after the first).
  const Finding* f = first_of(findings, expected->rule);
  if (expected->rule != "nonfinite" && !expected->op.empty()) {
    for (const Finding& other : findings) {
      if (other.rule == expected->rule && other.module == expected->module && other.op == expected->op)
        f = &other;
    }
  }
  ASSERT_NE(f, nullptr) << "no " << expected->rule << " finding";
  EXPECT_EQ(f->phase, expected->phase);
  if (!expected->op.empty()) {
    EXPECT_EQ(f->op, expected->op);
    EXPECT_EQ(f->module, expected->module);
  }
  if (dead) {
    EXPECT_GE(f->step, expected->step);
  } else {
    EXPECT_EQ(f->step, expected->step);
  }
  for (const Finding& other : findings) {
    if (other.severity == Severity::error) {
      EXPECT_GE(other.step, kFaultStep) << other.message;
    }
  }
  if (expected->rule == "nonfinite") {
    // The first non-finite finding of the run is the producer (or the data, or the parameter).
    for (const Finding& other : findings) {
      if (other.rule == "nonfinite") {
        EXPECT_GE(other.step, f->step);
      }
    }
    // Replayed in watch, unless a parameter held the NaN when the step began and watch sampled
    // that step (it saw the parameter): the replay would see the same (Note [Replay]).
    if (tier == Tier::watch && c.fault == ZooFault::param_nan) {
      EXPECT_LE(run.counters.replays, 1);
    } else {
      EXPECT_EQ(run.counters.replays, tier == Tier::watch ? 1 : 0);
    }
  } else {
    EXPECT_EQ(run.counters.replays, 0);
  }
  switch (c.fault) {
    case ZooFault::input_nan:
      EXPECT_NE(f->message.find("the data holds NaN"), std::string::npos) << f->message;
      EXPECT_EQ(f->evidence_value("input_nan"), 1);
      break;
    case ZooFault::domain:
    case ZooFault::backward_inf:
    case ZooFault::masked_row:
      EXPECT_EQ(f->evidence_value("producer"), 1) << f->message;
      break;
    case ZooFault::dead_relu:
      EXPECT_EQ(f->evidence_value("fraction"), 1.0) << f->message;  // every unit of fc1's ReLU
      break;
    case ZooFault::dead_channel: {
      const auto* which = f->find_evidence("dead_units");
      ASSERT_NE(which, nullptr);
      EXPECT_EQ(std::get<std::vector<std::int64_t>>(*which), std::vector<std::int64_t>{3}) << f->message;
      EXPECT_NE(f->message.find("1 of 8 channels"), std::string::npos) << f->message;
      break;
    }
    default:
      break;
  }
}

std::string fault_name(const ::testing::TestParamInfo<std::tuple<Case, Tier>>& info) {
  const auto& [c, tier] = info.param;
  return std::string(tfdebug::demo::zoo_model_name(c.model)) + "_" +
         std::string(tfdebug::demo::zoo_fault_name(c.fault)) + "_" +
         (tier == Tier::watch ? "watch" : "diagnose");
}

INSTANTIATE_TEST_SUITE_P(Zoo, Fault,
                         ::testing::Combine(::testing::ValuesIn(every_fault()),
                                            ::testing::Values(Tier::watch, Tier::diagnose)),
                         fault_name);

// Watch's default schedule spaces its samples by what they cost (Note [Watch budget]): a fault
// that lasts (dead units, saturated sigmoids) is seen at the first sample at or after the rule's
// window, at most watch_every_max steps after the fault step and the window.
TEST(ZooBudget, LastingFaultsAreSeenAtASample) {
  const std::int64_t every_max = tfdebug::torch::AttachOptions{}.watch_every_max;
  for (const Case c : {Case{ZooModel::mlp, ZooFault::dead_relu}, Case{ZooModel::cnn, ZooFault::dead_channel},
                       Case{ZooModel::sigmoid, ZooFault::saturate}}) {
    const ZooConfig config{.model = c.model, .fault = c.fault, .fault_step = kFaultStep};
    const auto expected = ZooTrainer(config).expectation();
    ASSERT_TRUE(expected);
    const std::int64_t window = expected->rule == "dead_units" ? 100 : 0;
    const Trained run =
        train(config, Tier::watch, kFaultStep + window + every_max + 1, true, expected->rule, kFaultStep);
    SCOPED_TRACE(findings_text(run.summary.findings));
    const Finding* f = first_of(run.summary.findings, expected->rule);
    ASSERT_NE(f, nullptr) << "no " << expected->rule << " finding";
    EXPECT_EQ(f->op, expected->op);
    EXPECT_EQ(f->phase, expected->phase);
    EXPECT_GE(f->step, kFaultStep);
    EXPECT_LE(f->step, kFaultStep + window + every_max);
    EXPECT_EQ(run.counters.replays, 0);
    for (const Finding& other : run.summary.findings)
      EXPECT_NE(other.severity, Severity::error) << other.message;
  }
}

// The schedule in a real run: the fixed one samples every tenth step; the default one the first
// step and the tenth, then at most watch_every_max steps apart (how far depends on what a sample
// costs on this machine), and never closer than watch_every.
TEST(ZooBudget, SamplesAtLeastEveryMaxAndAtMostEveryNSteps) {
  const ZooConfig config{.model = ZooModel::mlp};
  tfdebug::torch::AttachOptions fixed_options;
  fixed_options.watch_budget = 0;
  const Trained fixed = train(config, Tier::watch, 200, true, "", 0, fixed_options);
  EXPECT_EQ(fixed.counters.sampled_steps, 20);
  const Trained spaced = train(config, Tier::watch, 200);
  // 0, 10, then a sample at least every 50 steps: 60, 110, 160 at the latest.
  EXPECT_GE(spaced.counters.sampled_steps, 5);
  // A finding runs the steps after it in diagnose, which observes every step.
  if (spaced.summary.findings.empty()) {
    EXPECT_LE(spaced.counters.sampled_steps, 20);
  }
}

// The step_begin/step_end markers: no replay, so watch names the first non-finite value it sees
// (a gradient) and escalates; diagnose still names the producer.
TEST(ZooMarkers, WatchEscalatesAndDiagnoseNamesTheProducer) {
  const ZooConfig config{.model = ZooModel::mlp, .fault = ZooFault::domain, .fault_step = kFaultStep};
  const Trained watch = train(config, Tier::watch, kFaultStep + 5, /*as_callable=*/false);
  EXPECT_EQ(watch.counters.replays, 0);
  const Finding* w = first_of(watch.summary.findings, "nonfinite");
  ASSERT_NE(w, nullptr) << findings_text(watch.summary.findings);
  EXPECT_EQ(w->step, kFaultStep);
  const Trained diagnose = train(config, Tier::diagnose, kFaultStep + 5, /*as_callable=*/false);
  const Finding* d = first_of(diagnose.summary.findings, "nonfinite");
  ASSERT_NE(d, nullptr) << findings_text(diagnose.summary.findings);
  EXPECT_EQ(d->op, "aten::log");
  EXPECT_EQ(d->step, kFaultStep);
}

class Healthy : public ::testing::TestWithParam<std::tuple<ZooModel, Tier>> {};

// 300 healthy steps of each model over three seeds: no error, and at most one warning per two
// runs (the bound of the issue; each seen so far was a true one: a 2x loss jump, a 10x gradient).
TEST_P(Healthy, StaysQuiet) {
  const auto& [model, tier] = GetParam();
  std::int64_t warnings = 0;
  std::string text;
  const int seeds = tier == Tier::watch ? 3 : 2;
  for (int seed = 1; seed <= seeds; ++seed) {
    const Trained run = train(ZooConfig{.model = model, .seed = std::uint64_t(seed)}, tier, 300);
    for (const Finding& f : run.summary.findings) {
      EXPECT_NE(f.severity, Severity::error) << f.message;
      if (f.severity == Severity::warning) ++warnings;
    }
    EXPECT_EQ(run.counters.replays, 0);
    text += findings_text(run.summary.findings);
  }
  EXPECT_LE(2 * warnings, seeds) << text;
}

// Note [A spike or an explosion]: in these seeds the converged encoder's hard mini-batches lift
// single steps 10-40x above its layers' recent median gradient norm, below their first steps'
// peak; before exploding_gradients asked for the run's peak (or a sustained rise) they raised it
// on most layers of a healthy run.
TEST(ZooHealthy, EncoderGradientSpikesAreNoExplosion) {
  for (const std::uint64_t seed : {5u, 6u}) {
    const Trained run = train(ZooConfig{.model = ZooModel::encoder, .seed = seed}, Tier::watch, 300);
    for (const Finding& f : run.summary.findings) {
      EXPECT_NE(f.rule, "exploding_gradients") << "seed " << seed << ": " << f.message;
    }
  }
}

// A GRU under RMSprop at PyTorch's default learning rate: RMSprop has no bias correction, so its
// first steps are several learning rates, and one hard batch in the first 25 steps lifts the loss
// 1.7-2.9x above the median of the steps before and a layer's gradient 10-12x, just past the
// largest of those few steps, back at the median the next step. In these seeds the loss z-score
// over 11-22 losses and the 20-step record raised loss_spike and exploding_gradients (7 warnings
// in 4 runs); the z-score now waits for a whole window and the record for peak_after steps.
TEST(ZooHealthy, EarlyRmspropNoiseIsNoSpike) {
  for (const std::uint64_t seed : {10u, 11u, 21u, 22u}) {
    const Trained run = train(ZooConfig{.model = ZooModel::gru, .seed = seed}, Tier::watch, 300);
    for (const Finding& f : run.summary.findings) {
      EXPECT_EQ(f.severity, Severity::info) << "seed " << seed << ": " << f.message;
    }
  }
}

// Note [One spike, one finding]: the converged encoder of seed 8 takes a hard batch at step 234
// that lifts five layers' gradients 38-75x their median at once (the median layer 19x): one
// warning naming the five, where there were five.
TEST(ZooHealthy, OneGradientSpikeIsOneFinding) {
  const Trained run = train(ZooConfig{.model = ZooModel::encoder, .seed = 8}, Tier::watch, 300);
  std::vector<const Finding*> exploding;
  for (const Finding& f : run.summary.findings) {
    if (f.rule == "exploding_gradients") exploding.push_back(&f);
  }
  ASSERT_EQ(exploding.size(), 1u) << findings_text(run.summary.findings);
  EXPECT_EQ(exploding[0]->step, 234);
  EXPECT_EQ(exploding[0]->evidence_value("layers_exploding"), 5.0);
  EXPECT_GT(exploding[0]->evidence_value("layers_median_rise"), 10.0);
  EXPECT_NE(exploding[0]->message.find("4 other layers at once"), std::string::npos) << exploding[0]->message;
  EXPECT_NE(exploding[0]->message.find("the whole network"), std::string::npos) << exploding[0]->message;
}

// Note [The run's own noise] (src/session/rules/loss.cpp): a long run draws batches further out
// than a window of 50 losses holds. The MLP of seed 4 had one at step 1,176, 2.11x its median
// (z 7.3), and the GRU of seed 3 one at step 217, 3.68x (z 6.1): each raised loss_spike, and each
// was less than twice as far above its median as an earlier batch of its run.
TEST(ZooHealthy, ALevelTheRunReachedIsNoLossSpike) {
  for (const auto& [model, seed, steps] :
       {std::tuple{ZooModel::mlp, 4u, 1200}, std::tuple{ZooModel::gru, 3u, 300}}) {
    const Trained run = train(ZooConfig{.model = model, .seed = seed}, Tier::watch, steps);
    for (const Finding& f : run.summary.findings) {
      EXPECT_NE(f.rule, "loss_spike")
          << tfdebug::demo::zoo_model_name(model) << " seed " << seed << ": " << f.message;
    }
  }
}

// Note [Spectral growth] and Note [Drift is a rate]: the CNN's BatchNorm'd conv2 grows like the
// square root of the steps under Adam, 10.3x its initial spectral norm by step 1,000 (seed 1),
// which the rule judged against its first measurement raised as a fault. Growth is now a rate:
// the healthy run is quiet, and a learning rate raised 1000x at step 450 is reported by both
// rules, weight_drift at its next measurement and spectral at step 600, against step 400.
TEST(ZooHealthy, WeightsThatGrowSlowlyAreNoFault) {
  const Trained healthy = train(ZooConfig{.model = ZooModel::cnn, .seed = 1}, Tier::diagnose, 1100);
  for (const Finding& f : healthy.summary.findings) {
    EXPECT_NE(f.rule, "spectral") << f.message;
    EXPECT_NE(f.rule, "weight_drift") << f.message;
  }
  const Trained jump =
      train(ZooConfig{.model = ZooModel::cnn, .fault = ZooFault::lr_jump, .fault_step = 450, .seed = 1},
            Tier::diagnose, 610);
  const Finding* drift = first_of(jump.summary.findings, "weight_drift");
  ASSERT_NE(drift, nullptr) << findings_text(jump.summary.findings);
  EXPECT_GE(drift->step, 450);
  EXPECT_LE(drift->step, 460);
  EXPECT_GT(drift->evidence_value("drift"), 3.0);
  const Finding* spectral = first_of(jump.summary.findings, "spectral");
  ASSERT_NE(spectral, nullptr) << findings_text(jump.summary.findings);
  EXPECT_EQ(spectral->step, 600);
  EXPECT_GT(spectral->evidence_value("growth"), 3.0);
  EXPECT_EQ(spectral->evidence_value("steps"), 200.0);
}

INSTANTIATE_TEST_SUITE_P(Zoo, Healthy,
                         ::testing::Combine(::testing::Values(ZooModel::mlp, ZooModel::cnn, ZooModel::encoder,
                                                              ZooModel::gru, ZooModel::sigmoid),
                                            ::testing::Values(Tier::watch, Tier::diagnose)),
                         [](const auto& param) {
                           return std::string(tfdebug::demo::zoo_model_name(std::get<0>(param.param))) + "_" +
                                  (std::get<1>(param.param) == Tier::watch ? "watch" : "diagnose");
                         });

// Bit for bit (a NaN equals a NaN of the same bits).
bool same_bits(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto x = a[i].detach().contiguous();
    auto y = b[i].detach().contiguous();
    if (x.sizes() != y.sizes() || x.scalar_type() != y.scalar_type() ||
        std::memcmp(x.data_ptr(), y.data_ptr(), std::size_t(x.nbytes())) != 0)
      return false;
  }
  return true;
}

// A replayed step leaves what one run of it would have: the random batch and dropout (the
// generator), BatchNorm's running statistics (buffers) and the gradients are restored before the
// replay. The trainer skips a step whose gradients are not finite, as GradScaler does, so the run
// goes on and 20 more steps must agree bit for bit with a run without tfdebug.
TEST(ZooReplay, LeavesTheRunAsOneRunOfTheStep) {
  at::set_num_threads(1);
  for (auto [model, fault] :
       {std::pair{ZooModel::cnn, ZooFault::input_nan}, std::pair{ZooModel::encoder, ZooFault::masked_row},
        std::pair{ZooModel::mlp, ZooFault::backward_inf}}) {
    SCOPED_TRACE(std::string(tfdebug::demo::zoo_model_name(model)));
    const ZooConfig config{.model = model, .fault = fault, .fault_step = 5, .skip_nonfinite_steps = true};
    ZooTrainer plain(config);
    std::vector<double> plain_losses;
    for (std::int64_t step = 0; step < 25; ++step) {
      plain.before_step(step);
      plain_losses.push_back(plain.train_step(step));
    }
    ZooTrainer debugged(config);
    tfdebug::Session session(tfdebug::RunConfig{});
    std::vector<double> losses;
    {
      auto debug = tfdebug::torch::attach(session, debugged.model());
      for (std::int64_t step = 0; step < 25; ++step) {
        debugged.before_step(step);
        losses.push_back(debug.step(step, [&] { return debugged.train_step(step); }).value());
      }
      EXPECT_EQ(debug.counters().replays, 1);
    }
    const auto summary = session.finish();
    const Finding* f = first_of(summary.findings, "nonfinite");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->step, 5);
    ASSERT_EQ(losses.size(), plain_losses.size());
    for (std::size_t i = 0; i < losses.size(); ++i) {
      if (std::isnan(plain_losses[i])) {
        EXPECT_TRUE(std::isnan(losses[i])) << "step " << i;
      } else {
        EXPECT_EQ(losses[i], plain_losses[i]) << "step " << i;
      }
    }
    EXPECT_TRUE(same_bits(plain.model().parameters(), debugged.model().parameters()));
    EXPECT_TRUE(same_bits(plain.model().buffers(), debugged.model().buffers()));  // BatchNorm's statistics
  }
}

// A loop that carries gradients into a step (accumulating over two steps per optimizer step):
// the replay starts from the gradients the first pass started from, which the hooks copied
// before the step's backward added to them; a loop that zeroes them first costs no copy.
TEST(ZooReplay, PutsBackTheGradientsTheLoopCarries) {
  at::set_num_threads(1);
  ::torch::manual_seed(3);
  ::torch::nn::Linear model(8, 4);
  ::torch::optim::SGD optimizer(model->parameters(), ::torch::optim::SGDOptions(0.1));
  tfdebug::Session session(tfdebug::RunConfig{});
  std::vector<at::Tensor> starts;  // the weight's gradient each time the step began
  {
    auto debug = tfdebug::torch::attach(session, *model);
    for (std::int64_t step = 0; step < 8; ++step) {
      auto x = at::randn({16, 8});
      if (step == 5) x.data_ptr<float>()[3] = std::numeric_limits<float>::quiet_NaN();
      debug.step(step, [&] {
        const at::Tensor& g = model->weight.grad();
        if (step == 5) starts.push_back(g.defined() ? g.clone() : at::Tensor());
        auto loss = model(x).pow(2).mean();
        loss.backward();
        if (step % 2 == 1) {  // every second step: step (unless a gradient is bad), then zero
          bool finite = true;
          for (const auto& p : model->parameters()) finite = finite && p.grad().isfinite().all().item<bool>();
          if (finite) optimizer.step();
          optimizer.zero_grad();
        }
        return loss;
      });
    }
    EXPECT_EQ(debug.counters().replays, 1);
  }
  ASSERT_EQ(starts.size(), 2u);  // the first pass and the replay
  ASSERT_TRUE(starts[0].defined() && starts[1].defined());
  EXPECT_GT(starts[0].abs().sum().item<double>(), 0.0);  // step 4's gradient, carried into step 5
  EXPECT_TRUE(at::equal(starts[0], starts[1]));
  const auto summary = session.finish();
  const Finding* f = first_of(summary.findings, "nonfinite");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->step, 5);
  EXPECT_EQ(f->op, "aten::addmm");
}

}  // namespace
