// Grad-CAM, Grad-CAM++ and Score-CAM (tfdebug/interpret/cam.hpp) against values worked out by
// hand on layer models whose activations and head are written down here, and the resizing's
// golden values from PyTorch's interpolate(align_corners=False).
#include "tfdebug/interpret/cam.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

// A [L] model from three functions of double vectors: the layer A(x), the head y(A), and the
// head's gradient dy_t/dA. Records the largest batch and whether the gradient was asked for.
class FunctionLayerModel : public LayerModel {
 public:
  using Layer = std::function<std::vector<double>(const std::vector<double>&)>;
  using Head = std::function<std::vector<double>(const std::vector<double>&)>;
  using HeadGradient = std::function<std::vector<double>(const std::vector<double>&, std::int64_t)>;

  FunctionLayerModel(std::vector<std::int64_t> input_shape, std::vector<std::int64_t> layer_shape,
                     std::int64_t outputs, Layer layer, Head head, HeadGradient head_gradient)
      : input_shape_(std::move(input_shape)),
        layer_shape_(std::move(layer_shape)),
        outputs_(outputs),
        layer_(std::move(layer)),
        head_(std::move(head)),
        head_gradient_(std::move(head_gradient)) {}

  std::vector<std::int64_t> input_shape() const override { return input_shape_; }
  std::int64_t output_size() const override { return outputs_; }
  std::string layer() const override { return "test"; }
  std::vector<std::int64_t> layer_shape() const override { return layer_shape_; }

  void forward(const TensorView& x, std::span<float> out) override {
    note(x.shape(0));
    for (std::int64_t i = 0; i < x.shape(0); ++i) {
      const std::vector<double> y = head_(layer_(row(x, i)));
      for (std::int64_t k = 0; k < outputs_; ++k)
        out[static_cast<std::size_t>(i * outputs_ + k)] = static_cast<float>(y[static_cast<std::size_t>(k)]);
    }
  }
  void activations(const TensorView& x, std::span<float> a) override {
    note(x.shape(0));
    const std::int64_t m = layer_size(*this);
    for (std::int64_t i = 0; i < x.shape(0); ++i) {
      const std::vector<double> layer = layer_(row(x, i));
      for (std::int64_t j = 0; j < m; ++j)
        a[static_cast<std::size_t>(i * m + j)] = static_cast<float>(layer[static_cast<std::size_t>(j)]);
    }
  }
  void layer_gradient(const TensorView& x, std::int64_t target, std::span<float> scores, std::span<float> a,
                      std::span<float> g) override {
    if (gradient_throws) throw std::logic_error("no backward for this model");
    note(x.shape(0));
    const std::int64_t m = layer_size(*this);
    for (std::int64_t i = 0; i < x.shape(0); ++i) {
      const std::vector<double> layer = layer_(row(x, i));
      scores[static_cast<std::size_t>(i)] =
          static_cast<float>(head_(layer)[static_cast<std::size_t>(target)]);
      const std::vector<double> grad = head_gradient_(layer, target);
      for (std::int64_t j = 0; j < m; ++j) {
        a[static_cast<std::size_t>(i * m + j)] = static_cast<float>(layer[static_cast<std::size_t>(j)]);
        g[static_cast<std::size_t>(i * m + j)] = static_cast<float>(grad[static_cast<std::size_t>(j)]);
      }
    }
  }

  bool gradient_throws = false;
  std::int64_t largest_batch = 0;

 private:
  std::vector<double> row(const TensorView& x, std::int64_t i) const {
    const std::int64_t n = example_size(*this);
    const auto* p = static_cast<const float*>(x.data()) + i * n;
    return {p, p + n};
  }
  void note(std::int64_t n) { largest_batch = std::max(largest_batch, n); }

  std::vector<std::int64_t> input_shape_, layer_shape_;
  std::int64_t outputs_;
  Layer layer_;
  Head head_;
  HeadGradient head_gradient_;
};

