// LIME tabular: the reference's tests (section 2) and the surrogate's own facts. The surrogate
// against sklearn's Ridge is checked in tests/interpret/explain_test.sh.
#include "tfdebug/interpret/lime.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "lime_check.hpp"
#include "test_models.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

std::vector<float> gaussian_rows(std::int64_t rows, const std::vector<double>& stdev, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> out;
  for (std::int64_t r = 0; r < rows; ++r)
    for (const double s : stdev) out.push_back(static_cast<float>(s) * normal(rng));
  return out;
}

TEST(Lime, ALinearModelWithoutBinsGivesWeightsTimesScale) {
  // Without discretisation the interpretable features are standardised values, so the
  // coefficients approach w_i * sigma_i: their signs and ranking are w * sigma's.
  testing::FunctionModel m = testing::linear({1, -2, 0.5, 0}, 0.3);
  LimeOptions o;
  o.training = gaussian_rows(400, {1, 0.5, 4, 2}, 1);
  o.discretize = false;
  o.seed = 2;
  const std::vector<float> x = {0.5f, 0.2f, -1, 1};
  const LimeAttribution a = lime_tabular(m, x, 0, o);
  EXPECT_EQ(a.method, "lime");
  const double expected[] = {1 * 1, -2 * 0.5, 0.5 * 4, 0};
  for (std::size_t j = 0; j < 4; ++j)
    EXPECT_NEAR(a.values[j], expected[j], 0.1 * std::fabs(expected[j]) + 0.02) << j;
  EXPECT_GT(a.r2, 0.999);  // a linear model is fitted exactly, up to the ridge
  EXPECT_NEAR(a.local_prediction, a.output, 0.05);
  EXPECT_EQ(a.evaluations, 5000);
}

TEST(Lime, TheSameSeedGivesTheSameExplanationBitForBit) {
  testing::FunctionModel r = testing::reference_r();
  LimeOptions o;
  o.training = gaussian_rows(200, {1, 1}, 3);
  o.seed = 11;
  o.samples = 800;
  const std::vector<float> x = {1, 2};
  const LimeAttribution a = lime_tabular(r, x, 0, o);
  o.max_batch = 7;  // the batches do not change the draws
  const LimeAttribution b = lime_tabular(r, x, 0, o);
  EXPECT_EQ(a.values, b.values);
  EXPECT_EQ(a.intercept, b.intercept);
  o.seed = 12;
  EXPECT_NE(lime_tabular(r, x, 0, o).values, a.values);
}

TEST(Lime, TheNeighbourhoodStartsAtXAndIsBinary) {
  testing::FunctionModel r = testing::reference_r();
  LimeOptions o;
  o.training = gaussian_rows(100, {1, 1}, 4);
  o.samples = 300;
  o.keep_neighbourhood = true;
  const std::vector<float> x = {1, 2};
  const LimeAttribution a = lime_tabular(r, x, 0, o);
  ASSERT_EQ(a.data.size(), 600U);
  ASSERT_EQ(a.weights.size(), 300U);
  EXPECT_EQ(a.data[0], 1);
  EXPECT_EQ(a.data[1], 1);
  EXPECT_EQ(a.weights[0], 1);
  EXPECT_DOUBLE_EQ(a.outputs[0], 3);  // R(1, 2)
  for (const double v : a.data) EXPECT_TRUE(v == 0 || v == 1);
  // Both features matter here: x2 = 2 is past R's kink, and x1 > 0.
  EXPECT_GT(a.values[0], 0);
  EXPECT_GT(a.values[1], 0);
}

TEST(Lime, TheDiscretisedSurrogateIsSklearnsRidgeAndItsWeightsTheKernelOfTheZeros) {
  // Six features, the default quartile bins: the 0/1 rows are fitted from their ones alone
  // (weighted_ridge over BinaryRows); sklearn's Ridge on the dense rows must agree.
  testing::FunctionModel m(
      6, 1,
      [](const std::vector<double>& v) {
        return std::vector<double>{std::tanh(v[0]) - 2 * v[1] * v[2] + std::max(v[3], 0.0) + 0.5 * v[5]};
      },
      [](const std::vector<double>&, std::int64_t) { return std::vector<double>(6, 0.0); });
  LimeOptions o;
  o.training = gaussian_rows(300, {1, 0.5, 2, 1, 3, 1}, 8);
  o.samples = 2000;
  o.keep_neighbourhood = true;
  const std::vector<float> x = {0.3f, -0.2f, 1.5f, 0.8f, -1.0f, 2.0f};
  const LimeAttribution a = lime_tabular(m, x, 0, o);
  const double width = 0.75 * std::sqrt(6.0);
  for (std::size_t s = 0; s < a.weights.size(); ++s) {
    double zeros = 0;
    for (std::size_t j = 0; j < 6; ++j) zeros += a.data[s * 6 + j] == 0 ? 1 : 0;
    ASSERT_DOUBLE_EQ(a.weights[s], std::exp(-zeros / (2 * width * width))) << s;
  }
  EXPECT_TRUE(testing::sklearn_agrees(a, a.values, "lime_tabular"));
}

