#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "session_test_util.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug {
namespace {

using testing::output;
using testing::with_rule;

TEST(Tier, EscalatesAfterAWarningAndFallsBack) {
  RunConfig config = testing::quiet_config();
  config.diagnose_steps = 3;
  config.rules.get<DeadUnitsRule>().enabled = false;
  Session session(config);
  std::vector<Tier> tiers;
  for (std::int64_t step = 0; step < 10; ++step) {
    session.begin_step(step);
    tiers.push_back(session.tier());
    // A saturated tanh at step 2 only: a warning.
    const float value = step == 2 ? 1.0f : 0.1f;
    session.observe(output(step, "m", "tanh", std::vector<float>(8, value)));
    session.end_step(step, std::nullopt);
  }
  // Steps 3, 4, 5 begin in diagnose (2 + 3 = 5), then back to watch.
  const std::vector<Tier> expected = {Tier::watch,    Tier::watch,    Tier::watch, Tier::diagnose,
                                      Tier::diagnose, Tier::diagnose, Tier::watch, Tier::watch,
                                      Tier::watch,    Tier::watch};
  EXPECT_EQ(tiers, expected);
}

// A warning that holds every step escalates once; after a quiet spell longer than
// diagnose_steps it escalates again.
TEST(Tier, ARepeatedWarningEscalatesOnceUntilItComesBackAfterAQuietSpell) {
  RunConfig config = testing::quiet_config();
  config.diagnose_steps = 3;
  config.rules.get<DeadUnitsRule>().enabled = false;
  Session session(config);
  std::vector<Tier> tiers;
  for (std::int64_t step = 0; step < 20; ++step) {
    session.begin_step(step);
    tiers.push_back(session.tier());
    // Saturated at steps 2-9 (every step), then quiet, then again at step 14.
    const bool saturated = (step >= 2 && step <= 9) || step == 14;
    session.observe(output(step, "m", "tanh", std::vector<float>(8, saturated ? 1.0f : 0.1f)));
    session.end_step(step, std::nullopt);
  }
  std::vector<Tier> expected(20, Tier::watch);
  for (std::int64_t step : {3, 4, 5, 15, 16, 17}) expected[std::size_t(step)] = Tier::diagnose;
  EXPECT_EQ(tiers, expected);
  const auto saturation = with_rule(session.findings(), "saturation");
  ASSERT_EQ(saturation.size(), 1u);
  EXPECT_EQ(saturation[0].count, 9);  // every step it held, counted
}

TEST(Tier, ConfiguredDiagnoseStaysDiagnose) {
  RunConfig config = testing::quiet_config();
  config.tier = Tier::diagnose;
  Session session(config);
  session.begin_step(0);
  EXPECT_EQ(session.tier(), Tier::diagnose);
}

TEST(FlightRecorder, KeepsTheLastStepsInBoundedMemory) {
  FlightRecorder recorder(3, 2);
  const std::vector<float> values = {1, -4, 2};
  for (std::int64_t step = 0; step < 5; ++step) {
    recorder.begin_step(step);
    for (int i = 0; i < 4; ++i) {  // 4 observations, 2 kept per step
      const std::string op = std::string("op").append(std::to_string(i));
      const Observation o = output(step, "m", op, values);
      recorder.record(o, compute_stats(o.value));
    }
    recorder.end_step(double(step));
  }
  const auto steps = recorder.steps();
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].step, 2);
  EXPECT_EQ(steps[2].step, 4);
  EXPECT_EQ(steps[2].loss, 4.0);
  ASSERT_EQ(steps[1].ops.size(), 2u);
  EXPECT_EQ(steps[1].dropped_ops, 2);
  EXPECT_EQ(recorder.dropped_ops(), 10);
  EXPECT_EQ(steps[1].ops[1].op, "op1");
  EXPECT_EQ(steps[1].ops[1].module, "m");
  EXPECT_EQ(steps[1].ops[1].min, -4);
  EXPECT_EQ(steps[1].ops[1].abs_max, 4);
  EXPECT_EQ(steps[1].ops[1].count, 3);
}