// The layer is the input itself ([channels, h, w]); the head is global average pooling and a
// linear map: y_c = sum_k w[c][k] mean(A^k) + b[c]. Its gradient is w[c][k] / (h w) everywhere.
FunctionLayerModel gap_linear(std::vector<std::int64_t> shape, std::vector<std::vector<double>> w,
                              std::vector<double> b) {
  const std::int64_t channels = shape[0];
  const std::int64_t area = shape[1] * shape[2];
  const auto outputs = static_cast<std::int64_t>(w.size());
  return FunctionLayerModel(
      shape, shape, outputs, [](const std::vector<double>& x) { return x; },
      [=](const std::vector<double>& a) {
        std::vector<double> y(b);
        for (std::int64_t c = 0; c < outputs; ++c) {
          for (std::int64_t k = 0; k < channels; ++k) {
            double mean = 0;
            for (std::int64_t j = 0; j < area; ++j) mean += a[static_cast<std::size_t>(k * area + j)];
            y[static_cast<std::size_t>(c)] += w[static_cast<std::size_t>(c)][static_cast<std::size_t>(k)] *
                                              mean / static_cast<double>(area);
          }
        }
        return y;
      },
      [=](const std::vector<double>&, std::int64_t t) {
        std::vector<double> g(static_cast<std::size_t>(channels * area));
        for (std::int64_t k = 0; k < channels; ++k) {
          for (std::int64_t j = 0; j < area; ++j)
            g[static_cast<std::size_t>(k * area + j)] =
                w[static_cast<std::size_t>(t)][static_cast<std::size_t>(k)] / static_cast<double>(area);
        }
        return g;
      });
}

// Two channels of 2 x 2: A^0 = [[1, 2], [3, 4]], A^1 = [[0, 1], [0, 1]].
const std::vector<float> kTwoChannels = {1, 2, 3, 4, 0, 1, 0, 1};

void expect_values(const std::vector<double>& got, const std::vector<double>& want, double tolerance) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tolerance) << "value " << i;
}

TEST(GradCam, GapLinearHeadGivesCamOverZ) {
  // Output 1 weighs the channels (2, -4); Z = 4. alpha = (0.5, -1), and the map is
  // relu(0.5 A^0 - A^1) = (2 A^0 - 4 A^1) / 4 = CAM / Z.
  auto model = gap_linear({2, 2, 2}, {{1, 1}, {2, -4}}, {0, 0.5});
  const CamAttribution cam = grad_cam(model, kTwoChannels, 1);
  EXPECT_EQ(cam.method, "grad-cam");
  expect_values(cam.channel_weights, {0.5, -1}, 1e-7);
  EXPECT_EQ(cam.layer_shape, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(cam.shape, (std::vector<std::int64_t>{2, 2}));
  expect_values(cam.layer_values, {0.5, 0, 1.5, 1}, 1e-7);
  expect_values(cam.values, {0.5, 0, 1.5, 1}, 1e-7);
  // y_1 = 2 * 2.5 - 4 * 0.5 + 0.5
  EXPECT_NEAR(cam.output, 3.5, 1e-6);
  EXPECT_TRUE(std::isnan(cam.delta));
  EXPECT_EQ(cam.evaluations, 1);
}

TEST(GradCam, SignedMapKeepsTheNegativeEvidence) {
  // Output 1 with weights (1, -8): alpha = (0.25, -2); 0.25 A^0 - 2 A^1 = [[0.25, -1.5], [0.75, -1]].
  auto model = gap_linear({2, 2, 2}, {{1, -8}}, {0});
  expect_values(grad_cam(model, kTwoChannels, 0, {.relu = false}).layer_values, {0.25, -1.5, 0.75, -1}, 1e-7);
  expect_values(grad_cam(model, kTwoChannels, 0).layer_values, {0.25, 0, 0.75, 0}, 1e-7);
}

TEST(GradCam, ResizesTheLayerMapToTheInput) {
  // The layer is the 2 x 2 average pooling of a [1, 4, 4] input; one channel, a positive head.
  const auto pool = [](const std::vector<double>& x) {
    std::vector<double> a(4, 0.0);
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c)
        a[static_cast<std::size_t>((r / 2) * 2 + c / 2)] += x[static_cast<std::size_t>(r * 4 + c)] / 4;
    return a;
  };
  FunctionLayerModel model(
      {1, 4, 4}, {1, 2, 2}, 1, pool,
      [](const std::vector<double>& a) { return std::vector<double>{a[0] + a[1] + a[2] + a[3]}; },
      [](const std::vector<double>&, std::int64_t) { return std::vector<double>(4, 4.0); });
  std::vector<float> x(16);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c)
      x[static_cast<std::size_t>(r * 4 + c)] = static_cast<float>((r / 2) * 2 + c / 2);
  const CamAttribution cam = grad_cam(model, x, 0);
  EXPECT_EQ(cam.shape, (std::vector<std::int64_t>{4, 4}));
  expect_values(cam.layer_values, {0, 4, 8, 12}, 1e-6);
  // 4 x [[0, 1], [2, 3]] resized as PyTorch does (see ResizeLinear.MatchesPyTorch).
  expect_values(cam.values, {0, 1, 3, 4, 2, 3, 5, 6, 6, 7, 9, 10, 8, 9, 11, 12}, 1e-6);
}

