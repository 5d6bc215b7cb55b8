#include <cmath>
#include <thread>

#include "session_test_util.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/session/probe.hpp"

namespace tfdebug {
namespace {

using testing::with_rule;

TEST(Probe, SplitsNamesAndChecksInputs) {
  Session session(testing::quiet_config());
  Probe probe(session);
  const std::vector<float> x = {-1.0f, 2.0f};
  const std::vector<float> y = {std::log(-1.0f), std::log(2.0f)};  // NaN from finite inputs
  const std::vector<float> z = {y[0] * 2, y[1] * 2};
  const TensorView xv(x.data(), DType::f32, {2});
  const TensorView yv(y.data(), DType::f32, {2});
  const TensorView zv(z.data(), DType::f32, {2});
  probe.begin_step(9);
  probe.observe("blocks.1.log", Phase::forward, yv, {xv});
  probe.observe("blocks.1.scale", Phase::forward, zv, {yv});
  probe.observe("top", Phase::forward, zv, {yv});
  probe.end_step(std::nullopt);
  const auto nonfinite = with_rule(session.findings(), "nonfinite");
  ASSERT_EQ(nonfinite.size(), 1u);
  EXPECT_EQ(nonfinite[0].module, "blocks.1");
  EXPECT_EQ(nonfinite[0].op, "log");
  EXPECT_EQ(nonfinite[0].step, 9);
  EXPECT_EQ(nonfinite[0].evidence_value("propagators"), 2);
  const auto recorded = session.flight_recorder();
  ASSERT_EQ(recorded.size(), 1u);
  ASSERT_EQ(recorded[0].ops.size(), 3u);
  EXPECT_EQ(recorded[0].ops[2].module, "");
  EXPECT_EQ(recorded[0].ops[2].op, "top");
}

TEST(Probe, ParameterRolesAndStop) {
  RunConfig config = testing::quiet_config();
  config.stop_on_error = true;
  config.rules.get<UpdateRatioRule>().warmup = 0;
  Session session(config);
  Probe probe(session);
  const std::vector<float> w = testing::normal(64, 0.0f, 0.125f, 1);
  std::vector<float> u = w;  // update = 2 x weight: ratio 2, reported at once
  for (float& x : u) x *= 2.0f;
  const TensorView wv(w.data(), DType::f32, {8, 8});
  probe.begin_step(0);
  probe.observe_parameter("fc.weight", wv);
  probe.observe_gradient("fc.weight", wv);
  probe.observe_update("fc.weight", TensorView(u.data(), DType::f32, {8, 8}));
  probe.end_step(1.0);
  const auto ratio = with_rule(session.findings(), "update_ratio");
  ASSERT_EQ(ratio.size(), 1u);
  EXPECT_EQ(ratio[0].module, "fc");
  EXPECT_EQ(ratio[0].op, "fc.weight");
  EXPECT_FALSE(probe.diagnosing() && false);

  const std::vector<float> bad = {std::nanf("")};
  probe.begin_step(1);
  probe.observe("fc.log", Phase::forward, TensorView(bad.data(), DType::f32, {1}), std::optional<bool>(true));
  EXPECT_THROW(probe.end_step(std::nullopt), Error);
}

TEST(Probe, DiagnosingAfterAWarning) {
  Session session(testing::quiet_config());
  Probe probe(session);
  const std::vector<float> saturated(8, 1.0f);
  probe.begin_step(0);
  EXPECT_FALSE(probe.diagnosing());
  probe.observe("rnn.tanh", Phase::forward, TensorView(saturated.data(), DType::f32, {8}));
  probe.end_step();
  probe.begin_step(1);
  EXPECT_TRUE(probe.diagnosing());
}

// observe() from several threads at once (as autograd's worker threads do): every observation
// is counted, the one producer is found, and no other rule fires.
TEST(Session, ObserveFromSeveralThreads) {
  Session session(testing::quiet_config());
  constexpr int kThreads = 4;
  constexpr int kPerThread = 500;
  std::vector<std::vector<float>> data;
  for (int t = 0; t < kThreads; ++t) data.push_back(testing::normal(256, 1.0f, 0.1f, std::uint32_t(t)));
  std::vector<float> bad = data[0];
  bad[17] = std::nanf("");
  session.begin_step(0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const std::string module = "layer" + std::to_string(i % 16);
        const bool plant = t == 2 && i == 300;
        const std::vector<float>& values = plant ? bad : data[std::size_t(t)];
        session.observe(Observation{0, Phase::backward, Role::output, module, "aten::mm",
                                    TensorView(values.data(), DType::f32, {16, 16}), true});
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  session.end_step(0, std::nullopt);
  const RunSummary summary = session.finish();
  EXPECT_EQ(summary.observations, kThreads * kPerThread);
  ASSERT_EQ(summary.findings.size(), 1u) << testing::describe(summary.findings);
  EXPECT_EQ(summary.findings[0].module, "layer12");  // 300 % 16
  EXPECT_EQ(summary.findings[0].evidence_value("nan"), 1);
  ASSERT_EQ(session.flight_recorder().size(), 1u);
  EXPECT_EQ(session.flight_recorder()[0].ops.size() + std::size_t(session.flight_recorder()[0].dropped_ops),
            std::size_t(kThreads * kPerThread));
}

}  // namespace
}  // namespace tfdebug
