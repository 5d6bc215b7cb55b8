// Sink::on_step: every number of StepMetrics against values computed by hand from the tensors a
// Probe hands the Session.
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>

#include "session_test_util.hpp"
#include "tfdebug/core/histogram.hpp"
#include "tfdebug/session/probe.hpp"

namespace tfdebug {
namespace {

class RecordingSink : public Sink {
 public:
  explicit RecordingSink(bool histograms) : histograms_(histograms) {}
  // The tests read what it recorded right after each step.
  Delivery delivery() const noexcept override { return Delivery::synchronous; }
  void on_finding(const Finding& f) override { findings.push_back(f); }
  void on_run_end(const RunSummary& s) override { summary = s; }
  void on_step(const StepMetrics& m) override { steps.push_back(m); }
  bool wants_step_metrics() const noexcept override { return true; }
  bool wants_histograms() const noexcept override { return histograms_; }

  std::vector<Finding> findings;
  std::vector<StepMetrics> steps;
  std::optional<RunSummary> summary;

 private:
  bool histograms_;
};

// A Session of `config` with a RecordingSink and a Probe.
struct Recorded {
  Recorded(const RunConfig& config, bool histograms)
      : session(config), sink(std::make_shared<RecordingSink>(histograms)), probe(session) {
    session.add_sink(sink);
  }
  Session session;
  std::shared_ptr<RecordingSink> sink;
  Probe probe;
};

RunConfig histograms_every(int every) {
  RunConfig config = testing::quiet_config();
  config.metrics.histogram_every = every;
  return config;
}

const ModuleMetrics& module(const StepMetrics& m, const std::string& name) {
  const auto it = std::find_if(m.modules.begin(), m.modules.end(),
                               [&](const ModuleMetrics& x) { return x.module == name; });
  if (it == m.modules.end()) throw std::runtime_error("no module " + name);
  return *it;
}

// Index of the TensorFlow bucket of v, from the limits alone: limit[i-1] <= v < limit[i].
std::size_t bucket_of(double v) {
  const std::vector<double>& limits = tensorflow_bucket_limits();
  return std::size_t(std::upper_bound(limits.begin(), limits.end(), v) - limits.begin());
}

struct Tensors {
  // fc1: weight [1, 2], bias [1]; fc2: two weight matrices [2, 2]
  std::vector<float> w1 = {3, 4}, b1 = {1}, gw1 = {3, 4}, gb1 = {12}, uw1 = {0.3f, 0.4f}, ub1 = {5};
  std::vector<float> a = {1, 0, 0, 0}, b = {0, 2, 0, 0}, ua = {0.1f, 0, 0, 0}, ub = {0, 0, 0.4f, 0};
  std::vector<float> relu = {0, 1, 0, 2, 0, 3, 0, 0};
  std::vector<float> linear = {-1, 1, -2, 2, -3, 3, -0.5f, -5};
  std::vector<float> bad = {std::numeric_limits<float>::quiet_NaN(), 1};

