// What a Session concludes on observations of models other than the demo's: masks' infinities,
// NaN made from infinities, NaN that came with the data, dead channels of convolutions, filled
// outputs, findings that worsen, steps replayed by their producer, and the tier set at run time.
#include <cmath>
#include <limits>

#include "session_test_util.hpp"

namespace tfdebug {
namespace {

using testing::output;
using testing::tensor;
using testing::with_rule;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

Observation with_kinds(Observation o, InputKinds kinds) {
  o.inputs_finite.reset();
  o.input_kinds = kinds;
  return o;
}

// MultiheadAttention's padding mask: masked_fill writes -inf (a filled output), the scores go
// through views and an add of a causal mask made before the step (outside), and the softmax
// turns them into finite probabilities. Nothing is wrong, at any step.
TEST(Diagnosis, MaskInfinitiesAreIntended) {
  Session session(testing::quiet_config());
  const std::vector<float> masked = {0.5f, -kInf, 0.25f, -kInf};
  const std::vector<float> probs = {0.6f, 0.0f, 0.4f, 0.0f};
  for (std::int64_t step = 0; step < 5; ++step) {
    session.begin_step(step);
    Observation fill = output(step, "enc.0.self_attn", "aten::masked_fill", masked, {}, true);
    fill.filled = true;
    session.observe(fill);
    // scores + causal mask: -inf in, -inf out (a mask passed on), some from outside the step.
    session.observe(with_kinds(output(step, "enc.0.self_attn", "aten::add", masked), {0, 2, 0, 2}));
    session.observe(with_kinds(output(step, "enc.0.self_attn", "aten::softmax", probs), {0, 2, 0, 0}));
    session.end_step(step, 0.7);
  }
  EXPECT_TRUE(session.findings().empty()) << testing::describe(session.findings());
  // The rule can be told that infinities are faults.
  RunConfig strict = testing::quiet_config();
  strict.rules.get<NonfiniteRule>().intended_infinities = false;
  Session other(strict);
  other.begin_step(0);
  Observation fill = output(0, "enc.0.self_attn", "aten::masked_fill", masked, {}, true);
  fill.filled = true;
  other.observe(fill);
  other.end_step(0, 0.7);
  ASSERT_EQ(with_rule(other.findings(), "nonfinite").size(), 1u);
}

// A row whose every key is masked: softmax of -inf only is NaN. Its inputs held -inf and no NaN,
// so the softmax produced the NaN, even after a healthy mask on every step before.
TEST(Diagnosis, NaNFromInfinitiesHasAProducer) {
  Session session(testing::quiet_config());
  const std::vector<float> masked = {0.5f, -kInf, -kInf, -kInf};
  const std::vector<float> fine = {0.6f, 0.0f, 0.4f, 0.0f};
  const std::vector<float> bad = {1.0f, 0.0f, kNaN, kNaN};
  for (std::int64_t step = 0; step < 4; ++step) {
    session.begin_step(step);
    Observation fill = output(step, "enc.0.self_attn", "aten::masked_fill", masked, {}, true);
    fill.filled = true;
    session.observe(fill);
    session.observe(
        with_kinds(output(step, "enc.0.self_attn", "aten::softmax", step == 3 ? bad : fine), {0, 3, 0, 0}));
    if (step == 3)
      session.observe(with_kinds(output(step, "enc.0.self_attn", "aten::bmm", bad), {2, 3, 0, 0}));
    session.end_step(step, step == 3 ? std::nan("") : 0.7);
  }
  const auto nonfinite = with_rule(session.findings(), "nonfinite");
  ASSERT_EQ(nonfinite.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(nonfinite[0].op, "aten::softmax");
  EXPECT_EQ(nonfinite[0].module, "enc.0.self_attn");
  EXPECT_EQ(nonfinite[0].step, 3);
  EXPECT_EQ(nonfinite[0].evidence_value("producer"), 1);
  EXPECT_EQ(nonfinite[0].evidence_value("propagators"), 1);  // the bmm
  EXPECT_NE(nonfinite[0].message.find("held +-Inf but no NaN"), std::string::npos) << nonfinite[0].message;
}

// A NaN that came in with the batch: the first op to read it is named, and the data blamed.
TEST(Diagnosis, TheDataIsTheProducer) {
  Session session(testing::quiet_config());
  const std::vector<float> bad = {1.0f, kNaN, kNaN, 2.0f};
  session.begin_step(7);
  session.observe(with_kinds(output(7, "fc1", "aten::addmm", bad), {1, 0, 1, 0}));
  session.observe(with_kinds(output(7, "", "aten::relu", bad), {2, 0, 0, 0}));
  session.end_step(7, std::nan(""));
  const auto nonfinite = with_rule(session.findings(), "nonfinite");
  ASSERT_EQ(nonfinite.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(nonfinite[0].module, "fc1");
  EXPECT_EQ(nonfinite[0].op, "aten::addmm");
  EXPECT_EQ(nonfinite[0].evidence_value("data"), 1);
  EXPECT_EQ(nonfinite[0].evidence_value("input_nan"), 1);
  EXPECT_EQ(nonfinite[0].evidence_value("propagators"), 1);
  EXPECT_EQ(nonfinite[0].message.rfind("the data holds NaN", 0), 0u) << nonfinite[0].message;
}

// An Inf in the data looks like a mask until the loss says otherwise: then the step's first
// infinity is reported.
TEST(Diagnosis, InfinityThatReachesTheLossIsReported) {
  Session session(testing::quiet_config());
  const std::vector<float> bad = {1.0f, kInf, 2.0f, 3.0f};
  session.begin_step(2);
  session.observe(with_kinds(output(2, "fc1", "aten::addmm", bad), {0, 1, 0, 1}));
  session.end_step(2, std::numeric_limits<double>::infinity());
  const auto nonfinite = with_rule(session.findings(), "nonfinite");
  ASSERT_EQ(nonfinite.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(nonfinite[0].op, "aten::addmm");
  EXPECT_NE(nonfinite[0].message.find("the loss is not finite"), std::string::npos) << nonfinite[0].message;
}

// The producer restarts a step (a replay in diagnose): what the first pass observed is forgotten,
// the replay's producer is reported, and the gradient rule counts the step's norms once.
TEST(Diagnosis, ARestartedStepIsObservedOnce) {
  RunConfig config = testing::quiet_config();
  config.rules.get<GradientRule>().min_history = 3;
  Session session(config);
  const std::vector<float> bad = {kNaN, 1.0f};
  const std::vector<float> g = {0.3f, 0.4f};  // norm 0.5
  for (std::int64_t step = 0; step < 6; ++step) {
    session.begin_step(step);
    session.observe(tensor(step, Role::gradient, "fc", "fc.weight", step == 5 ? bad : g, {2}));
    if (step == 5) {
      // The replay: the gradient again, and this time the op that made it.
      session.restart_step(step);
      EXPECT_EQ(session.tier(), Tier::watch);
      session.observe(output(step, "fc", "aten::log", bad, {}, true, Phase::backward));
      session.observe(tensor(step, Role::gradient, "fc", "fc.weight", bad, {2}));
    }
    session.end_step(step, 1.0);
  }
  const auto nonfinite = with_rule(session.findings(), "nonfinite");
  ASSERT_EQ(nonfinite.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(nonfinite[0].op, "aten::log");
  EXPECT_EQ(nonfinite[0].phase, Phase::backward);
  const auto recorded = session.flight_recorder();
  ASSERT_EQ(recorded.back().step, 5);
  EXPECT_EQ(recorded.back().ops.size(), 2u);  // the replay's two, not the first pass's
  EXPECT_TRUE(with_rule(session.findings(), "exploding_gradients").empty());
}

// A replay that sees nothing: the first pass's finding is reported, saying so.
TEST(Diagnosis, AReplayThatDoesNotReproduceSaysSo) {
  Session session(testing::quiet_config());
  const std::vector<float> bad = {kNaN, 1.0f};
  session.begin_step(3);
  session.observe(tensor(3, Role::gradient, "fc", "fc.weight", bad, {2}));
  session.restart_step(3);
  session.observe(tensor(3, Role::gradient, "fc", "fc.weight", {0.5f, 1.0f}, {2}));
  session.end_step(3, 1.0);
  const auto nonfinite = with_rule(session.findings(), "nonfinite");
  ASSERT_EQ(nonfinite.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(nonfinite[0].op, "fc.weight");
  EXPECT_NE(nonfinite[0].message.find("not reproducible"), std::string::npos) << nonfinite[0].message;
}

TEST(Diagnosis, TierAtRunTime) {
  Session session(testing::quiet_config());
  EXPECT_EQ(session.tier(), Tier::watch);
  session.set_tier(Tier::diagnose);
  session.begin_step(0);
  EXPECT_EQ(session.tier(), Tier::diagnose);
  session.end_step(0, 1.0);
  session.set_tier(Tier::watch);
  session.diagnose_steps(5, 2);  // steps 5 and 6
  for (std::int64_t step = 1; step < 9; ++step) {
    session.begin_step(step);
    EXPECT_EQ(session.tier(), step == 5 || step == 6 ? Tier::diagnose : Tier::watch) << step;
    session.end_step(step, 1.0);
  }
}

// A layer that goes from 12.5% to 100% dead says so: the worst occurrence, with its step.
TEST(Diagnosis, AFindingThatWorsensKeepsItsWorst) {
  RunConfig config = testing::quiet_config();
  config.rules.get<DeadUnitsRule>().window = 3;
  Session session(config);
  for (std::int64_t step = 0; step < 10; ++step) {
    std::vector<float> h(32, 1.0f);  // [4, 8]
    for (std::size_t i = 0; i < h.size(); ++i) {
      if (i % 8 == 0 || step >= 4) h[i] = 0.0f;  // unit 0 dead from the start, all from step 4
    }
    session.begin_step(step);
    session.observe(output(step, "mlp", "aten::relu", h, {4, 8}));
    session.end_step(step, 1.0);
  }
  const auto dead = with_rule(session.findings(), "dead_units");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].step, 2);
  EXPECT_DOUBLE_EQ(dead[0].evidence_value("fraction"), 0.125);
  ASSERT_TRUE(dead[0].worst.has_value());
  EXPECT_EQ(dead[0].worst->step, 6);  // units 1-7 dead for the 3-step window 4..6
  EXPECT_DOUBLE_EQ(dead[0].worst->magnitude, 1.0);
  EXPECT_NE(dead[0].worst->message.find("8 of 8 units (100%)"), std::string::npos) << dead[0].worst->message;
  ASSERT_TRUE(dead[0].latest.has_value());
  EXPECT_EQ(dead[0].latest->step, 9);
}

// Channels of a convolution (N, C, H, W; unit_dim 1) are its units: channel 2 of 3 is dead.
TEST(Diagnosis, DeadChannelsOfAConvolution) {
  RunConfig config = testing::quiet_config();
  config.rules.get<DeadUnitsRule>().window = 2;
  Session session(config);
  std::vector<float> h(2 * 3 * 2 * 2, 1.0f);
  for (int n = 0; n < 2; ++n)
    for (int s = 0; s < 4; ++s) h[std::size_t(n * 12 + 2 * 4 + s)] = 0.0f;
  for (std::int64_t step = 0; step < 2; ++step) {
    session.begin_step(step);
    Observation o = output(step, "", "aten::relu", h, {2, 3, 2, 2});
    o.unit_dim = 1;
    session.observe(o);
    session.end_step(step, 1.0);
  }
  const auto dead = with_rule(session.findings(), "dead_units");
  ASSERT_EQ(dead.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(dead[0].evidence_value("units"), 3);
  EXPECT_EQ(dead[0].evidence_value("dead"), 1);
  EXPECT_EQ(dead[0].evidence_value("first_dead_unit"), 2);
  EXPECT_NE(dead[0].message.find("1 of 3 channels"), std::string::npos) << dead[0].message;
  // Read along the last dimension instead, no unit is dead: the rule needs unit_dim.
}

// zero_grad's fill_ and an RNN's zeros are filled, not computed: they have no units.
TEST(Diagnosis, FilledOutputsHaveNoUnits) {
  RunConfig config = testing::quiet_config();
  config.rules.get<DeadUnitsRule>().window = 2;
  Session session(config);
  const std::vector<float> zeros(64, 0.0f);
  for (std::int64_t step = 0; step < 4; ++step) {
    session.begin_step(step);
    Observation o = output(step, "fc", "aten::fill_", zeros, {8, 8});
    o.filled = true;
    session.observe(o);
    session.end_step(step, 1.0);
  }
  EXPECT_TRUE(session.findings().empty()) << testing::describe(session.findings());
}

}  // namespace
}  // namespace tfdebug