// Note [Light outputs]: op outputs get the full statistics every moments_every steps and after the
// first error; on the other steps the one-pass summary, whose range is exact and whose moments
// are not measured. Parameters always get the full statistics.
TEST(FlightRecorder, OutputMomentsEveryKStepsAndAfterTheFirstError) {
  RunConfig config = testing::quiet_config();
  config.tier = Tier::diagnose;
  config.flight_recorder_moments_every = 3;
  config.flight_recorder_after = 2;
  Session session(config);
  const std::vector<float> values = {1, -4, 2, 0.5f};
  const std::vector<float> weights = testing::normal(64, 0, 0.1f, 3);
  const std::vector<float> bad = {1, std::nanf(""), 2, 3};
  for (std::int64_t step = 0; step < 7; ++step) {
    session.begin_step(step);
    session.observe(testing::tensor(step, Role::parameter, "fc", "fc.weight", weights, {8, 8}));
    session.observe(output(step, "fc", "aten::linear", values));
    if (step == 4) session.observe(output(step, "fc", "aten::log", bad, {}, true));
    session.end_step(step, 1.0);
  }
  ASSERT_EQ(with_rule(session.findings(), "nonfinite").size(), 1u) << testing::describe(session.findings());
  const auto steps = session.flight_recorder();
  ASSERT_EQ(steps.size(), 7u);
  for (const auto& step : steps) {
    for (const auto& op : step.ops) {
      const std::string where = op.op + " at step " + std::to_string(step.step);
      // The weight's moments: at the first step the weight-scale rule sees, and every 10 steps.
      const bool full = (op.role != Role::output && step.step == 0) || step.step % 3 == 0 || step.step == 5 ||
                        step.step == 6 ||
                        op.op == "aten::log";  // the non-finite output: full statistics, for its counts
      EXPECT_EQ(std::isfinite(op.std), full) << where;  // moments of the finite values
      if (op.op == "aten::linear") {
        EXPECT_EQ(op.count, 4) << where;
        EXPECT_EQ(op.min, -4) << where;
        EXPECT_EQ(op.max, 2) << where;
        EXPECT_EQ(op.abs_max, 4) << where;
        if (full) {
          EXPECT_DOUBLE_EQ(op.mean, -0.125) << where;
        }
      }
      if (op.op == "aten::log") {
        EXPECT_EQ(op.nan, 1) << where;
      }
    }
  }
  RunConfig bad_config;
  bad_config.flight_recorder_moments_every = 0;
  EXPECT_THROW(bad_config.validate(), Error);
}

TEST(FlightRecorder, NamesPastTheLimitAreOther) {
  FlightRecorder recorder(1, 10, 3);  // "<other>", "" and "a"
  const std::vector<float> values = {1};
  recorder.begin_step(0);
  for (const char* name : {"a", "b", "c"}) {
    const Observation o = output(0, "", name, values);
    recorder.record(o, compute_stats(o.value));
  }
  const auto steps = recorder.steps();
  ASSERT_EQ(steps[0].ops.size(), 3u);
  EXPECT_EQ(steps[0].ops[0].module, "");
  EXPECT_EQ(steps[0].ops[0].op, "a");
  EXPECT_EQ(steps[0].ops[1].op, "<other>");
  EXPECT_EQ(steps[0].ops[2].op, "<other>");
  EXPECT_EQ(steps[0].ops[2].module, "");
}

TEST(FlightRecorder, DumpsTheWindowAroundTheFirstError) {
  const auto dir = std::filesystem::temp_directory_path() / "tfdebug_flight_recorder_test";
  std::filesystem::remove_all(dir);
  RunConfig config = testing::quiet_config();
  config.run_dir = dir;
  config.flight_recorder_steps = 4;
  config.flight_recorder_after = 1;
  {
    Session session(config);
    for (std::int64_t step = 0; step < 10; ++step) {
      session.begin_step(step);
      const std::vector<float> v =
          step >= 6 ? std::vector<float>{std::nanf(""), 1} : std::vector<float>{1, 2};
      session.observe(output(step, "blocks.0", "aten::log", v, {}, true));
      if (step == 6) session.observe(output(step, "blocks.0", "aten::mul", v, {}, false));  // propagator
      session.end_step(step, 1.0);
      if (step == 7) {
        // Written at the end of step 6 + 1 and never again.
        EXPECT_TRUE(std::filesystem::exists(dir / "flight_recorder.json"));
      }
    }
    EXPECT_EQ(session.finish().flight_recorder, dir / "flight_recorder.json");
  }
  std::ifstream in(dir / "flight_recorder.json");
  const nlohmann::json doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["trigger"]["rule"], "nonfinite");
  EXPECT_EQ(doc["trigger"]["step"], 6);
  EXPECT_EQ(doc["trigger"]["op"], "aten::log");
  EXPECT_EQ(doc["trigger"]["evidence"]["propagators"], 1);  // counted at the end of step 6
  ASSERT_EQ(doc["steps"].size(), 4u);                       // steps 4..7
  EXPECT_EQ(doc["steps"][0]["step"], 4);
  EXPECT_EQ(doc["steps"][3]["step"], 7);
  const auto& op = doc["steps"][2]["ops"][0];  // step 6
  EXPECT_EQ(op["module"], "blocks.0");
  EXPECT_EQ(op["phase"], "forward");
  EXPECT_EQ(op["role"], "output");
  EXPECT_EQ(op["nan"], 1);
  EXPECT_EQ(op["count"], 2);
  EXPECT_EQ(op["max"], 1.0);
  EXPECT_EQ(doc["steps"][1]["ops"][0]["nan"], 0);
  EXPECT_EQ(doc["steps"][1]["loss"], 1.0);
  std::filesystem::remove_all(dir);
}

TEST(FlightRecorder, DumpedAtFinishWhenTheRunEndsInsideTheWindow) {
  const auto dir = std::filesystem::temp_directory_path() / "tfdebug_flight_recorder_finish_test";
  std::filesystem::remove_all(dir);
  RunConfig config = testing::quiet_config();
  config.run_dir = dir;
  config.flight_recorder_after = 2;
  Session session(config);
  session.begin_step(0);
  session.observe(output(0, "m", "aten::div", {INFINITY}, {}, true));
  session.end_step(0, std::nullopt);
  EXPECT_FALSE(std::filesystem::exists(dir / "flight_recorder.json"));
  session.finish();
  EXPECT_TRUE(std::filesystem::exists(dir / "flight_recorder.json"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tfdebug
