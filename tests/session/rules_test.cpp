// Each rule with synthetic observations: which rule fires, where and when, and silence on a
// healthy run.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "session_test_util.hpp"

namespace tfdebug {
namespace {

using testing::normal;
using testing::output;
using testing::tensor;
using testing::with_rule;

// Gradients of three layers with steady norms (about 1, 2 and 0.5) for 60 steps; at `event_step`
// layer "l1" is multiplied by `factor`.
std::vector<Finding> run_gradients(double factor, std::int64_t event_step,
                                   RunConfig config = testing::quiet_config()) {
  Session session(config);
  for (std::int64_t step = 0; step < 60; ++step) {
    session.begin_step(step);
    const double scales[] = {1.0, 2.0, 0.5};
    const char* names[] = {"l0", "l1", "l2"};
    for (int layer = 0; layer < 3; ++layer) {
      std::vector<float> g = normal(100, 0.0f, float(scales[layer] / 10.0), std::uint32_t(step * 3 + layer));
      if (layer == 1 && step == event_step)
        for (float& x : g) x = float(x * factor);
      const std::string param = std::string(names[layer]) + ".weight";
      session.observe(tensor(step, Role::gradient, names[layer], param, g, {10, 10}));
    }
    session.end_step(step, std::nullopt);
  }
  return session.findings();
}

TEST(Rules, ExplodingGradientsRelativeToHistory) {
  const auto findings = run_gradients(1000.0, 55);
  const auto explode = with_rule(findings, "exploding_gradients");
  ASSERT_EQ(explode.size(), 1u) << testing::describe(findings);
  EXPECT_EQ(explode[0].module, "l1");
  EXPECT_EQ(explode[0].step, 55);
  EXPECT_EQ(explode[0].phase, Phase::backward);
  EXPECT_GT(explode[0].evidence_value("ratio_to_history"), 500);
  EXPECT_GT(explode[0].evidence_value("ratio_to_layers"), 500);  // evidence, not the trigger
  EXPECT_EQ(explode[0].evidence_value("layers_exploding"), 1.0);
  EXPECT_TRUE(with_rule(findings, "vanishing_gradients").empty());
}

// Before min_history steps there is no history to explode against: the first steps of training
// move norms by large factors (an RNN's grow tenfold in its first ten steps).
TEST(Rules, NoExplodingGradientsFromAShortHistory) {
  const auto findings = run_gradients(1000.0, 12);
  EXPECT_TRUE(with_rule(findings, "exploding_gradients").empty()) << testing::describe(findings);
}

// A deep stack's top layers carry orders of magnitude more gradient than its median layer in a
// healthy run: that is no explosion (off by default), unless the run asks for the comparison.
TEST(Rules, HealthyTopLayersOfADeepStackDoNotExplode) {
  const auto run = [](RunConfig config) {
    Session session(config);
    for (std::int64_t step = 0; step < 30; ++step) {
      session.begin_step(step);
      for (int layer = 0; layer < 8; ++layer) {
        // Norms 1e-2 ... 1e2 from the bottom layer to the top, steady over steps.
        const float scale = float(std::pow(10.0, -2.0 + 4.0 * layer / 7.0) / 10.0);
        const std::string name = "layers." + std::to_string(layer);
        session.observe(tensor(step, Role::gradient, name, name + ".weight",
                               normal(100, 0.0f, scale, std::uint32_t(step * 8 + layer)), {10, 10}));
      }
      session.end_step(step, std::nullopt);
    }
    return session.findings();
  };
  const auto quiet = run(testing::quiet_config());
  EXPECT_TRUE(with_rule(quiet, "exploding_gradients").empty()) << testing::describe(quiet);
  RunConfig across = testing::quiet_config();
  across.rules.get<GradientRule>().explode_vs_layers = 20;
  const auto flagged = with_rule(run(across), "exploding_gradients");
  ASSERT_EQ(flagged.size(), 2u);  // 26.8x and 100x the median layer (1)
  EXPECT_EQ(flagged[0].module, "layers.6");
  EXPECT_EQ(flagged[1].module, "layers.7");
  EXPECT_EQ(flagged[0].step, 0);
}

// One layer's gradient norms, one a step, through a Session with default settings; each step's
// loss from `losses` if given.
std::vector<Finding> run_norms(const std::vector<double>& norms, const std::vector<double>& losses = {}) {
  Session session(testing::quiet_config());
  for (std::size_t step = 0; step < norms.size(); ++step) {
    session.begin_step(std::int64_t(step));
    session.observe(tensor(std::int64_t(step), Role::gradient, "l", "l.weight", {float(norms[step])}, {1}));
    session.end_step(std::int64_t(step), losses.empty() ? std::nullopt : std::optional<double>(losses[step]));
  }
  return session.findings();
}

// Note [A spike or an explosion]: a converged layer's norms fall tenfold from its first steps';
// a hard mini-batch then lifts one or two steps 20x above the recent median but below the first
// steps' peak: noise. Staying up for explode_sustain (5) steps is an explosion, reported at the
// fifth; a norm beyond the run's peak is one at once.
TEST(Rules, AOneStepSpikeBelowTheRunsPeakIsNoExplosion) {
  std::vector<double> norms(30, 1.0);  // the first steps: 1.0, peak 1.5 at step 5
  norms[5] = 1.5;
  norms.resize(100, 0.0625);  // converged
  norms[70] = 1.25;           // 20x the median, below the peak; the next step 16x
  norms[71] = 1.0;
  const auto spike = run_norms(norms);
  EXPECT_TRUE(with_rule(spike, "exploding_gradients").empty()) << testing::describe(spike);

  for (int step = 80; step < 85; ++step) norms[std::size_t(step)] = 1.25;  // five steps running
  const auto sustained = with_rule(run_norms(norms), "exploding_gradients");
  ASSERT_EQ(sustained.size(), 1u);
  EXPECT_EQ(sustained[0].step, 84);
  EXPECT_EQ(sustained[0].evidence_value("steps_above"), 5.0);
  EXPECT_EQ(sustained[0].evidence_value("peak_before"), 1.5);
  EXPECT_EQ(sustained[0].evidence_value("ratio_to_history"), 20.0);
  EXPECT_NE(sustained[0].message.find("for 5 steps running"), std::string::npos) << sustained[0].message;

  for (int step = 80; step < 85; ++step) norms[std::size_t(step)] = 0.0625;
  norms[90] = 2.0;  // beyond the peak: at once
  const auto beyond = with_rule(run_norms(norms), "exploding_gradients");
  ASSERT_EQ(beyond.size(), 1u);
  EXPECT_EQ(beyond[0].step, 90);
  EXPECT_EQ(beyond[0].evidence_value("steps_above"), 1.0);
  EXPECT_NE(beyond[0].message.find("and above its largest before, 1.5"), std::string::npos)
      << beyond[0].message;
}

// Note [A gradient that follows its loss]: a converged layer (0.0625, after a first peak of 1.5)
// whose gradient jumps to 2.0 (32x its median, past its peak) on a batch whose loss is 5x its
// median rose with its loss (32 < 10 x 5): no explosion. With the loss 2x its median it rose
// further than its loss (32 > 20): reported at once. Past 10x its largest before (16 > 15), or
// held for explode_sustain (5) steps, it is reported whatever the loss.
TEST(Rules, AGradientThatRoseWithItsLossIsNoExplosion) {
  std::vector<double> norms(30, 1.0);
  norms[5] = 1.5;
  norms.resize(100, 0.0625);
  std::vector<double> losses(30, 1.0);
  losses.resize(100, 0.01);
  norms[90] = 2.0;
  losses[90] = 0.05;
  const auto hard_batch = run_norms(norms, losses);
  EXPECT_TRUE(with_rule(hard_batch, "exploding_gradients").empty()) << testing::describe(hard_batch);

  losses[90] = 0.02;
  const auto reported = with_rule(run_norms(norms, losses), "exploding_gradients");
  ASSERT_EQ(reported.size(), 1u);
  EXPECT_EQ(reported[0].step, 90);
  EXPECT_EQ(reported[0].evidence_value("ratio_to_history"), 32.0);
  EXPECT_EQ(reported[0].evidence_value("loss_rise"), 2.0);
  EXPECT_NE(reported[0].message.find("and above its largest before, 1.5, the step's loss 2x its median"),
            std::string::npos)
      << reported[0].message;

  norms[90] = 16.0;  // 256x its median, the loss 50x
  losses[90] = 0.5;
  const auto far = with_rule(run_norms(norms, losses), "exploding_gradients");
  ASSERT_EQ(far.size(), 1u);
  EXPECT_EQ(far[0].step, 90);
  EXPECT_EQ(far[0].evidence_value("loss_rise"), 50.0);

  for (std::size_t step = 90; step < 95; ++step) {
    norms[step] = 2.0;
    losses[step] = 0.05;
  }
  const auto held = with_rule(run_norms(norms, losses), "exploding_gradients");
  ASSERT_EQ(held.size(), 1u) << testing::describe(run_norms(norms, losses));
  EXPECT_EQ(held[0].step, 94);
  EXPECT_EQ(held[0].evidence_value("steps_above"), 5.0);
  EXPECT_NE(held[0].message.find("for 5 steps running"), std::string::npos) << held[0].message;
}

// Note [A loss still falling]: a layer (the only one: no median layer) whose gradient rises from
// 0.1 to 1.5 at step 52 (15x its history, past its largest) while the loss falls slowly is
// learning, though step 52's loss (2.06) is not the run's lowest (2.045): the median of its last
// 10 losses is. The same rise on a flat loss is an explosion.
TEST(Rules, AGradientRisingWhileTheLossFallsIsLearning) {
  std::vector<double> norms(60, 0.1);
  norms[5] = 0.12;
  norms[52] = 1.5;
  std::vector<double> falling(60);
  for (std::size_t step = 0; step < falling.size(); ++step) falling[step] = 2.3 - 0.005 * double(step);
  falling[52] = 2.06;
  const auto learning = run_norms(norms, falling);
  EXPECT_TRUE(with_rule(learning, "exploding_gradients").empty()) << testing::describe(learning);

  const std::vector<double> flat(60, 2.0);
  const auto exploded = with_rule(run_norms(norms, flat), "exploding_gradients");
  ASSERT_EQ(exploded.size(), 1u);
  EXPECT_EQ(exploded[0].step, 52);
}

// Note [A spike or an explosion]: the largest of a layer's first steps is a record of few steps,
// which noise beats often. A GRU's hard batch at step 25 (11x the median, 1.2x the first steps'
// largest) is no explosion; the same at step 60 is, and so is a rise held for explode_sustain
// steps from step 25.
TEST(Rules, PassingTheFirstStepsLargestIsNoExplosion) {
  std::vector<double> norms(70, 0.2);
  for (std::size_t step = 0; step < norms.size(); step += 7) norms[step] = 0.25;
  norms[3] = 2.0;  // the first steps' largest
  std::vector<double> early = norms;
  early[25] = 2.4;
  EXPECT_TRUE(with_rule(run_norms(early), "exploding_gradients").empty())
      << testing::describe(run_norms(early));

  std::vector<double> late = norms;
  late[60] = 2.4;
  const auto reported = with_rule(run_norms(late), "exploding_gradients");
  ASSERT_EQ(reported.size(), 1u) << testing::describe(run_norms(late));
  EXPECT_EQ(reported[0].step, 60);
  EXPECT_EQ(reported[0].evidence_value("peak_before"), 2.0);

  std::vector<double> held = norms;
  for (std::size_t step = 25; step < 30; ++step) held[step] = 2.4;
  const auto sustained = with_rule(run_norms(held), "exploding_gradients");
  ASSERT_EQ(sustained.size(), 1u) << testing::describe(run_norms(held));
  EXPECT_EQ(sustained[0].step, 29);
  EXPECT_EQ(sustained[0].evidence_value("steps_above"), 5.0);
}

// Note [Catching up]: three layers at norm 1 and a query projection at 0.05 that wakes up at
// step 50 (1.2 from then on: 24x its history, above its peak, 1.2x the median layer) is learning;
// the same rise to 5 (5x the median layer) is out of line, unless the loss is at its lowest
// each step (the model is learning: up to explode_ratio x the median layer), and a step where
// every layer rises 20x (the median layer with them) is an explosion of every layer.
TEST(Rules, ALayerCatchingUpWithTheOthersIsNoExplosion) {
  const auto run = [](double woken, bool global, bool falling_loss = false) {
    Session session(testing::quiet_config());
    for (std::int64_t step = 0; step < 60; ++step) {
      session.begin_step(step);
      for (const char* name : {"l0", "l1", "l2", "q"}) {
        const bool q = name[0] == 'q';
        double norm = q ? (step < 50 ? 0.05 : woken) : 1.0;
        if (global && step == 55) norm *= 20;
        session.observe(
            tensor(step, Role::gradient, name, std::string(name) + ".weight", {float(norm)}, {1}));
      }
      // Flat with noise, or falling to a new lowest every step from step 45.
      const double noise = 0.01 * double((step * 7) % 5);
      session.end_step(step, falling_loss && step >= 45 ? 2.0 - 0.05 * double(step - 44) : 2.0 + noise);
    }
    return with_rule(session.findings(), "exploding_gradients");
  };
  EXPECT_TRUE(run(1.2, false).empty()) << testing::describe(run(1.2, false));

  const auto out_of_line = run(5.0, false);
  ASSERT_EQ(out_of_line.size(), 1u) << testing::describe(out_of_line);
  EXPECT_EQ(out_of_line[0].module, "q");
  EXPECT_EQ(out_of_line[0].step, 50);
  EXPECT_EQ(out_of_line[0].evidence_value("ratio_to_layers"), 5.0);
  EXPECT_EQ(out_of_line[0].evidence_value("layers_median_rise"), 1.0);
  EXPECT_TRUE(run(5.0, false, true).empty()) << testing::describe(run(5.0, false, true));
  EXPECT_EQ(run(12.0, false, true).size(), 1u);  // beyond explode_ratio x the median layer

  // Note [One spike, one finding]: one finding for the four layers, at the one furthest beyond
  // its history (q: 24 against a median of 0.05).
  const auto every_layer = run(1.2, true);
  ASSERT_EQ(every_layer.size(), 1u) << testing::describe(every_layer);
  EXPECT_EQ(every_layer[0].step, 55);
  EXPECT_EQ(every_layer[0].module, "q");
  EXPECT_NEAR(every_layer[0].evidence_value("ratio_to_history"), 480.0, 1e-3);
  EXPECT_NEAR(every_layer[0].evidence_value("layers_median_rise"), 20.0, 1e-5);
  EXPECT_EQ(every_layer[0].evidence_value("layers_exploding"), 4.0);
  EXPECT_NE(every_layer[0].message.find("; 3 other layers at once: l0, l1, l2 (the median layer 20x its own "
                                        "history: the whole network) (backward, step 55)"),
            std::string::npos)
      << every_layer[0].message;
}

// The history median is over the last history_length norms only: the ring drops the oldest.
TEST(Rules, GradientHistoryMedianIsOverTheLastNormsOnly) {
  RunConfig config = testing::quiet_config();
  config.history_length = 4;
  config.rules.get<GradientRule>().min_history = 4;
  config.rules.get<GradientRule>().peak_after = 4;
  Session session(config);
  const double norms[] = {5, 1, 9, 3, 7, 2, 1000};
  for (std::int64_t step = 0; step < 7; ++step) {
    session.begin_step(step);
    session.observe(tensor(step, Role::gradient, "l", "l.weight", {float(norms[step])}, {1}));
    session.end_step(step, std::nullopt);
  }
  const auto explode = with_rule(session.findings(), "exploding_gradients");
  ASSERT_EQ(explode.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(explode[0].step, 6);
  // {9, 3, 7, 2} (not 5 and 1, which left the ring): (3 + 7) / 2.
  EXPECT_EQ(explode[0].evidence_value("history_median"), 5.0);
  EXPECT_EQ(explode[0].evidence_value("ratio_to_history"), 200.0);
}

TEST(Rules, VanishingGradients) {
  const auto findings = run_gradients(1e-4, 35);
  const auto vanish = with_rule(findings, "vanishing_gradients");
  ASSERT_EQ(vanish.size(), 1u) << testing::describe(findings);
  EXPECT_EQ(vanish[0].module, "l1");
  EXPECT_EQ(vanish[0].step, 35);
  EXPECT_LT(vanish[0].evidence_value("ratio_to_history"), 1e-3);
  EXPECT_TRUE(with_rule(findings, "exploding_gradients").empty());
}

// Note [A loss with nothing left to learn]: every layer's gradient 1000x below its history in a
// step whose loss fell 2000x (an overconfident batch) vanished no more than the loss did; the
// same fall with the loss where it was is reported, for each layer.
TEST(Rules, GradientsFallingWithTheLossDoNotVanish) {
  const auto run = [](double loss_at_event) {
    Session session(testing::quiet_config());
    for (std::int64_t step = 0; step < 40; ++step) {
      session.begin_step(step);
      const char* names[] = {"l0", "l1", "l2"};
      for (int layer = 0; layer < 3; ++layer) {
        std::vector<float> g = normal(100, 0.0f, 0.1f * float(layer + 1), std::uint32_t(step * 3 + layer));
        if (step == 35)
          for (float& x : g) x *= 1e-3f;
        const std::string param = std::string(names[layer]) + ".weight";
        session.observe(tensor(step, Role::gradient, names[layer], param, g, {10, 10}));
      }
      session.end_step(step, step == 35 ? loss_at_event : 0.01 + 0.001 * double(step % 3));
    }
    return session.findings();
  };
  const auto overconfident = run(5e-6);
  EXPECT_TRUE(with_rule(overconfident, "vanishing_gradients").empty()) << testing::describe(overconfident);
  const auto vanished = run(0.011);
  const auto vanish = with_rule(vanished, "vanishing_gradients");
  ASSERT_EQ(vanish.size(), 3u) << testing::describe(vanished);
  for (const Finding& f : vanish) {
    EXPECT_EQ(f.step, 35);
    EXPECT_NEAR(f.evidence_value("ratio_to_history"), 1e-3, 5e-4);
  }
}

// Note [A loss that is not a number]: a NaN loss with every gradient 0 (cross-entropy over a
// batch of ignored targets) judges no layer, and the steps after it are judged against a history
// without it. The same zeros under a finite loss are a vanishing layer.
TEST(Rules, GradientsOfALossThatIsNotANumberAreNotJudged) {
  for (const double bad_loss : {std::numeric_limits<double>::quiet_NaN(), 0.5}) {
    Session session(testing::quiet_config());
    for (std::int64_t step = 0; step < 30; ++step) {
      session.begin_step(step);
      const float scale = step == 20 ? 0.0f : 1.0f;
      for (const char* layer : {"a", "b", "c"}) {
        session.observe(tensor(step, Role::gradient, layer, std::string(layer) + ".weight",
                               std::vector<float>(16, 0.01f * scale), {4, 4}));
      }
      session.end_step(step, step == 20 ? bad_loss : 0.5);
    }
    const auto vanishing = with_rule(session.findings(), "vanishing_gradients");
    if (std::isnan(bad_loss)) {
      EXPECT_TRUE(vanishing.empty()) << testing::describe(session.findings());
    } else {
      EXPECT_EQ(vanishing.size(), 3u) << testing::describe(session.findings());
    }
  }
}

// Note [A layer with a NaN gradient]: a layer whose weight's gradient is NaN and whose bias's is
// exactly 0 (a WGAN-GP critic's last layer) has no norm that step: nonfinite reports it, and
// vanishing_gradients says nothing, neither of it nor (the median layer) of the others. The same
// weight's gradient at 0 is a vanishing layer.
TEST(Rules, ALayerWithANaNGradientIsNotJudged) {
  for (const bool nan : {true, false}) {
    Session session(testing::quiet_config());
    for (std::int64_t step = 0; step < 30; ++step) {
      session.begin_step(step);
      for (const char* layer : {"a", "b", "c"}) {
        std::vector<float> weight = normal(16, 0.0f, 0.1f, std::uint32_t(step * 3 + layer[0]));
        if (step == 20 && layer == std::string("c"))
          std::fill(weight.begin(), weight.end(), nan ? std::numeric_limits<float>::quiet_NaN() : 0.0f);
        session.observe(tensor(step, Role::gradient, layer, std::string(layer) + ".weight", weight, {4, 4}));
        session.observe(tensor(step, Role::gradient, layer, std::string(layer) + ".bias",
                               std::vector<float>(4, 0.0f), {4}));
      }
      session.end_step(step, 0.5);
    }
    const auto vanishing = with_rule(session.findings(), "vanishing_gradients");
    if (nan) {
      EXPECT_TRUE(vanishing.empty()) << testing::describe(session.findings());
      EXPECT_EQ(with_rule(session.findings(), "nonfinite").size(), 1u)
          << testing::describe(session.findings());
    } else {
      ASSERT_EQ(vanishing.size(), 1u) << testing::describe(session.findings());
      EXPECT_EQ(vanishing[0].module, "c");
      EXPECT_EQ(vanishing[0].step, 20);
    }
  }
}

// Note [A step without a gradient]: steps whose every gradient is exactly 0 (a loss flat on its
// batch: every advantage 0) say nothing of the layers, with a loss of 0 and with a median loss at
// or below 0, where the loss's fall cannot excuse them; history_length (50) of them running are
// one warning, for the model.
TEST(Rules, AStepWithoutAGradientIsTheLosss) {
  for (const std::int64_t flat_from : {std::int64_t(20), std::int64_t(200)}) {
    Session session(testing::quiet_config());
    for (std::int64_t step = 0; step < 120; ++step) {
      session.begin_step(step);
      const bool flat = step == 12 || step == 17 || step >= flat_from;
      for (const char* layer : {"a", "b", "c"}) {
        const std::vector<float> weight =
            flat ? std::vector<float>(16, 0.0f) : normal(16, 0.0f, 0.1f, std::uint32_t(step * 3 + layer[0]));
        session.observe(tensor(step, Role::gradient, layer, std::string(layer) + ".weight", weight, {4, 4}));
      }
      session.end_step(step, flat ? 0.0 : (step % 2 == 0 ? -0.3 : 0.2));
    }
    const auto vanishing = with_rule(session.findings(), "vanishing_gradients");
    if (flat_from > 120) {
      EXPECT_TRUE(vanishing.empty()) << testing::describe(session.findings());
    } else {
      ASSERT_EQ(vanishing.size(), 1u) << testing::describe(session.findings());
      EXPECT_EQ(vanishing[0].module, "");
      EXPECT_EQ(vanishing[0].step, flat_from + 49);
      EXPECT_NE(vanishing[0].message.find("every gradient has been exactly 0 for 50 steps running"),
                std::string::npos)
          << vanishing[0].message;
      EXPECT_EQ(vanishing[0].evidence_value("layers"), 3.0);
    }
  }
}

TEST(Rules, SteadyGradientsAreSilent) {
  const auto findings = run_gradients(1.0, 12);
  EXPECT_TRUE(findings.empty()) << testing::describe(findings);
}

TEST(Rules, DeadUnitsAfterTheWindow) {
  RunConfig config = testing::quiet_config();
  config.rules.get<DeadUnitsRule>().window = 5;
  Session session(config);
  // [batch 4, units 8]; units 2 and 5 are always exactly 0 (dead ReLUs), the rest sometimes > 0.
  for (std::int64_t step = 0; step < 8; ++step) {
    std::vector<float> h = normal(32, 0.0f, 1.0f, std::uint32_t(step));
    for (std::size_t i = 0; i < h.size(); ++i) {
      const std::size_t unit = i % 8;
      h[i] = unit == 2 || unit == 5 ? 0.0f : std::abs(h[i]) + 0.01f;
    }
    session.begin_step(step);
    session.observe(output(step, "mlp.act", "relu", h, {4, 8}));
    session.end_step(step, std::nullopt);
  }
  const auto dead = with_rule(session.findings(), "dead_units");
  ASSERT_EQ(dead.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(dead[0].step, 4);   // the first step with a full window (steps 0..4)
  EXPECT_EQ(dead[0].count, 4);  // steps 4, 5, 6, 7
  EXPECT_EQ(dead[0].module, "mlp.act");
  EXPECT_EQ(dead[0].evidence_value("dead"), 2);
  EXPECT_EQ(dead[0].evidence_value("units"), 8);
  EXPECT_EQ(dead[0].evidence_value("first_dead_unit"), 2);
}

// Note [What the window saw]: an output seen every tenth step (watch's samples), [batch 8, units
// 4]: unit 1 always exactly 0, unit 2 active in one row of every 15th sample (every 150 steps).
// The window's 100 steps hold 80 values per unit, fewer than min_values (160 here), so it reaches
// back to the last 20 samples (200 steps), which always hold unit 2's firing: only unit 1 is
// dead, and the finding says what was seen. Seen every step, the same output is judged over its
// window as configured.
TEST(Rules, DeadUnitsOfASampledWindowReachBackForTheirValues) {
  for (const std::int64_t every : {std::int64_t(10), std::int64_t(1)}) {
    RunConfig config = testing::quiet_config();
    config.rules.get<DeadUnitsRule>().min_values = 160;
    Session session(config);
    for (std::int64_t step = 0; step < 600; step += every) {
      std::vector<float> h(32, 1.0f);
      for (std::size_t row = 0; row < 8; ++row) {
        h[row * 4 + 1] = 0.0f;
        h[row * 4 + 2] = row == 0 && step % 150 == 0 ? 1.0f : 0.0f;
      }
      session.begin_step(step);
      session.observe(output(step, "mlp.act", "relu", h, {8, 4}));
      session.end_step(step, std::nullopt);
    }
    const auto dead = with_rule(session.findings(), "dead_units");
    ASSERT_EQ(dead.size(), 1u) << testing::describe(session.findings());
    if (every == 10) {
      EXPECT_EQ(dead[0].step, 190);  // the first sample with 160 values per unit
      EXPECT_EQ(dead[0].evidence_value("dead"), 1);
      EXPECT_EQ(dead[0].evidence_value("first_dead_unit"), 1);
      EXPECT_EQ(dead[0].evidence_value("values_seen"), 160);
      EXPECT_EQ(dead[0].evidence_value("batches_seen"), 20);
      EXPECT_EQ(dead[0].evidence_value("steps_seen"), 191);
      EXPECT_NE(dead[0].message.find("1 of 4 units (25%) of relu in mlp.act were exactly 0 for every "
                                     "input seen over the last 191 steps (160 values each, in 20 batches)"),
                std::string::npos)
          << dead[0].message;
    } else {
      EXPECT_EQ(dead[0].step, 99);  // the first full window: unit 2 last fired at step 0
      EXPECT_EQ(dead[0].evidence_value("values_seen"), 800);
      EXPECT_EQ(dead[0].evidence_value("batches_seen"), 100);
    }
  }
}

TEST(Rules, DeadUnitsOfAStridedThreeDimensionalOutput) {
  RunConfig config = testing::quiet_config();
  config.rules.get<DeadUnitsRule>().window = 2;
  Session session(config);
  // A [2, 3, 4] output seen through a transposed view [2, 4, 3]: units = last dim = 3 of the
  // view, i.e. index 1 of the stored layout's middle dim; unit 1 of the view is all zero.
  std::vector<float> stored(24, 1.0f);
  for (int b = 0; b < 2; ++b)
    for (int u = 0; u < 4; ++u) stored[std::size_t(b * 12 + 1 * 4 + u)] = 0.0f;  // middle index 1
  const std::int64_t shape[] = {2, 3, 4};
  const TensorView base(stored.data(), DType::f32, std::span<const std::int64_t>(shape));
  for (std::int64_t step = 0; step < 2; ++step) {
    session.begin_step(step);
    session.observe(
        Observation{step, Phase::forward, Role::output, "conv", "relu", base.transposed(1, 2), std::nullopt});
    session.end_step(step, std::nullopt);
  }
  const auto dead = with_rule(session.findings(), "dead_units");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].evidence_value("units"), 3);
  EXPECT_EQ(dead[0].evidence_value("dead"), 1);
  EXPECT_EQ(dead[0].evidence_value("first_dead_unit"), 1);
}

TEST(Rules, SaturatedTanh) {
  Session session(testing::quiet_config());
  std::vector<float> y(100, 0.1f);
  for (int i = 0; i < 70; ++i) y[std::size_t(i)] = i % 2 == 0 ? 0.9999f : -0.995f;
  session.begin_step(3);
  session.observe(output(3, "rnn", "aten::tanh", y));
  session.observe(output(3, "gate", "aten::sigmoid", std::vector<float>(10, 0.5f)));
  session.end_step(3, std::nullopt);
  const auto saturated = with_rule(session.findings(), "saturation");
  ASSERT_EQ(saturated.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(saturated[0].op, "aten::tanh");
  EXPECT_DOUBLE_EQ(saturated[0].evidence_value("saturated_fraction"), 0.7);
}

TEST(Rules, SaturatedSigmoidBothTails) {
  Session session(testing::quiet_config());
  std::vector<float> y(10, 0.5f);
  for (int i = 0; i < 6; ++i) y[std::size_t(i)] = i < 3 ? 0.001f : 0.9995f;
  session.begin_step(0);
  session.observe(output(0, "gate", "sigmoid", y));
  session.end_step(0, std::nullopt);
  const auto saturated = with_rule(session.findings(), "saturation");
  ASSERT_EQ(saturated.size(), 1u);
  EXPECT_DOUBLE_EQ(saturated[0].evidence_value("saturated_fraction"), 0.6);
}

// GELU's flat tail is in its input: outputs near 0 come from x << 0 (saturated) and from x ~ 0
// (slope 0.5) alike, so the rule reads the pre-activation the producer passes along.
TEST(Rules, SaturatedGeluFromItsInput) {
  Session session(testing::quiet_config());
  std::vector<float> x(20, 0.0f);  // 12 of 20 inputs below -3; -3 itself is not below
  for (int i = 0; i < 12; ++i) x[std::size_t(i)] = -3.5f - float(i);
  x[12] = -3.0f;
  const std::vector<std::int64_t> shape = {20};
  const TensorView input(x.data(), DType::f32, std::span<const std::int64_t>(shape));
  std::vector<float> y(20);
  for (std::size_t i = 0; i < y.size(); ++i)
    y[i] = float(0.5 * x[i] * (1.0 + std::erf(x[i] / std::sqrt(2.0))));
  session.begin_step(4);
  Observation o = output(4, "blocks.0.mlp", "aten::gelu", y);
  o.input = &input;
  session.observe(o);
  // Near-zero outputs from inputs near 0 are not saturated: no finding for this one.
  const std::vector<float> small(20, -0.01f);
  const TensorView small_input(small.data(), DType::f32, std::span<const std::int64_t>(shape));
  Observation near_zero = output(4, "blocks.1.mlp", "aten::gelu", std::vector<float>(20, -0.00496f));
  near_zero.input = &small_input;
  session.observe(near_zero);
  // Without its input a GELU output is not judged.
  session.observe(output(4, "blocks.2.mlp", "aten::gelu", std::vector<float>(20, -0.001f)));
  session.end_step(4, std::nullopt);
  const auto saturated = with_rule(session.findings(), "saturation");
  ASSERT_EQ(saturated.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(saturated[0].module, "blocks.0.mlp");
  EXPECT_DOUBLE_EQ(saturated[0].evidence_value("saturated_fraction"), 0.6);
  EXPECT_DOUBLE_EQ(saturated[0].evidence_value("gelu_cutoff"), 3.0);
  EXPECT_NE(saturated[0].message.find("inputs are below -3"), std::string::npos) << saturated[0].message;
}

TEST(Rules, LossSpikeTenTimesTheLargestLoss) {
  Session session(testing::quiet_config());
  for (std::int64_t step = 0; step < 8; ++step) {
    session.begin_step(step);
    session.end_step(step, step == 6 ? 50.0 : 4.0 - 0.1 * double(step));
  }
  const auto spikes = with_rule(session.findings(), "loss_spike");
  ASSERT_EQ(spikes.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(spikes[0].step, 6);
  EXPECT_DOUBLE_EQ(spikes[0].evidence_value("ratio_to_max"), 12.5);
}

TEST(Rules, LossSpikeByRobustZScore) {
  Session session(testing::quiet_config());
  // Noisy losses around 2.0 (below 10x the max), then 3.2: z = (3.2 - 2.0) / (1.4826 * MAD), and
  // 1.6x the median. The same jump at step 25, before a whole window of losses, is not judged
  // (and is out of the window by step 80).
  for (std::int64_t step = 0; step < 85; ++step) {
    session.begin_step(step);
    const double loss = step == 25 || step == 80 ? 3.2 : 2.0 + 0.01 * double((step * 7) % 5 - 2);
    session.end_step(step, loss);
  }
  const auto spikes = with_rule(session.findings(), "loss_spike");
  ASSERT_EQ(spikes.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(spikes[0].step, 80);
  EXPECT_NEAR(spikes[0].evidence_value("window_max"), 2.02, 1e-12);
  EXPECT_GT(spikes[0].evidence_value("z"), 6.0);
  EXPECT_TRUE(std::isnan(spikes[0].evidence_value("ratio_to_max")) ||
              spikes[0].evidence_value("ratio_to_max") < 10);
}

// A loss on a plateau has a tiny MAD: a noisy batch scores a large z without jumping.
TEST(Rules, MiniBatchNoiseOnAPlateauIsNoSpike) {
  Session session(testing::quiet_config());
  for (std::int64_t step = 0; step < 60; ++step) {
    session.begin_step(step);
    const double loss = step % 17 == 16 ? 0.30 : 0.25 + 0.001 * double((step * 7) % 5 - 2);
    session.end_step(step, loss);  // 0.30 is z ~ 30 over the MAD, but 1.2x the median
  }
  EXPECT_TRUE(with_rule(session.findings(), "loss_spike").empty()) << testing::describe(session.findings());
}

// Note [The window's own noise]: a classifier near its fit, most batches ~0.03 and one in ten
// holding a confidently wrong example (0.15-0.25, z > 6, 5-8x the median): none is a spike; a
// batch at 0.6, twice as far above the median as any in the window and more, is.
TEST(Rules, ALevelTheWindowReachedIsNoSpike) {
  const auto run = [](double last) {
    Session session(testing::quiet_config());
    for (std::int64_t step = 0; step < 120; ++step) {
      session.begin_step(step);
      const double noise = 0.002 * double((step * 7) % 5 - 2);
      const double hard = step % 10 == 7 ? 0.15 + 0.01 * double(step % 11) : 0.0;
      session.end_step(step, step < 5 ? 0.7 : step == 115 ? last : 0.03 + noise + hard);
    }
    return with_rule(session.findings(), "loss_spike");
  };
  EXPECT_TRUE(run(0.26).empty()) << testing::describe(run(0.26));
  const auto spikes = run(0.6);
  ASSERT_EQ(spikes.size(), 1u);
  EXPECT_EQ(spikes[0].step, 115);
  EXPECT_GT(spikes[0].evidence_value("window_max"), 0.15);
}

// Note [The run's own noise]: a batch 2x its median, far beyond its window, after a run whose
// batches went 1.6x their median before that window: noise of the run, no spike (the same batch in a
// run that never jumped is one); a batch 3.5x the median is twice as far out as any before it.
TEST(Rules, ALevelTheRunReachedIsNoSpike) {
  const auto run = [](bool hard_batches_early, double late) {
    Session session(testing::quiet_config());
    for (std::int64_t step = 0; step < 270; ++step) {
      session.begin_step(step);
      const double noise = 0.01 * double((step * 7) % 5 - 2);
      const double hard = hard_batches_early && step < 150 && step % 10 == 7 ? 0.6 : 0.0;
      session.end_step(step, step == 220 ? 2.0 : step == 260 ? late : 1.0 + noise + hard);
    }
    return with_rule(session.findings(), "loss_spike");
  };
  EXPECT_TRUE(run(true, 1.0).empty()) << testing::describe(run(true, 1.0));
  const auto never_jumped = run(false, 1.0);
  ASSERT_EQ(never_jumped.size(), 1u) << testing::describe(never_jumped);
  EXPECT_EQ(never_jumped[0].step, 220);
  const auto late = run(true, 3.5);
  ASSERT_EQ(late.size(), 1u) << testing::describe(late);
  EXPECT_EQ(late[0].step, 260);
  EXPECT_NEAR(late[0].evidence_value("largest_relative_jump"), 1.0, 0.03);  // step 220's
}

// A converged loss is tiny: a hard batch 4x its median (z ~ 30) is a jump of 0.1% of the loss
// the run started from, no spike (min_spike_share); the same batch on a loss that never fell is.
TEST(Rules, AHardBatchAtAConvergedLossIsNoSpike) {
  const auto run = [](double start) {
    Session session(testing::quiet_config());
    for (std::int64_t step = 0; step < 80; ++step) {
      session.begin_step(step);
      const double noise = 0.00002 * double((step * 7) % 5 - 2);
      const double loss = step < 5 ? start : step == 70 ? 0.0016 : 0.0004 + noise;
      session.end_step(step, loss);
    }
    return with_rule(session.findings(), "loss_spike");
  };
  EXPECT_TRUE(run(1.4).empty());
  const auto spikes = run(0.0004);
  ASSERT_EQ(spikes.size(), 1u);
  EXPECT_EQ(spikes[0].step, 70);
  EXPECT_NEAR(spikes[0].evidence_value("median"), 0.0004, 2e-5);
}

// Note [A loss below 0]: a loss around -2 (a Gaussian negative log-likelihood): a batch 0.1 above
// its median is noise however large its z-score; one 1.5 above it is a spike, said in those terms.
TEST(Rules, ASpikeOfANegativeLoss) {
  Session session(testing::quiet_config());
  for (std::int64_t step = 0; step < 80; ++step) {
    session.begin_step(step);
    const double noise = 0.01 * double((step * 7) % 5 - 2);
    session.end_step(step, step == 55 ? -1.9 : step == 70 ? -0.5 : -2.0 + noise);
  }
  const auto spikes = with_rule(session.findings(), "loss_spike");
  ASSERT_EQ(spikes.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(spikes[0].step, 70);
  EXPECT_NE(spikes[0].message.find("loss -0.5 jumped: 1.5 above the median, -2, robust z-score"),
            std::string::npos)
      << spikes[0].message;
}

TEST(Rules, DivergenceBySustainedGrowth) {
  Session session(testing::quiet_config());
  // Falls from 3 to ~1, then grows 15% a step: the 10-step median passes 3x its best.
  double loss = 3.0;
  std::int64_t step = 0;
  for (; step < 20; ++step) {
    session.begin_step(step);
    session.end_step(step, loss);
    loss *= 0.95;
  }
  for (; step < 60; ++step) {
    session.begin_step(step);
    session.end_step(step, loss);
    loss *= 1.15;
  }
  const auto divergence = with_rule(session.findings(), "divergence");
  ASSERT_EQ(divergence.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(divergence[0].severity, Severity::warning);
  EXPECT_GT(divergence[0].evidence_value("ratio"), 3.0);
  EXPECT_GT(divergence[0].step, 20);
}

// Note [A loss that climbs back]: a loss that fell from 2 to -1.5 and then climbs at 0.05 a step
// diverges once its recent median has given back half its fall. Quiet: the same climb stopped at
// -1.2 (a tenth of the fall), and a loss that started at -1.5 and climbs to -1.3, within its
// batches' noise of +-0.3.
TEST(Rules, DivergenceOfALossBelowZero) {
  const auto run = [](double start, double to) {
    Session session(testing::quiet_config());
    double mean = start;
    for (std::int64_t step = 0; step < 200; ++step) {
      session.begin_step(step);
      mean = step < 50    ? std::max(-1.5, start - 0.07 * double(step))
             : step < 120 ? -1.5
                          : std::min(to, mean + 0.05);
      const double noise = 0.15 * double((step * 7) % 5 - 2);
      session.end_step(step, mean + noise);
    }
    return with_rule(session.findings(), "divergence");
  };
  const auto climbing = run(2.0, 10.0);
  ASSERT_EQ(climbing.size(), 1u) << testing::describe(climbing);
  EXPECT_EQ(climbing[0].severity, Severity::warning);
  EXPECT_LT(climbing[0].evidence_value("best_median"), -1.0);
  EXPECT_GT(climbing[0].evidence_value("given_back"), 0.5);
  EXPECT_GT(climbing[0].step, 120);
  EXPECT_NE(climbing[0].message.find(" of its fall from "), std::string::npos) << climbing[0].message;
  EXPECT_TRUE(run(2.0, -1.2).empty()) << testing::describe(run(2.0, -1.2));
  EXPECT_TRUE(run(-1.5, -1.3).empty()) << testing::describe(run(-1.5, -1.3));
}

// An update of `factor` times the weight `w`: its update ratio is |factor|.
std::vector<float> scaled(std::vector<float> w, float factor) {
  for (float& x : w) x *= factor;
  return w;
}

// Note [Spectral growth]: growth is judged between consecutive measurements (every 5 steps here),
// as a rate: at most max_growth_from_init (10x) for the interval that leaves the
// initialisation, max_growth (3x) after it. "a" grows like a healthy run, 6x from its
// initialisation and then by 1.5, 1.33 and 1.17x: 14x its first measurement, and quiet. "b"
// grows 4x in one later interval, "c" 12x from its initialisation: one warning each.
TEST(Rules, SpectralGrowthIsJudgedAsARate) {
  RunConfig config = testing::quiet_config();
  config.rules.get<SpectralRule>().every = 5;
  Session session(config);
  const std::vector<float> w = normal(32 * 32, 0.0f, 0.1f, 3);
  const float a[] = {1, 6, 9, 12, 14};
  const float b[] = {1, 1.2f, 1.5f, 6, 6};
  const float c[] = {1, 12, 12, 12, 12};
  for (std::int64_t step = 0; step <= 20; ++step) {
    const std::size_t k = std::size_t(step / 5);
    session.begin_step(step);
    session.observe(tensor(step, Role::parameter, "a", "a.weight", scaled(w, a[k]), {32, 32}));
    session.observe(tensor(step, Role::parameter, "b", "b.weight", scaled(w, b[k]), {32, 32}));
    session.observe(tensor(step, Role::parameter, "c", "c.weight", scaled(w, c[k]), {32, 32}));
    session.end_step(step, std::nullopt);
  }
  const auto spectral = with_rule(session.findings(), "spectral");
  ASSERT_EQ(spectral.size(), 2u) << testing::describe(session.findings());
  const Finding& from_init = spectral[0].op == "c.weight" ? spectral[0] : spectral[1];
  const Finding& later = spectral[0].op == "c.weight" ? spectral[1] : spectral[0];
  EXPECT_EQ(from_init.step, 5);
  EXPECT_NEAR(from_init.evidence_value("growth"), 12.0, 0.01);  // power iteration to 1e-4
  EXPECT_EQ(later.op, "b.weight");
  EXPECT_EQ(later.step, 15);
  EXPECT_EQ(later.count, 1);
  EXPECT_NEAR(later.evidence_value("growth"), 4.0, 0.005);
  EXPECT_EQ(later.evidence_value("steps"), 5.0);
  EXPECT_NE(later.message.find("(4x in 5 steps, from "), std::string::npos) << later.message;
}

// After the warm-up (10 steps), an update ratio outside [1e-5, 0.1] three steps in a row, or
// above 1 once (10 at the first update), is reported. Every step alternates the full statistics and the
// one-pass summary with the norm (Note [Light outputs]): the same findings.
TEST(Rules, UpdateRatioOutOfRange) {
  Session session(testing::quiet_config());
  const std::vector<float> w = normal(64, 0.0f, 0.1f, 1);
  for (std::int64_t step = 0; step < 22; ++step) {
    session.begin_step(step);
    // a: Adam's first steps (0.3), then healthy, then 2x the weight at step 14.
    const float a = step < 3 ? 0.3f : step == 14 ? 2.0f : 1e-3f;
    session.observe(tensor(step, Role::parameter, "a", "a.weight", w, {8, 8}));
    session.observe(tensor(step, Role::update, "a", "a.weight", scaled(w, a), {8, 8}));
    // b: not learning from the start: reported at step 19, its tenth step after the warm-up.
    session.observe(tensor(step, Role::parameter, "b", "b.weight", w, {8, 8}));
    session.observe(tensor(step, Role::update, "b", "b.weight", scaled(w, 1e-7f), {8, 8}));
    // c: healthy, with one noisy step at 0.15 after the warm-up.
    session.observe(tensor(step, Role::parameter, "c", "c.weight", w, {8, 8}));
    session.observe(
        tensor(step, Role::update, "c", "c.weight", scaled(w, step == 12 ? 0.15f : 1e-3f), {8, 8}));
    // d: 3x the weight at step 1, inside the warm-up: above immediate_ratio, reported at once.
    session.observe(tensor(step, Role::parameter, "d", "d.weight", w, {8, 8}));
    session.observe(tensor(step, Role::update, "d", "d.weight", scaled(w, step == 1 ? 3.0f : 1e-3f), {8, 8}));
    // e: 5x the weight at its first update (RMSprop's first step at a high learning rate):
    // below first_update_factor x immediate_ratio, and healthy after it. f: 20x there, reported.
    session.observe(tensor(step, Role::parameter, "e", "e.weight", w, {8, 8}));
    session.observe(tensor(step, Role::update, "e", "e.weight", scaled(w, step == 0 ? 5.0f : 1e-3f), {8, 8}));
    session.observe(tensor(step, Role::parameter, "f", "f.weight", w, {8, 8}));
    session.observe(
        tensor(step, Role::update, "f", "f.weight", scaled(w, step == 0 ? 20.0f : 1e-3f), {8, 8}));
    // A bias starting at ~0: excluded (rank 1), even with a huge ratio.
    session.observe(tensor(step, Role::parameter, "c", "c.bias", {1e-6f, 0.0f}, {2}));
    session.observe(tensor(step, Role::update, "c", "c.bias", {0.1f, 0.1f}, {2}));
    session.end_step(step, std::nullopt);
  }
  auto ratio = with_rule(session.findings(), "update_ratio");
  ASSERT_EQ(ratio.size(), 4u) << testing::describe(session.findings());
  EXPECT_EQ(ratio[0].op, "f.weight");
  EXPECT_EQ(ratio[0].step, 0);
  EXPECT_NEAR(ratio[0].evidence_value("ratio"), 20.0, 1e-5);
  ratio.erase(ratio.begin());
  EXPECT_EQ(ratio[0].op, "d.weight");
  EXPECT_EQ(ratio[0].step, 1);
  EXPECT_NEAR(ratio[0].evidence_value("ratio"), 3.0, 1e-6);
  EXPECT_EQ(ratio[1].op, "a.weight");
  EXPECT_EQ(ratio[1].step, 14);
  EXPECT_NEAR(ratio[1].evidence_value("ratio"), 2.0, 1e-6);
  EXPECT_EQ(ratio[1].phase, Phase::optimizer);
  EXPECT_EQ(ratio[2].op, "b.weight");
  EXPECT_EQ(ratio[2].step, 19);
  EXPECT_LT(ratio[2].evidence_value("ratio"), 1e-5);
  EXPECT_EQ(ratio[2].evidence_value("since_step"), 10);
  EXPECT_EQ(ratio[2].evidence_value("steps_outside"), 10);
}

// Note [A weight that learned]: a cosine schedule's last steps move a weight by 1e-7 of it, after
// 40 steps at 1e-3: no finding. A weight at 1e-7 from its first step is reported.
TEST(Rules, UpdateRatioOfADecayedLearningRateIsNoFinding) {
  Session session(testing::quiet_config());
  const std::vector<float> w = normal(64, 0.0f, 0.1f, 1);
  for (std::int64_t step = 0; step < 60; ++step) {
    session.begin_step(step);
    const float decayed = step < 40 ? 1e-3f : 1e-7f;
    session.observe(tensor(step, Role::parameter, "a", "a.weight", w, {8, 8}));
    session.observe(tensor(step, Role::update, "a", "a.weight", scaled(w, decayed), {8, 8}));
    session.observe(tensor(step, Role::parameter, "b", "b.weight", w, {8, 8}));
    session.observe(tensor(step, Role::update, "b", "b.weight", scaled(w, 1e-7f), {8, 8}));
    session.end_step(step, std::nullopt);
  }
  const auto ratio = with_rule(session.findings(), "update_ratio");
  ASSERT_EQ(ratio.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(ratio[0].op, "b.weight");
  EXPECT_EQ(ratio[0].step, 19);
}

TEST(Rules, InitScaleAndDrift) {
  Session session(testing::quiet_config());
  // fan_in 64: std 1/8 gives scale 1 (healthy); std 5 gives 40 (too large at init). The first
  // step seen is 3; from step 5 on "ok" has grown 20x, judged at step 13 (every = 10 steps after
  // the last measured), not at 5 or 12.
  for (const std::int64_t step : {3, 5, 12, 13}) {
    session.begin_step(step);
    const float grow = step >= 5 ? 20.0f : 1.0f;
    session.observe(
        tensor(step, Role::parameter, "ok", "ok.weight", normal(32 * 64, 0.0f, 0.125f * grow, 2), {32, 64}));
    session.observe(
        tensor(step, Role::parameter, "big", "big.weight", normal(32 * 64, 0.0f, 5.0f, 3), {32, 64}));
    session.end_step(step, std::nullopt);
  }
  const auto init = with_rule(session.findings(), "init_scale");
  ASSERT_EQ(init.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(init[0].op, "big.weight");
  EXPECT_EQ(init[0].step, 3);
  EXPECT_NEAR(init[0].evidence_value("scale"), 40.0, 2.0);
  const auto drift = with_rule(session.findings(), "weight_drift");
  ASSERT_EQ(drift.size(), 1u);
  EXPECT_EQ(drift[0].op, "ok.weight");
  EXPECT_EQ(drift[0].step, 13);
  EXPECT_NEAR(drift[0].evidence_value("drift"), 20.0, 1.0);
}

// Note [Drift is a rate]: "a" leaves its initialisation 6x in 200 steps and then grows like the
// square root of the steps, 14x its first scale by step 1,100 and at most 1.41x in any 200 steps
// after the first 200: quiet. "b" is "a" until a 4x jump at step 700, "c" until it falls to 0.2x at
// step 900: each judged against its scale 200 steps before, and reported at once.
TEST(Rules, WeightDriftIsARate) {
  Session session(testing::quiet_config());
  const std::vector<float> w = normal(32 * 64, 0.0f, 0.125f, 4);  // std * sqrt(64) ~ 1
  auto healthy = [](std::int64_t step) {
    return step <= 200 ? 1.0 + 5.0 * double(step) / 200.0 : 6.0 * std::sqrt(double(step) / 200.0);
  };
  for (std::int64_t step = 0; step <= 1100; step += 10) {
    session.begin_step(step);
    const double a = healthy(step);
    session.observe(tensor(step, Role::parameter, "a", "a.weight", scaled(w, float(a)), {32, 64}));
    session.observe(
        tensor(step, Role::parameter, "b", "b.weight", scaled(w, float(step >= 700 ? 4 * a : a)), {32, 64}));
    session.observe(tensor(step, Role::parameter, "c", "c.weight",
                           scaled(w, float(step >= 900 ? 0.2 * a : a)), {32, 64}));
    session.end_step(step, std::nullopt);
  }
  const auto drift = with_rule(session.findings(), "weight_drift");
  ASSERT_EQ(drift.size(), 2u) << testing::describe(session.findings());
  EXPECT_EQ(drift[0].op, "b.weight");
  EXPECT_EQ(drift[0].step, 700);
  EXPECT_EQ(drift[0].evidence_value("reference_step"), 500.0);
  EXPECT_NEAR(drift[0].evidence_value("drift"), 4 * std::sqrt(700.0 / 500.0), 1e-4);
  EXPECT_EQ(drift[1].op, "c.weight");
  EXPECT_EQ(drift[1].step, 900);
  EXPECT_EQ(drift[1].evidence_value("reference_step"), 700.0);
  EXPECT_NEAR(drift[1].evidence_value("drift"), 0.2 * std::sqrt(900.0 / 700.0), 1e-4);
}

TEST(Rules, HeadroomForF16Target) {
  RunConfig config = testing::quiet_config();
  config.target_dtype = DType::f16;
  Session session(config);
  std::vector<float> tiny(100, 1e-9f);  // below f16's smallest subnormal / 2: flush to zero
  for (std::int64_t step = 0; step < 20; ++step) {
    session.begin_step(step);
    if (step == 0)
      session.observe(output(0, "attn", "aten::matmul", {1.0f, 60000.0f, -2.0f}));  // 0.92 of 65504
    session.observe(output(step, "attn", "aten::softmax", {0.5f, 0.25f}));
    session.observe(tensor(step, Role::gradient, "fc", "fc.weight", tiny, {10, 10}));
    // Underflows at every other observation only: never five in a row.
    session.observe(tensor(step, Role::gradient, "fc", "fc.bias", {step % 2 == 0 ? 1e-9f : 1.0f}, {1}));
    session.end_step(step, std::nullopt);
  }
  const auto overflow = with_rule(session.findings(), "headroom_overflow");
  ASSERT_EQ(overflow.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(overflow[0].op, "aten::matmul");
  EXPECT_EQ(overflow[0].step, 0);  // overflow: at once
  EXPECT_NEAR(overflow[0].evidence_value("range_used"), 60000.0 / 65504.0, 1e-9);
  // Underflow: after the 10-step warm-up, at the fifth observation in a row (steps 10..14).
  const auto underflow = with_rule(session.findings(), "headroom_underflow");
  ASSERT_EQ(underflow.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(underflow[0].op, "fc.weight");
  EXPECT_EQ(underflow[0].step, 14);
  EXPECT_DOUBLE_EQ(underflow[0].evidence_value("underflow_fraction"), 1.0);
  EXPECT_NE(underflow[0].suggestion.find("loss"), std::string::npos);
}

TEST(Rules, NoHeadroomFindingsWithoutATarget) {
  Session session(testing::quiet_config());
  session.begin_step(0);
  session.observe(output(0, "attn", "aten::matmul", {1.0f, 60000.0f}));
  session.end_step(0, std::nullopt);
  EXPECT_TRUE(session.findings().empty());
}

TEST(Rules, SpectralRankCollapse) {
  RunConfig config = testing::quiet_config();
  config.rules.get<SpectralRule>().every = 5;
  Session session(config);
  // A rank-one 32 x 32 matrix: stable rank 1. A 16 x 16 one (below min_collapse_dim) is not judged.
  std::vector<float> w(1024);
  for (int r = 0; r < 32; ++r)
    for (int c = 0; c < 32; ++c) w[std::size_t(r * 32 + c)] = float((r + 1) * (c % 3 + 1)) * 0.01f;
  const std::vector<float> small(w.begin(), w.begin() + 256);
  // Note [A rank that training chose]: a random 32 x 32 matrix (stable rank ~8, spectral norm ~11)
  // that training brings to `w` (rank one, spectral norm 12.9) is info, not a warning.
  const std::vector<float> random = normal(1024, 0.0f, 1.0f, 7);
  for (std::int64_t step = 0; step < 6; ++step) {
    session.begin_step(step);
    session.observe(tensor(step, Role::parameter, "proj", "proj.weight", w, {32, 32}));
    session.observe(tensor(step, Role::parameter, "head", "head.weight", small, {16, 16}));
    session.observe(tensor(step, Role::parameter, "mix", "mix.weight", step < 5 ? random : w, {32, 32}));
    session.end_step(step, std::nullopt);
  }
  const auto spectral = with_rule(session.findings(), "spectral");
  ASSERT_EQ(spectral.size(), 2u) << testing::describe(session.findings());
  const Finding& born = spectral[0].op == "proj.weight" ? spectral[0] : spectral[1];
  const Finding& trained = spectral[0].op == "proj.weight" ? spectral[1] : spectral[0];
  EXPECT_NEAR(born.evidence_value("stable_rank"), 1.0, 1e-6);
  EXPECT_EQ(born.count, 2);  // measured at steps 0 and 5
  EXPECT_EQ(born.severity, Severity::warning);
  EXPECT_NE(born.message.find("at its first measurement"), std::string::npos) << born.message;
  EXPECT_EQ(trained.op, "mix.weight");
  EXPECT_EQ(trained.step, 5);
  EXPECT_EQ(trained.severity, Severity::info);
  EXPECT_LT(trained.evidence_value("growth"), 3.0);
  EXPECT_NE(trained.message.find("as training made it"), std::string::npos) << trained.message;
  const RunSummary summary = session.finish();
  ASSERT_EQ(summary.spectral.size(), 3u);  // all measured, sorted by name
  EXPECT_EQ(summary.spectral[2].step, 5);
  EXPECT_EQ(summary.spectral[2].parameter, "proj.weight");
}

// A parameter that takes gradients and never gets one, over 100 steps with a backward: reported
// once, at the 100th such step. Steps without gradients (an evaluation) do not count; a frozen
// parameter, one whose producer does not say, one said trainable and later not (a sparse
// gradient), and one whose gradient came once are not reported.
TEST(Rules, UnusedParameters) {
  Session session(testing::quiet_config());
  const std::vector<float> w = normal(16, 0.0f, 0.3f, 1);
  const auto value = [&](std::int64_t step, std::string_view module, std::string_view name,
                         std::optional<bool> trainable) {
    Observation o = tensor(step, Role::parameter, module, name, w, {4, 4});
    o.trainable = trainable;
    session.observe(o);
  };
  for (std::int64_t step = 0; step < 130; ++step) {
    session.begin_step(step);
    if (step % 10 == 0) {  // the values come on sampled steps, as in watch
      value(step, "a", "a.weight", true);
      value(step, "u", "u.weight", true);
      value(step, "frozen", "frozen.weight", false);
      value(step, "n", "n.weight", std::nullopt);
      value(step, "sparse", "sparse.weight", step == 0);
      value(step, "late", "late.weight", true);
    }
    const bool evaluation = step >= 60 && step < 70;
    if (!evaluation) session.observe(tensor(step, Role::gradient, "a", "a.weight", w, {4, 4}));
    if (step == 50) session.observe(tensor(step, Role::gradient, "late", "late.weight", w, {4, 4}));
    session.end_step(step, std::nullopt);
  }
  const auto unused = with_rule(session.findings(), "unused_parameters");
  ASSERT_EQ(unused.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(unused[0].module, "u");
  EXPECT_EQ(unused[0].op, "u.weight");
  EXPECT_EQ(unused[0].step, 109);  // 60 steps with gradients, 10 without, 40 more
  EXPECT_EQ(unused[0].count, 1);
  EXPECT_EQ(unused[0].evidence_value("steps"), 100);
  EXPECT_EQ(unused[0].evidence_value("since_step"), 0);
}

TEST(Rules, DisabledRulesStaySilent) {
  RunConfig config = testing::quiet_config();
  config.rules.get<NonfiniteRule>().enabled = false;
  config.rules.get<LossRule>().enabled = false;
  Session session(config);
  session.begin_step(0);
  session.observe(output(0, "m", "aten::log", {std::nanf("")}, {}, true));
  session.end_step(0, std::nan(""));
  EXPECT_TRUE(session.findings().empty()) << testing::describe(session.findings());
}

// A healthy training-like run: ReLU activations with every unit active, steady gradients,
// weights at scale ~1 with ~1e-3 updates, slowly decreasing noisy loss. No rule may fire.
TEST(Rules, HealthyRunHasNoFindings) {
  RunConfig config = testing::quiet_config();
  config.rules.get<DeadUnitsRule>().window = 20;
  config.target_dtype = DType::bf16;
  Session session(config);
  std::vector<float> w = normal(32 * 16, 0.0f, 0.25f, 7);  // fan_in 16: scale 1
  for (std::int64_t step = 0; step < 150; ++step) {
    session.begin_step(step);
    std::vector<float> h = normal(8 * 32, 0.0f, 1.0f, std::uint32_t(100 + step));
    for (float& x : h) x = std::max(x, 0.0f);
    session.observe(
        output(step, "mlp.fc1", "linear", normal(8 * 32, 0.0f, 1.0f, std::uint32_t(step)), {8, 32}));
    session.observe(output(step, "mlp.act", "relu", h, {8, 32}));
    session.observe(output(step, "mlp.gate", "sigmoid", normal(64, 0.5f, 0.1f, std::uint32_t(step)), {8, 8}));
    for (int layer = 0; layer < 3; ++layer) {
      const std::string module = std::string(1, 'l').append(std::to_string(layer));
      const std::string name = std::string(module).append(".weight");
      session.observe(tensor(step, Role::gradient, module, name,
                             normal(100, 0.0f, 0.01f * float(layer + 1), std::uint32_t(step * 7 + layer)),
                             {10, 10}));
    }
    session.observe(tensor(step, Role::parameter, "fc", "fc.weight", w, {32, 16}));
    std::vector<float> update = normal(32 * 16, 0.0f, 0.25e-3f, std::uint32_t(1000 + step));
    session.observe(tensor(step, Role::update, "fc", "fc.weight", update, {32, 16}));
    for (std::size_t i = 0; i < w.size(); ++i) w[i] += update[i];
    const double loss = 2.0 * std::exp(-0.01 * double(step)) + 0.05 * std::sin(double(step));
    session.end_step(step, loss);
  }
  EXPECT_TRUE(session.findings().empty()) << testing::describe(session.findings());
  EXPECT_EQ(session.tier(), Tier::watch);
  const RunSummary summary = session.finish();
  EXPECT_EQ(summary.steps, 150);
  EXPECT_EQ(summary.spectral.size(), 1u);
  EXPECT_TRUE(summary.hook_errors.empty());
}

}  // namespace
}  // namespace tfdebug