TEST(GradCamPlusPlus, GapLinearHeadHasConstantAlpha) {
  // g is w_k / Z, constant over space, so alpha = g^2 / (2 g^2 + sum(A) g^3 + 1e-6), about
  // 1 / (2 + g sum(A)), the same at every position: w_k = Z alpha relu(g).
  // Channel 0: g = 0.5, sum(A) = 10, alpha ~ 1/7, w_0 ~ 4 * 0.5 / 7 = 2/7. Channel 1: g = -1 < 0, w_1 = 0.
  auto model = gap_linear({2, 2, 2}, {{2, -4}}, {0});
  const CamAttribution cam = grad_cam_plus_plus(model, kTwoChannels, 0);
  EXPECT_EQ(cam.method, "grad-cam-plus-plus");
  const double alpha = 0.25 / (2 * 0.25 + 10 * 0.125 + 1e-6);
  EXPECT_NEAR(cam.channel_weights[0], 4 * alpha * 0.5, 1e-12);
  EXPECT_NEAR(cam.channel_weights[0], 2.0 / 7.0, 1e-6);
  EXPECT_EQ(cam.channel_weights[1], 0);
  const double w0 = cam.channel_weights[0];
  expect_values(cam.layer_values, {w0 * 1, w0 * 2, w0 * 3, w0 * 4}, 1e-12);
}

TEST(GradCamPlusPlus, WeightsAreNonNegativeAndOneChannelGivesReluOfA) {
  // One channel of signed activations under a head with a varying positive gradient
  // y = sum_j v_j A_j + 0.1 sum_j A_j^2: w > 0, and the map is w relu(A).
  const std::vector<double> v = {1, 2, 0.5, 3, 1, 1.5};
  FunctionLayerModel model(
      {1, 2, 3}, {1, 2, 3}, 1, [](const std::vector<double>& x) { return x; },
      [v](const std::vector<double>& a) {
        double y = 0;
        for (std::size_t j = 0; j < a.size(); ++j) y += v[j] * a[j] + 0.1 * a[j] * a[j];
        return std::vector<double>{y};
      },
      [v](const std::vector<double>& a, std::int64_t) {
        std::vector<double> g(a.size());
        for (std::size_t j = 0; j < a.size(); ++j) g[j] = v[j] + 0.2 * a[j];
        return g;
      });
  const std::vector<float> x = {1, -2, 3, -0.5, 2, 0};
  const CamAttribution cam = grad_cam_plus_plus(model, x, 0);
  ASSERT_EQ(cam.channel_weights.size(), 1u);
  const double w = cam.channel_weights[0];
  EXPECT_GT(w, 0);
  for (std::size_t j = 0; j < x.size(); ++j)
    EXPECT_NEAR(cam.layer_values[j], w * std::max(0.0f, x[j]), 1e-12);

  // Many channels of non-negative activations, a head with gradients of both signs: every
  // weight >= 0, and the channel with a negative gradient weighs 0.
  auto gap = gap_linear({3, 2, 2}, {{1.5, -2, 0.25}}, {0});
  const std::vector<float> relu_a = {0, 1, 2, 3, 4, 0, 1, 0, 0.5, 0.5, 0, 2};
  const CamAttribution many = grad_cam_plus_plus(gap, relu_a, 0);
  for (const double weight : many.channel_weights) EXPECT_GE(weight, 0);
  EXPECT_EQ(many.channel_weights[1], 0);
  EXPECT_GT(many.channel_weights[2], 0);
}

