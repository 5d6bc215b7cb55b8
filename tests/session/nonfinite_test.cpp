#include <cmath>
#include <limits>

#include "session_test_util.hpp"

namespace tfdebug {
namespace {

using testing::output;
using testing::with_rule;

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(Nonfinite, ReportsTheProducerNotThePropagators) {
  Session session(testing::quiet_config());
  const std::vector<float> fine = {1, 2, 3, 4};
  const std::vector<float> bad = {1, kNaN, 3, kNaN};
  for (std::int64_t step = 0; step < 3; ++step) {
    session.begin_step(step);
    session.observe(output(step, "blocks.0", "aten::linear", fine, {}, true));
    if (step == 2) {
      session.observe(output(step, "blocks.1.mlp", "aten::log", bad, {}, true));   // producer
      session.observe(output(step, "blocks.1.mlp", "aten::mul", bad, {}, false));  // propagator
      session.observe(output(step, "blocks.1", "aten::add", bad, {}, false));      // propagator
      session.observe(output(step, "", "aten::mse_loss", bad, {}, false));         // propagator
    } else {
      session.observe(output(step, "blocks.1.mlp", "aten::log", fine, {}, true));
    }
    session.end_step(step, step == 2 ? std::optional<double>(std::nan("")) : 1.0);
  }
  const auto nonfinite = with_rule(session.findings(), "nonfinite");
  ASSERT_EQ(nonfinite.size(), 1u) << testing::describe(session.findings());
  const Finding& f = nonfinite[0];
  EXPECT_EQ(f.severity, Severity::error);
  EXPECT_EQ(f.step, 2);
  EXPECT_EQ(f.phase, Phase::forward);
  EXPECT_EQ(f.module, "blocks.1.mlp");
  EXPECT_EQ(f.op, "aten::log");
  EXPECT_EQ(f.evidence_value("producer"), 1);
  EXPECT_EQ(f.evidence_value("nan"), 2);
  EXPECT_EQ(f.evidence_value("propagators"), 3);
  EXPECT_NE(f.message.find("from finite inputs"), std::string::npos) << f.message;
  // The NaN loss is a divergence error of its own.
  const auto divergence = with_rule(session.findings(), "divergence");
  ASSERT_EQ(divergence.size(), 1u);
  EXPECT_EQ(divergence[0].severity, Severity::error);
  EXPECT_EQ(divergence[0].op, "loss");
}

// An InputsCheck that answers as told and counts how often it was asked.
class CountingInputs final : public InputsCheck {
 public:
  explicit CountingInputs(std::optional<bool> answer) : answer_(answer) {}
  std::optional<bool> inputs_finite() const override {
    ++asked;
    return answer_;
  }
  mutable int asked = 0;