  static TensorView v(const std::vector<float>& x, std::initializer_list<std::int64_t> shape) {
    return TensorView(x.data(), DType::f32, shape);
  }
  void step(Probe& probe, std::int64_t step, double loss) const {
    probe.begin_step(step);
    probe.observe_parameter("fc1.weight", v(w1, {1, 2}));
    probe.observe_parameter("fc1.bias", v(b1, {1}));
    probe.observe_parameter("fc2.a", v(a, {2, 2}));
    probe.observe_parameter("fc2.b", v(b, {2, 2}));
    probe.observe("fc1.linear", Phase::forward, v(linear, {2, 4}));
    probe.observe("fc1.relu", Phase::forward, v(relu, {2, 4}));
    probe.observe("fc2.log", Phase::forward, v(bad, {2}));
    probe.observe("fc1.relu_backward", Phase::backward, v(relu, {2, 4}));  // not an activation
    probe.observe_gradient("fc1.weight", v(gw1, {1, 2}));
    probe.observe_gradient("fc1.bias", v(gb1, {1}));
    probe.observe_update("fc1.weight", v(uw1, {1, 2}));
    probe.observe_update("fc1.bias", v(ub1, {1}));  // rank 1: not in the ratio
    probe.observe_update("fc2.a", v(ua, {2, 2}));
    probe.observe_update("fc2.b", v(ub, {2, 2}));
    probe.end_step(loss);
  }
};

TEST(StepMetrics, HandComputedValues) {
  Session session(testing::quiet_config());
  auto sink = std::make_shared<RecordingSink>(false);
  session.add_sink(sink);
  Probe probe(session);
  const Tensors t;
  t.step(probe, 0, 2.5);
  ASSERT_EQ(sink->steps.size(), 1u);
  const StepMetrics& m = sink->steps[0];
  EXPECT_EQ(m.step, 0);
  EXPECT_EQ(m.loss, 2.5);
  ASSERT_EQ(m.modules.size(), 2u);  // sorted: fc1, fc2
  EXPECT_EQ(m.modules[0].module, "fc1");
  EXPECT_EQ(m.modules[1].module, "fc2");

  const ModuleMetrics& fc1 = module(m, "fc1");
  // sqrt(3^2 + 4^2 + 12^2) = 13
  ASSERT_TRUE(fc1.grad_norm);
  EXPECT_DOUBLE_EQ(*fc1.grad_norm, 13.0);
  // ||(0.3, 0.4)|| / ||(3, 4)|| = 0.5 / 5 (float inputs: 0.3f, 0.4f)
  ASSERT_TRUE(fc1.update_ratio);
  EXPECT_NEAR(*fc1.update_ratio, 0.1, 1e-7);
  ASSERT_TRUE(fc1.activations);
  const ActivationSummary& act = *fc1.activations;
  EXPECT_EQ(act.outputs, 2);  // linear and relu; the backward output is not an activation
  EXPECT_EQ(act.values, 16);
  EXPECT_EQ(act.nonfinite, 0);
  EXPECT_EQ(act.zeros, 5);
  EXPECT_DOUBLE_EQ(act.zero_fraction(), 5.0 / 16.0);
  EXPECT_DOUBLE_EQ(act.abs_max, 5.0);
  // relu: units 0 and 2 are 0 in both rows (2 of 4); linear: none
  ASSERT_TRUE(act.dead_fraction);
  EXPECT_DOUBLE_EQ(*act.dead_fraction, 0.5);

  const ModuleMetrics& fc2 = module(m, "fc2");
  EXPECT_FALSE(fc2.grad_norm);  // no gradient observed
  // sqrt((0.1^2 + 0.4^2) / (1^2 + 2^2)) = sqrt(0.17 / 5)
  ASSERT_TRUE(fc2.update_ratio);
  EXPECT_NEAR(*fc2.update_ratio, std::sqrt(0.17 / 5.0), 1e-7);
  ASSERT_TRUE(fc2.activations);
  EXPECT_EQ(fc2.activations->nonfinite, 1);
  EXPECT_EQ(fc2.activations->values, 2);
  EXPECT_DOUBLE_EQ(fc2.activations->abs_max, 1.0);
  EXPECT_FALSE(fc2.activations->dead_fraction);  // rank 1: the dead-units rule does not measure it

  EXPECT_TRUE(m.weights.empty());  // no sink wants histograms
  EXPECT_TRUE(m.activations.empty());
}

TEST(StepMetrics, NonFiniteGradientMakesTheNormNaN) {
  Session session(testing::quiet_config());
  auto sink = std::make_shared<RecordingSink>(false);
  session.add_sink(sink);
  Probe probe(session);
  const std::vector<float> g = {1, std::numeric_limits<float>::infinity()};
  probe.begin_step(3);
  probe.observe_gradient("fc.weight", TensorView(g.data(), DType::f32, {1, 2}));
  probe.end_step();
  ASSERT_EQ(sink->steps.size(), 1u);
  EXPECT_FALSE(sink->steps[0].loss);
  ASSERT_TRUE(module(sink->steps[0], "fc").grad_norm);
  EXPECT_TRUE(std::isnan(*module(sink->steps[0], "fc").grad_norm));
}

// Steps that observe the tensors only now and then (watch's samples): the first of them in each
// run of histogram_every steps gets the histograms.
TEST(StepMetrics, HistogramsOnTheFirstObservingStepOfEachRun) {
  Recorded run(histograms_every(10), /*histograms=*/true);
  auto& [session, sink, probe] = run;
  const Tensors t;
  const std::vector<std::int64_t> steps{0, 7, 13, 17, 25, 41, 44};
  for (const std::int64_t step : steps) t.step(probe, step, 1.0);
  ASSERT_EQ(sink->steps.size(), steps.size());
  std::vector<std::int64_t> with_histograms;
  for (const StepMetrics& m : sink->steps) {
    if (m.weights.empty()) {
      EXPECT_TRUE(m.activations.empty()) << m.step;
      continue;
    }
    EXPECT_EQ(m.weights.size(), 4u) << m.step;
    EXPECT_EQ(m.activations.size(), 2u) << m.step;
    with_histograms.push_back(m.step);
  }
  EXPECT_EQ(with_histograms, (std::vector<std::int64_t>{0, 13, 25, 41}));
}

TEST(StepMetrics, HistogramsOnHistogramSteps) {
  Recorded run(histograms_every(2), /*histograms=*/true);
  auto& [session, sink, probe] = run;
  const Tensors t;
  for (std::int64_t step = 0; step < 3; ++step) t.step(probe, step, 1.0);
  ASSERT_EQ(sink->steps.size(), 3u);
  EXPECT_TRUE(sink->steps[1].weights.empty());
  EXPECT_TRUE(sink->steps[1].activations.empty());
  for (const std::int64_t step : {0, 2}) {
    const StepMetrics& m = sink->steps[std::size_t(step)];
    ASSERT_EQ(m.weights.size(), 4u);  // sorted by name
    EXPECT_EQ(m.weights[0].name, "fc1.bias");
    const HistogramSnapshot& w = m.weights[1];
    EXPECT_EQ(w.name, "fc1.weight");
    ASSERT_EQ(w.counts.size(), tensorflow_bucket_limits().size());
    EXPECT_EQ(w.count, 2);
    EXPECT_EQ(w.min, 3);
    EXPECT_EQ(w.max, 4);
    EXPECT_DOUBLE_EQ(w.sum, 7);
    EXPECT_DOUBLE_EQ(w.sum_squares, 25);
    std::vector<std::int64_t> expected(w.counts.size(), 0);
    ++expected[bucket_of(3)];
    ++expected[bucket_of(4)];
    EXPECT_EQ(w.counts, expected);

    // fc1's two forward outputs in one histogram; fc2's NaN is not binned.
    ASSERT_EQ(m.activations.size(), 2u);
    const HistogramSnapshot& a = m.activations[0];
    EXPECT_EQ(a.name, "fc1");
    EXPECT_EQ(a.count, 16);
    EXPECT_EQ(a.min, -5);
    EXPECT_EQ(a.max, 3);
    double sum = 0, squares = 0;
    std::fill(expected.begin(), expected.end(), 0);
    for (const auto* values : {&t.linear, &t.relu}) {
      for (const float x : *values) {
        sum += x;
        squares += double(x) * x;
        ++expected[bucket_of(x)];
      }
    }
    EXPECT_DOUBLE_EQ(a.sum, sum);
    EXPECT_DOUBLE_EQ(a.sum_squares, squares);
    EXPECT_EQ(a.counts, expected);
    const HistogramSnapshot& nan = m.activations[1];
    EXPECT_EQ(nan.name, "fc2");
    EXPECT_EQ(nan.count, 1);
    std::int64_t binned = 0;
    for (const std::int64_t c : nan.counts) binned += c;
    EXPECT_EQ(binned, 1);
    EXPECT_EQ(m.dropped_histograms, 0);
  }
}

// The metrics take their values from the measurement the rules read: on steps between the
// full-statistics steps a forward output's zeros come from compute_range_zeros, a norm from
// compute_range_l2. They equal the metrics of the same tensors measured with the full statistics
// on every step, and values computed afresh from the tensors.
TEST(StepMetrics, LightMeasurementsEqualTheFullStatistics) {
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::bernoulli_distribution coin(0.5);
  auto random = [&](std::size_t n, bool relu) {
    std::vector<float> v(n);
    for (auto& x : v) {
      x = normal(rng);
      if (relu) x = coin(rng) ? std::max(x, 0.0f) : -std::max(x, 0.0f);  // +0 and -0
    }
    return v;
  };
  struct Step {
    std::vector<float> linear, relu, weight, bias, grad, update;
  };
  std::vector<Step> steps;
  for (int i = 0; i < 4; ++i)
    steps.push_back({random(33 * 64, false), random(33 * 64, true), random(64 * 32, false), random(32, false),
                     random(64 * 32, false), random(64 * 32, false)});
  // The full statistics of that output, and of everything after the error (the flight recorder's).
  steps[3].relu[100] = std::numeric_limits<float>::infinity();
  auto run = [&](int moments_every) {
    RunConfig config = testing::quiet_config();
    config.tier = Tier::diagnose;
    config.flight_recorder_moments_every = moments_every;
    Recorded recorded(config, /*histograms=*/false);
    auto& [session, sink, probe] = recorded;
    for (std::size_t i = 0; i < steps.size(); ++i) {
      const Step& t = steps[i];
      probe.begin_step(std::int64_t(i) + 1);  // not a multiple of 10
      probe.observe_parameter("fc.weight", Tensors::v(t.weight, {64, 32}));
      probe.observe_parameter("fc.bias", Tensors::v(t.bias, {32}));
      probe.observe("fc.linear", Phase::forward, Tensors::v(t.linear, {33, 64}));
      probe.observe("fc.relu", Phase::forward, Tensors::v(t.relu, {33, 64}));
      probe.observe("head.linear", Phase::forward, Tensors::v(t.linear, {33, 64}));
      probe.observe_gradient("fc.weight", Tensors::v(t.grad, {64, 32}));
      probe.observe_gradient("fc.bias", Tensors::v(t.bias, {32}));
      probe.observe_update("fc.weight", Tensors::v(t.update, {64, 32}));
      probe.end_step(1.0);
    }
    return sink->steps;
  };
  const std::vector<StepMetrics> light = run(10);
  const std::vector<StepMetrics> full = run(1);
  ASSERT_EQ(light.size(), steps.size());
  ASSERT_EQ(full.size(), steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i + 1));
    const Step& t = steps[i];
    ASSERT_EQ(light[i].modules.size(), 2u);  // fc, head
    ASSERT_EQ(full[i].modules.size(), 2u);
    for (std::size_t k = 0; k < 2; ++k) {
      const ModuleMetrics& a = light[i].modules[k];
      const ModuleMetrics& b = full[i].modules[k];
      EXPECT_EQ(a.module, b.module);
      ASSERT_TRUE(a.activations && b.activations);
      EXPECT_EQ(a.activations->outputs, b.activations->outputs);
      EXPECT_EQ(a.activations->values, b.activations->values);
      EXPECT_EQ(a.activations->nonfinite, b.activations->nonfinite);
      EXPECT_EQ(a.activations->zeros, b.activations->zeros);
      EXPECT_EQ(a.activations->abs_max, b.activations->abs_max);
      EXPECT_EQ(a.activations->dead_fraction, b.activations->dead_fraction);
      ASSERT_EQ(a.grad_norm.has_value(), b.grad_norm.has_value());
      ASSERT_EQ(a.update_ratio.has_value(), b.update_ratio.has_value());
      // The full statistics sum squares in f32 blocks, compute_range_l2 in f64.
      if (a.grad_norm) {
        EXPECT_NEAR(*a.grad_norm, *b.grad_norm, 1e-7 * *b.grad_norm);
      }
      if (a.update_ratio) {
        EXPECT_NEAR(*a.update_ratio, *b.update_ratio, 1e-7 * *b.update_ratio);
      }
    }
    // Afresh from the tensors: fc's two outputs.
    const ActivationSummary& fc = *module(light[i], "fc").activations;
    const Stats linear = compute_stats(Tensors::v(t.linear, {33, 64}));
    const Stats relu = compute_stats(Tensors::v(t.relu, {33, 64}));
    std::int64_t zeros = 0;
    for (const auto* values : {&t.linear, &t.relu})
      zeros += std::count_if(values->begin(), values->end(), [](float x) { return x == 0; });
    EXPECT_GT(zeros, 1000);
    EXPECT_EQ(fc.zeros, zeros);
    EXPECT_EQ(fc.zeros, linear.zero + relu.zero);
    EXPECT_EQ(fc.values, 2 * 33 * 64);
    EXPECT_EQ(fc.nonfinite, i == 3 ? 1 : 0);
    EXPECT_EQ(fc.abs_max, std::max(linear.abs_max, relu.abs_max));  // of the finite values
    double squares = 0;
    for (const auto* values : {&t.grad, &t.bias})
      for (const float x : *values) squares += double(x) * double(x);
    const double tolerance = i == 3 ? 1e-7 : 1e-12;  // f64 squares before the error
    EXPECT_NEAR(*module(light[i], "fc").grad_norm, std::sqrt(squares), tolerance * std::sqrt(squares));
  }
}