TEST(ScoreCam, ScoresTheMaskedInputsAndTakesTheirSoftmax) {
  // H_0 = (A^0 - 1) / 3 = [[0, 1/3], [2/3, 1]]; x * H_0 has channel means 5/3 and 1/3, so
  // s_0 = 2 * 5/3 - 4 * 1/3 = 2. H_1 = A^1: means 1.5 and 0.5, s_1 = 3 - 2 = 1.
  // Softmax: (e^2, e) / (e^2 + e) = (0.7310586, 0.2689414).
  auto model = gap_linear({2, 2, 2}, {{2, -4}}, {0});
  const CamAttribution cam = score_cam(model, kTwoChannels, 0);
  EXPECT_EQ(cam.method, "score-cam");
  expect_values(cam.channel_scores, {2, 1}, 1e-6);
  const double p = std::exp(2.0) / (std::exp(2.0) + std::exp(1.0));
  expect_values(cam.channel_weights, {p, 1 - p}, 1e-6);
  expect_values(cam.layer_values, {p * 1, p * 2 + (1 - p), p * 3, p * 4 + (1 - p)}, 1e-6);
  EXPECT_NEAR(cam.output, 2 * 2.5 - 4 * 0.5, 1e-6);
  EXPECT_TRUE(cam.skipped_channels.empty());
  EXPECT_EQ(cam.evaluations, 1 + 1 + 2);  // activations, f(x), two masked inputs

  const CamAttribution raw = score_cam(model, kTwoChannels, 0, {.weights = ScoreCamWeights::raw});
  expect_values(raw.channel_weights, {2, 1}, 1e-6);
  expect_values(raw.layer_values, {2, 5, 6, 9}, 1e-5);
}

TEST(ScoreCam, SkipsConstantChannelsWithoutNaN) {
  // Channel 1 is 3 everywhere: it has no mask (0/0 in pytorch-grad-cam before #173).
  auto model = gap_linear({3, 2, 2}, {{1, 1, 1}}, {0});
  const std::vector<float> x = {1, 2, 3, 4, 3, 3, 3, 3, 0, 1, 0, 1};
  const CamAttribution cam = score_cam(model, x, 0);
  EXPECT_EQ(cam.skipped_channels, (std::vector<std::int64_t>{1}));
  EXPECT_TRUE(std::isnan(cam.channel_scores[1]));
  EXPECT_EQ(cam.channel_weights[1], 0);
  EXPECT_NEAR(cam.channel_weights[0] + cam.channel_weights[2], 1, 1e-12);
  for (const double v : cam.values) EXPECT_TRUE(std::isfinite(v));
  EXPECT_EQ(cam.evaluations, 1 + 1 + 2);

  // Every channel constant: nothing to weigh, a zero map.
  const std::vector<float> flat = {1, 1, 1, 1, 3, 3, 3, 3, 0, 0, 0, 0};
  const CamAttribution none = score_cam(model, flat, 0);
  EXPECT_EQ(none.skipped_channels.size(), 3u);
  expect_values(none.values, {0, 0, 0, 0}, 0);
}