 private:
  std::optional<bool> answer_;
};

TEST(Nonfinite, InputsAreCheckedOnDemandOnlyForNonFiniteOutputs) {
  Session session(testing::quiet_config());
  const std::vector<float> fine = {1, 2, 3, 4};
  const std::vector<float> bad = {1, kNaN, 3, 4};
  CountingInputs finite_inputs(true);
  CountingInputs bad_inputs(false);
  session.begin_step(0);
  Observation o = output(0, "blocks.0", "aten::linear", fine);
  o.inputs = &finite_inputs;
  session.observe(o);
  EXPECT_EQ(finite_inputs.asked, 0) << "a finite output never costs a scan of the inputs";
  o = output(0, "blocks.1.mlp", "aten::log", bad);
  o.inputs = &finite_inputs;
  session.observe(o);  // producer, known only by asking
  EXPECT_EQ(finite_inputs.asked, 1);
  o = output(0, "blocks.1", "aten::add", bad);
  o.inputs = &bad_inputs;
  session.observe(o);  // propagator
  EXPECT_EQ(bad_inputs.asked, 1);
  session.end_step(0, 1.0);
  const auto nonfinite = with_rule(session.findings(), "nonfinite");
  ASSERT_EQ(nonfinite.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(nonfinite[0].op, "aten::log");
  EXPECT_EQ(nonfinite[0].evidence_value("propagators"), 1);
}

// What observe returns: whether every value was finite, so that a producer seeing the same
// memory again (an in-place op's input) need not read it twice. On the light path (most steps'
// op outputs), the full-statistics steps, and for parameters alike.
TEST(Nonfinite, ObserveSaysWhetherEveryValueWasFinite) {
  Session session(testing::quiet_config());
  const std::vector<float> fine = {1, 0, -3, 4};
  const std::vector<float> bad = {1, kNaN, 3, 4};
  const std::vector<float> inf = {-kInf, 2};
  for (std::int64_t step : {0, 1}) {  // step 0: full statistics (moments_every); 1: light
    session.begin_step(step);
    EXPECT_EQ(session.observe(output(step, "b", "aten::add", fine, {}, true, Phase::backward)).finite, true);
    EXPECT_EQ(session.observe(output(step, "b", "aten::mul", bad, {}, true, Phase::optimizer)).finite, false);
    EXPECT_EQ(session.observe(output(step, "b", "aten::relu", inf, {}, false)).finite, false);
    session.end_step(step, 1.0);
  }
}

// Note [Light outputs]: between full-statistics steps a bias or norm scale (rank < 2) is
// summarised like an op output (no rule reads its moments), and so is a gradient (with its norm)
// and a weight matrix (the weight-scale rule reads its moments at the first step it sees and every
// 10 steps). A NaN in any is still counted exactly.
TEST(Nonfinite, VectorParametersAreSummarisedBetweenFullStatisticsSteps) {
  Session session(testing::quiet_config());
  const std::vector<float> values = {1, -2, 3, 0.5};
  const std::vector<float> bad = {1, kNaN, kNaN, 0.5};
  for (std::int64_t step : {0, 1}) {  // step 0: full statistics (moments_every); 1: light
    session.begin_step(step);
    EXPECT_EQ(session.observe(testing::tensor(step, Role::parameter, "fc", "fc.bias", values, {4})).finite,
              true);
    EXPECT_EQ(
        session.observe(testing::tensor(step, Role::parameter, "fc", "fc.weight", values, {2, 2})).finite,
        true);
    EXPECT_EQ(
        session.observe(testing::tensor(step, Role::gradient, "fc", "fc.weight", values, {2, 2})).finite,
        true);
    EXPECT_EQ(
        session.observe(testing::tensor(step, Role::update, "fc", "fc.bias", step == 1 ? bad : values, {4}))
            .finite,
        step == 0);
    session.end_step(step, 1.0);
  }
  const auto steps = session.flight_recorder();
  ASSERT_EQ(steps.size(), 2u);
  auto find = [](const RecordedStep& recorded, Role role, std::string_view op) {
    for (const auto& r : recorded.ops)
      if (r.role == role && r.op == op) return r;
    ADD_FAILURE() << op << " not recorded";
    return RecordedOp{};
  };
  EXPECT_DOUBLE_EQ(find(steps[0], Role::parameter, "fc.bias").mean, 0.625);
  EXPECT_DOUBLE_EQ(find(steps[0], Role::parameter, "fc.weight").mean, 0.625);
  const RecordedOp bias = find(steps[1], Role::parameter, "fc.bias");
  EXPECT_TRUE(std::isnan(bias.mean)) << "not measured between full-statistics steps";
  EXPECT_EQ(bias.min, -2);
  EXPECT_EQ(bias.max, 3);
  EXPECT_TRUE(std::isnan(find(steps[1], Role::parameter, "fc.weight").mean));
  EXPECT_EQ(find(steps[1], Role::parameter, "fc.weight").max, 3);
  // A gradient's moments neither: its rules read its norm, which the one-pass summary has.
  EXPECT_DOUBLE_EQ(find(steps[0], Role::gradient, "fc.weight").mean, 0.625);
  EXPECT_TRUE(std::isnan(find(steps[1], Role::gradient, "fc.weight").mean));
  EXPECT_EQ(find(steps[1], Role::gradient, "fc.weight").max, 3);
  EXPECT_EQ(find(steps[1], Role::update, "fc.bias").nan, 2);
  const auto nonfinite = with_rule(session.findings(), "nonfinite");
  ASSERT_EQ(nonfinite.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(nonfinite[0].op, "fc.bias");
  EXPECT_EQ(nonfinite[0].evidence_value("nan"), 2);
}

// An update is the optimizer's output: non-finite from a finite parameter and gradient (the
// producer says so when it did not observe the optimizer's ops), the optimizer made it.
TEST(Nonfinite, AnUpdateFromFiniteInputsIsTheOptimizersOwnDoing) {
  Session session(testing::quiet_config());
  const std::vector<float> bad = {0, kNaN, kNaN};
  session.begin_step(3);
  Observation update = testing::tensor(3, Role::update, "blocks.0.attn.q", "blocks.0.attn.q.bias", bad, {3});
  update.inputs_finite = true;
  EXPECT_EQ(session.observe(update).finite, false);
  session.end_step(3, 1.0);
  auto nonfinite = with_rule(session.findings(), "nonfinite");
  ASSERT_EQ(nonfinite.size(), 1u) << testing::describe(session.findings());
  EXPECT_EQ(nonfinite[0].phase, Phase::optimizer);
  EXPECT_EQ(nonfinite[0].module, "blocks.0.attn.q");
  EXPECT_EQ(nonfinite[0].op, "blocks.0.attn.q.bias");
  EXPECT_EQ(nonfinite[0].evidence_value("producer"), 1);
  EXPECT_EQ(nonfinite[0].evidence_value("nan"), 2);
  EXPECT_EQ(nonfinite[0].message,
            "the optimizer's update of blocks.0.attn.q.bias holds 2 NaN of 3 values from a finite parameter "
            "and gradient (optimizer, step 3)");
  // From a non-finite gradient, the update only passed it on: the step's first non-finite value.
  Session passed(testing::quiet_config());
  passed.begin_step(3);
  update.inputs_finite = false;
  passed.observe(update);
  passed.end_step(3, 1.0);
  nonfinite = with_rule(passed.findings(), "nonfinite");
  ASSERT_EQ(nonfinite.size(), 1u);
  EXPECT_EQ(nonfinite[0].evidence_value("producer"), 0);
}

TEST(Nonfinite, ProducerArrivingAfterPropagatorsIsStillTheOneReported) {
  // Autograd threads may deliver a propagator first; the producer is the op with finite inputs.
  Session session(testing::quiet_config());
  const std::vector<float> bad = {kInf, 1};
  session.begin_step(5);
  session.observe(output(5, "head", "aten::mm", bad, {}, false, Phase::backward));
  session.observe(output(5, "blocks.0.attn", "aten::div", bad, {}, true, Phase::backward));
  session.end_step(5, std::nullopt);
  const auto nonfinite = with_rule(session.findings(), "nonfinite");
  ASSERT_EQ(nonfinite.size(), 1u);
  EXPECT_EQ(nonfinite[0].op, "aten::div");
  EXPECT_EQ(nonfinite[0].phase, Phase::backward);
  EXPECT_EQ(nonfinite[0].evidence_value("pos_inf"), 1);
  EXPECT_EQ(nonfinite[0].evidence_value("nan"), 0);
  EXPECT_EQ(nonfinite[0].evidence_value("propagators"), 1);
}

TEST(Nonfinite, NegativeInfinityCounts) {
  Session session(testing::quiet_config());
  const std::vector<float> bad = {-kInf, 0, 1};
  session.begin_step(0);
  session.observe(output(0, "m", "aten::log", bad, {}, true));
  session.end_step(0, std::nullopt);
  const auto nonfinite = with_rule(session.findings(), "nonfinite");
  ASSERT_EQ(nonfinite.size(), 1u);
  EXPECT_EQ(nonfinite[0].evidence_value("neg_inf"), 1);
}

TEST(Nonfinite, UnknownInputsReportTheFirstNonfiniteObservationOnce) {
  Session session(testing::quiet_config());
  const std::vector<float> bad = {kNaN};
  for (std::int64_t step = 0; step < 3; ++step) {
    session.begin_step(step);
    session.observe(output(step, "a", "first", bad));
    session.observe(output(step, "b", "second", bad));
    session.end_step(step, std::nullopt);
  }
  const auto nonfinite = with_rule(session.findings(), "nonfinite");
  ASSERT_EQ(nonfinite.size(), 1u);
  EXPECT_EQ(nonfinite[0].module, "a");
  EXPECT_EQ(nonfinite[0].op, "first");
  EXPECT_EQ(nonfinite[0].step, 0);
  EXPECT_EQ(nonfinite[0].evidence_value("producer"), 0);
  EXPECT_EQ(nonfinite[0].evidence_value("propagators"), 1);
}

TEST(Nonfinite, RepeatedProducerIsOneFindingWithACount) {
  Session session(testing::quiet_config());
  const std::vector<float> bad = {kNaN};
  for (std::int64_t step = 0; step < 4; ++step) {
    session.begin_step(step);
    session.observe(output(step, "m", "aten::sqrt", bad, {}, true));
    session.end_step(step, std::nullopt);
  }
  const auto nonfinite = with_rule(session.findings(), "nonfinite");
  ASSERT_EQ(nonfinite.size(), 1u);
  EXPECT_EQ(nonfinite[0].step, 0);
  EXPECT_EQ(nonfinite[0].count, 4);
  EXPECT_EQ(nonfinite[0].last_step, 3);
}

TEST(Nonfinite, AParameterHoldingNaNIsReportedWhenNoOpProducedIt) {
  Session session(testing::quiet_config());
  const std::vector<float> w = {1, kNaN, 2, 3};
  session.begin_step(0);
  session.observe(testing::tensor(0, Role::parameter, "fc", "fc.weight", w, {2, 2}));
  session.end_step(0, std::nullopt);
  const auto nonfinite = with_rule(session.findings(), "nonfinite");
  ASSERT_EQ(nonfinite.size(), 1u);
  EXPECT_EQ(nonfinite[0].op, "fc.weight");
  EXPECT_NE(nonfinite[0].message.find("parameter fc.weight"), std::string::npos) << nonfinite[0].message;
}

TEST(Nonfinite, StopOnErrorAsksProducersToStop) {
  RunConfig config = testing::quiet_config();
  config.stop_on_error = true;
  Session session(config);
  const std::vector<float> bad = {kNaN};
  session.begin_step(0);
  EXPECT_FALSE(session.should_stop());
  session.observe(output(0, "m", "aten::log", bad, {}, true));
  EXPECT_TRUE(session.should_stop());
  session.end_step(0, std::nullopt);
  EXPECT_TRUE(session.finish().stopped);

  Session relaxed(testing::quiet_config());
  relaxed.begin_step(0);
  relaxed.observe(output(0, "m", "aten::log", bad, {}, true));
  EXPECT_FALSE(relaxed.should_stop());
}

}  // namespace
}  // namespace tfdebug