TEST(Lime, ABinsValuesAreItsTruncatedNormal) {
  // One feature; every model input in x's bin (interpretable value 1) is a normal of the bin's
  // training mean and std truncated to the bin's [min, max]: inside it, and with the truncated
  // normal's mean mu + sd (phi(lo) - phi(hi)) / (Phi(hi) - Phi(lo)).
  std::vector<float> seen;
  testing::FunctionModel m(
      1, 1,
      [&](const std::vector<double>& v) {
        seen.push_back(static_cast<float>(v[0]));
        return std::vector<double>{v[0]};
      },
      [](const std::vector<double>&, std::int64_t) { return std::vector<double>{1.0}; });
  LimeOptions o;
  // Training values 0, 1, ..., 99 squared / 100: skewed, so the bins' truncations are uneven.
  for (int i = 0; i < 100; ++i) o.training.push_back(static_cast<float>(i * i) / 100.0f);
  o.samples = 40000;
  o.keep_neighbourhood = true;
  const std::vector<float> x = {90.0f};  // the top bin: training values 75^2/100 .. 99^2/100
  const LimeAttribution a = lime_tabular(m, x, 0, o);
  std::vector<double> bin;
  for (int i = 0; i < 100; ++i) {
    const double v = static_cast<float>(i * i) / 100.0f;
    if (i >= 75) bin.push_back(v);  // above the 75th percentile (55.13, numpy's linear interpolation)
  }
  double mu = 0;
  for (const double v : bin) mu += v;
  mu /= static_cast<double>(bin.size());
  double var = 0;
  for (const double v : bin) var += (v - mu) * (v - mu);
  const double sd = std::sqrt(var / static_cast<double>(bin.size())) + 1e-11;
  const double lo = (bin.front() - mu) / sd, hi = (bin.back() - mu) / sd;
  const auto phi = [](double z) { return std::exp(-0.5 * z * z) / std::sqrt(2 * std::acos(-1.0)); };
  const auto cdf = [](double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); };
  const double z_mean = (phi(lo) - phi(hi)) / (cdf(hi) - cdf(lo));
  const double z_var = 1 + (lo * phi(lo) - hi * phi(hi)) / (cdf(hi) - cdf(lo)) - z_mean * z_mean;
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t s = 1; s < a.weights.size(); ++s) {
    if (a.data[s] != 1) continue;
    const double v = seen[s];
    ASSERT_GE(v, static_cast<float>(bin.front()) - 1e-4) << s;
    ASSERT_LE(v, static_cast<float>(bin.back()) + 1e-4) << s;
    sum += v;
    ++count;
  }
  ASSERT_GT(count, 8000U);  // a quarter of the samples
  const double mean = sum / static_cast<double>(count);
  const double se = sd * std::sqrt(z_var / static_cast<double>(count));
  EXPECT_NEAR(mean, mu + sd * z_mean, 4 * se);
}

TEST(Lime, TheSecondThreadChangesNoBit) {
  // LimeOptions::pipeline draws the samples and sums the rows on a second thread: the same
  // explanation, neighbourhood and fit as on one thread, whatever max_batch, with or without bins.
  testing::FunctionModel m(
      5, 2,
      [](const std::vector<double>& v) {
        return std::vector<double>{std::sin(v[0]) * v[1] + v[2] * v[2] - v[4], v[3]};
      },
      [](const std::vector<double>&, std::int64_t) { return std::vector<double>(5, 0.0); });
  LimeOptions o;
  o.training = gaussian_rows(150, {1, 2, 0.5, 1, 3}, 9);
  o.samples = 3001;
  o.seed = 5;
  o.keep_neighbourhood = true;
  const std::vector<float> x = {0.4f, -1.0f, 0.2f, 1.1f, 2.5f};
  for (const bool discretize : {true, false}) {
    o.discretize = discretize;
    o.pipeline = false;
    o.max_batch = 3001;  // one batch, one thread
    const LimeAttribution serial = lime_tabular(m, x, 0, o);
    for (const std::int64_t batch : {1, 7, 256, 3000}) {
      o.max_batch = batch;
      for (const bool pipeline : {true, false}) {
        o.pipeline = pipeline;
        const LimeAttribution a = lime_tabular(m, x, 0, o);
        const std::string where = "discretize " + std::to_string(discretize) + ", max_batch " +
                                  std::to_string(batch) + ", pipeline " + std::to_string(pipeline);
        EXPECT_EQ(a.values, serial.values) << where;
        EXPECT_EQ(a.intercept, serial.intercept) << where;
        EXPECT_EQ(a.r2, serial.r2) << where;
        EXPECT_EQ(a.local_prediction, serial.local_prediction) << where;
        EXPECT_EQ(a.data, serial.data) << where;
        EXPECT_EQ(a.weights, serial.weights) << where;
        EXPECT_EQ(a.outputs, serial.outputs) << where;
        EXPECT_EQ(a.evaluations, 3001) << where;
      }
    }
    EXPECT_GT(serial.r2, 0.0);
  }
}