TEST(StepMetrics, HistogramCapIsCounted) {
  RunConfig config = testing::quiet_config();
  config.metrics.max_histograms = 3;
  Recorded run(config, /*histograms=*/true);
  auto& [session, sink, probe] = run;
  Tensors().step(probe, 0, 1.0);
  const StepMetrics& m = sink->steps.at(0);
  EXPECT_EQ(m.weights.size() + m.activations.size(), 3u);  // the first three names observed
  EXPECT_EQ(m.dropped_histograms, 3);                      // 4 weights + 2 modules - 3
}

class ThrowingSink : public Sink {
 public:
  void on_finding(const Finding&) override {}
  void on_run_end(const RunSummary&) override {}
  void on_step(const StepMetrics&) override { throw std::runtime_error("disk full"); }
  bool wants_step_metrics() const noexcept override { return true; }
};

TEST(StepMetrics, ASinkThatThrowsDoesNotStopTheRun) {
  Session session(testing::quiet_config());
  session.add_sink(std::make_shared<ThrowingSink>());
  auto sink = std::make_shared<RecordingSink>(false);
  session.add_sink(sink);
  Probe probe(session);
  Tensors t;
  EXPECT_NO_THROW(t.step(probe, 0, 1.0));
  EXPECT_EQ(sink->steps.size(), 1u);
  const RunSummary summary = session.finish();
  ASSERT_EQ(summary.hook_errors.size(), 1u);
  EXPECT_EQ(summary.hook_errors[0], "sink: disk full");
}

TEST(StepMetrics, ConfigEntriesUseTheFileKeys) {
  RunConfig config;
  config.metrics.histogram_every = 25;
  config.rules.get<LossRule>().spike_factor = 12.5;
  const auto entries = config.entries();
  auto value = [&](const std::string& key) {
    for (const auto& [k, v] : entries) {
      if (k == key) return v;
    }
    return std::string("<missing>");
  };
  EXPECT_TRUE(std::is_sorted(entries.begin(), entries.end()));
  EXPECT_EQ(value("metrics.histogram_every"), "25");
  EXPECT_EQ(value("metrics.max_histograms"), "256");
  EXPECT_EQ(value("rules.loss.spike_factor"), "12.5");
  EXPECT_EQ(value("rules.update_ratio.min_ratio"), "1e-05");
  EXPECT_EQ(value("tier"), "watch");
  EXPECT_EQ(value("target_dtype"), "none");
  EXPECT_EQ(value("rules.spectral.enabled"), "true");
}

}  // namespace
}  // namespace tfdebug