TEST(ScoreCam, OneChannelGivesAMapProportionalToA) {
  // The layer: 2 x 2 average pooling of a [1, 4, 4] image; the head: its sum.
  const auto pool = [](const std::vector<double>& x) {
    std::vector<double> a(4, 0.0);
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c)
        a[static_cast<std::size_t>((r / 2) * 2 + c / 2)] += x[static_cast<std::size_t>(r * 4 + c)] / 4;
    return a;
  };
  FunctionLayerModel model(
      {1, 4, 4}, {1, 2, 2}, 1, pool,
      [](const std::vector<double>& a) { return std::vector<double>{a[0] + a[1] + a[2] + a[3]}; },
      [](const std::vector<double>&, std::int64_t) { return std::vector<double>(4, 4.0); });
  model.gradient_throws = true;  // Score-CAM never asks for it
  std::vector<float> x(16);
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = static_cast<float>(j % 5);
  const CamAttribution cam = score_cam(model, x, 0);
  const std::vector<double> a = pool({x.begin(), x.end()});
  EXPECT_EQ(cam.channel_weights, (std::vector<double>{1.0}));  // softmax over one channel
  expect_values(cam.layer_values, a, 1e-6);
  expect_values(cam.values, resize_linear(a, {2, 2}, {4, 4}), 1e-6);
  EXPECT_THROW(grad_cam(model, x, 0), std::logic_error);
}

TEST(ScoreCam, EvaluatesAtMostMaxBatchAtOnce) {
  auto model = gap_linear({3, 2, 2}, {{1, -1, 2}}, {0});
  const std::vector<float> x = {1, 2, 3, 4, 4, 3, 2, 1, 0, 1, 0, 1};
  const CamAttribution whole = score_cam(model, x, 0);
  model.largest_batch = 0;
  const CamAttribution one = score_cam(model, x, 0, {.max_batch = 1});
  EXPECT_EQ(model.largest_batch, 1);
  EXPECT_EQ(one.values, whole.values);
  EXPECT_EQ(one.evaluations, 1 + 1 + 3);
}

TEST(ResizeLinear, MatchesPyTorch) {
  // torch.nn.functional.interpolate(..., mode="bilinear" / "linear", align_corners=False)
  expect_values(resize_linear(std::vector<double>{0, 1, 2, 3}, {2, 2}, {4, 4}),
                {0, 0.25, 0.75, 1, 0.5, 0.75, 1.25, 1.5, 1.5, 1.75, 2.25, 2.5, 2, 2.25, 2.75, 3}, 1e-12);
  expect_values(resize_linear(std::vector<double>{1, -2, 4, 0, 3, 5}, {2, 3}, {3, 5}),
                {1, -0.2, -2, 1.6, 4, 0.5, 0.5, 0.5, 2.9, 4.5, 0, 1.2, 3, 4.2, 5}, 1e-12);
  expect_values(resize_linear(std::vector<double>{0, 1}, {2}, {4}), {0, 0.25, 0.75, 1}, 1e-12);
  expect_values(resize_linear(std::vector<double>{7}, {1, 1}, {2, 3}), {7, 7, 7, 7, 7, 7}, 0);
  EXPECT_THROW(resize_linear(std::vector<double>{0, 1}, {2}, {2, 2}), Error);
  EXPECT_THROW(resize_linear(std::vector<double>{0, 1, 2}, {2}, {4}), Error);
  EXPECT_THROW(resize_linear(std::vector<double>{0, 1}, {2}, {0}), Error);
}

TEST(Cam, RejectsBadInput) {
  auto model = gap_linear({2, 2, 2}, {{2, -4}}, {0});
  const std::vector<float> short_x = {1, 2, 3};
  EXPECT_THROW(grad_cam(model, short_x, 0), Error);
  EXPECT_THROW(grad_cam_plus_plus(model, kTwoChannels, 1), Error);
  EXPECT_THROW(score_cam(model, kTwoChannels, -1), Error);
  EXPECT_THROW(score_cam(model, kTwoChannels, 0, {.max_batch = 0}), Error);
  // A layer without spatial dimensions ([features]) has no map.
  FunctionLayerModel flat(
      {4}, {4}, 1, [](const std::vector<double>& x) { return x; },
      [](const std::vector<double>& a) { return std::vector<double>{a[0]}; },
      [](const std::vector<double>&, std::int64_t) {
        return std::vector<double>{1, 0, 0, 0};
      });
  const std::vector<float> x4 = {1, 2, 3, 4};
  try {
    grad_cam(flat, x4, 0);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[channels, height, width]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tfdebug::interpret