TEST(Lime, TheBinsOfTheLastTrainingDataAreReusedOnlyForTheSameValues) {
  // Note [The bins of the last training data]: explaining against A, then A2 (A with one value
  // moved, which moves a bin's max and so its draws), then A again on one thread gives what a
  // fresh thread gives for each: the kept bins never stand in for other data.
  testing::FunctionModel m(
      3, 1, [](const std::vector<double>& v) { return std::vector<double>{v[0] * v[1] - std::tanh(v[2])}; },
      [](const std::vector<double>&, std::int64_t) { return std::vector<double>(3, 0.0); });
  LimeOptions a;
  a.training = gaussian_rows(120, {1, 2, 0.5}, 3);
  a.samples = 700;
  a.seed = 2;
  LimeOptions a2 = a;
  a2.training[0] = 40;  // feature 0's top bin now reaches 40
  const std::vector<float> x = {0.3f, -0.5f, 0.1f};
  const LimeAttribution first = lime_tabular(m, x, 0, a);
  const LimeAttribution second = lime_tabular(m, x, 0, a2);
  const LimeAttribution again = lime_tabular(m, x, 0, a);
  LimeAttribution fresh, fresh2;
  std::thread([&] { fresh2 = lime_tabular(m, x, 0, a2); }).join();
  std::thread([&] { fresh = lime_tabular(m, x, 0, a); }).join();
  EXPECT_EQ(first.values, fresh.values);
  EXPECT_EQ(again.values, fresh.values);
  EXPECT_EQ(second.values, fresh2.values);
  EXPECT_EQ(second.intercept, fresh2.intercept);
  EXPECT_NE(second.values, first.values);
}

// f(x) = x0 - x1, failing on its third call.
class FailingModel : public testing::FunctionModel {
 public:
  FailingModel()
      : FunctionModel(
            2, 1, [](const std::vector<double>& v) { return std::vector<double>{v[0] - v[1]}; },
            [](const std::vector<double>&, std::int64_t) {
              return std::vector<double>{1, -1};
            }) {}
  void forward(const TensorView& x, std::span<float> out) override {
    if (calls == 2) throw Error("the model failed at batch 3");
    FunctionModel::forward(x, out);  // counts the call
  }
};

TEST(Lime, AModelThatThrowsAtBatchThreeIsTheCallersError) {
  LimeOptions o;
  o.training = gaussian_rows(100, {1, 1}, 4);
  o.max_batch = 100;
  for (const bool pipeline : {true, false}) {
    o.pipeline = pipeline;
    FailingModel failing;
    try {
      (void)lime_tabular(failing, std::vector<float>{1, 2}, 0, o);
      ADD_FAILURE() << "no exception";
    } catch (const Error& e) {
      EXPECT_STREQ(e.what(), "the model failed at batch 3");
    }
    EXPECT_EQ(failing.calls, 2);  // batches 1 and 2; none after the failure
  }
}

TEST(Lime, BadInputIsAClearError) {
  testing::FunctionModel r = testing::reference_r();
  const std::vector<float> x = {1, 2};
  LimeOptions o;
  EXPECT_THROW(lime_tabular(r, x, 0, o), Error);  // no training data
  o.training = {1, 2, 3};
  EXPECT_THROW(lime_tabular(r, x, 0, o), Error);  // not whole rows
  o.training = {1, 2, 3, 4};
  o.samples = 1;
  EXPECT_THROW(lime_tabular(r, x, 0, o), Error);
}

}  // namespace
}  // namespace tfdebug::interpret
