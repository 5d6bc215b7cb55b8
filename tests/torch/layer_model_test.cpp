// TorchLayerModel (tfdebug/torch/layer_model.hpp) on a small Conv2d CNN: the captured layer
// output is the conv's output computed directly, its gradient is autograd's, and Grad-CAM of the
// torch model is the same computation done here with LibTorch ops (interpolate included).
#include "tfdebug/torch/layer_model.hpp"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tfdebug/core/error.hpp"
#include "tfdebug/interpret/cam.hpp"

namespace {

using tfdebug::DType;
using tfdebug::TensorView;

struct CnnImpl : torch::nn::Module {
  CnnImpl()
      : conv1(register_module("conv1", torch::nn::Conv2d(torch::nn::Conv2dOptions(1, 4, 3).padding(1)))),
        conv2(register_module("conv2", torch::nn::Conv2d(torch::nn::Conv2dOptions(4, 6, 3).padding(1)))),
        fc(register_module("fc", torch::nn::Linear(6, 3))),
        unused(register_module("unused", torch::nn::Linear(2, 2))) {}

  // What precedes conv2's output, and what follows it: the test computes both halves itself.
  torch::Tensor below(const torch::Tensor& x) { return torch::max_pool2d(torch::relu(conv1(x)), 2); }
  torch::Tensor above(torch::Tensor a) { return fc(a.relu_().mean({2, 3})); }  // in place, on purpose
  torch::Tensor forward(const torch::Tensor& x) { return above(conv2(below(x))); }

  torch::nn::Conv2d conv1, conv2;
  torch::nn::Linear fc, unused;
};
TORCH_MODULE(Cnn);

class TorchLayerModelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    torch::manual_seed(7);
    net = Cnn();  // its weights from the seed (the member's were drawn before it)
    net->eval();
    x = torch::randn({2, 1, 8, 8});
  }
  tfdebug::torch::TorchLayerModel model(const std::string& layer) {
    return tfdebug::torch::TorchLayerModel([this](const at::Tensor& b) { return net->forward(b); }, *net,
                                           layer, {1, 8, 8});
  }
  TensorView view() { return TensorView(x.data_ptr<float>(), DType::f32, {2, 1, 8, 8}); }

  Cnn net;
  torch::Tensor x;
};

void expect_equal(const std::vector<float>& got, const torch::Tensor& want, double tolerance) {
  const torch::Tensor w = want.detach().contiguous().to(torch::kFloat);
  ASSERT_EQ(static_cast<std::int64_t>(got.size()), w.numel());
  for (std::int64_t i = 0; i < w.numel(); ++i)
    EXPECT_NEAR(got[static_cast<std::size_t>(i)], w.data_ptr<float>()[i], tolerance) << "element " << i;
}

TEST_F(TorchLayerModelTest, CapturesTheConvOutputAndItsGradient) {
  auto m = model("conv2");
  EXPECT_EQ(m.layer_shape(), (std::vector<std::int64_t>{6, 4, 4}));
  EXPECT_EQ(m.output_size(), 3);
  EXPECT_EQ(m.layers(), (std::vector<std::string>{"conv1", "conv2", "fc", "unused"}));

  // Directly: conv2's output, and the gradient of output 2 (summed over the batch) with respect to it.
  torch::Tensor a = net->conv2(net->below(x)).detach().requires_grad_(true);
  const torch::Tensor y = net->above(a.clone());
  const torch::Tensor g = torch::autograd::grad({y.select(1, 2).sum()}, {a})[0];

  std::vector<float> activations(2 * 96), scores(2), gradients(2 * 96), outputs(6);
  m.activations(view(), activations);
  expect_equal(activations, a, 1e-6);
  m.layer_gradient(view(), 2, scores, activations, gradients);
  expect_equal(activations, a, 1e-6);
  expect_equal(scores, y.select(1, 2), 1e-6);
  expect_equal(gradients, g, 1e-7);
  m.forward(view(), outputs);
  expect_equal(outputs, net->forward(x), 1e-6);
  // The in-place ReLU after the layer changed the forward's copy, not the captured output.
  EXPECT_LT(*std::min_element(activations.begin(), activations.end()), 0);
}

TEST_F(TorchLayerModelTest, GradCamEqualsTheSameComputationInLibTorch) {
  auto m = model("conv2");
  const torch::Tensor x0 = x.slice(0, 0, 1);
  torch::Tensor a = net->conv2(net->below(x0)).detach().requires_grad_(true);
  const torch::Tensor y = net->above(a.clone());
  const std::int64_t target = y.argmax(1).item<std::int64_t>();
  const torch::Tensor g = torch::autograd::grad({y.select(1, target).sum()}, {a})[0];
  const torch::Tensor alpha = g.mean({2, 3}, /*keepdim=*/true);
  const torch::Tensor map = (alpha * a.detach()).sum(1, /*keepdim=*/true).relu();  // [1, 1, 4, 4]
  const torch::Tensor up =
      torch::nn::functional::interpolate(map, torch::nn::functional::InterpolateFuncOptions()
                                                  .size(std::vector<std::int64_t>{8, 8})
                                                  .mode(torch::kBilinear)
                                                  .align_corners(false));

  const std::vector<float> xs(x0.data_ptr<float>(), x0.data_ptr<float>() + 64);
  const tfdebug::interpret::CamAttribution cam = tfdebug::interpret::grad_cam(m, xs, target);
  EXPECT_EQ(cam.shape, (std::vector<std::int64_t>{8, 8}));
  EXPECT_NEAR(cam.output, y[0][target].item<float>(), 1e-6);
  ASSERT_GT(map.max().item<float>(), 0);  // a map with something in it
  expect_equal(std::vector<float>(cam.layer_values.begin(), cam.layer_values.end()), map, 1e-6);
  expect_equal(std::vector<float>(cam.values.begin(), cam.values.end()), up, 1e-6);

  // Score-CAM runs on forward passes alone: its scores are the model's at x * H_k.
  const tfdebug::interpret::CamAttribution score =
      tfdebug::interpret::score_cam(m, xs, target, {.max_batch = 4});
  EXPECT_EQ(score.evaluations, 1 + 1 + 6 - static_cast<std::int64_t>(score.skipped_channels.size()));
  for (const double v : score.values) EXPECT_TRUE(std::isfinite(v));
}

TEST_F(TorchLayerModelTest, NamesTheLayerAndListsTheOthersWhenItIsWrong) {
  try {
    model("conv3");
    ADD_FAILURE() << "no error";
  } catch (const tfdebug::Error& e) {
    EXPECT_NE(std::string(e.what()).find("'conv3'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("conv1, conv2, fc, unused"), std::string::npos) << e.what();
  }
  try {
    model("unused");
    ADD_FAILURE() << "no error";
  } catch (const tfdebug::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no op of the forward pass read the parameters of layer 'unused'"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
