// DeepLIFT, LRP, guided backprop and deconvnet on LibTorch models (TorchRuleModel): Captum's LRP
// goldens, the reference's DeepLIFT golden, summation-to-delta where a module is called twice,
// torch::relu and relu_ are called in forward and a residual adds x + f(x), hand-computed guided
// backprop, and the model's own backward untouched afterwards.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "tfdebug/core/error.hpp"
#include "tfdebug/interpret/rule_attribution.hpp"
#include "tfdebug/torch/rule_model.hpp"

// At global scope: TORCH_MODULE names torch::nn unqualified.
namespace {

namespace interpret = tfdebug::interpret;
using interpret::LrpRuleKind;
using tfdebug::DType;
using tfdebug::Error;
using tfdebug::TensorView;
using tfdebug::torch::parameter_paths;
using tfdebug::torch::TorchRuleModel;

// Captum's test_lrp.py network: x (3) -> Linear 3->3 (all weights 2) -> ReLU -> Linear 3->1 (all 3).
struct CaptumNetImpl : ::torch::nn::Module {
  CaptumNetImpl() {
    fc1 = register_module("fc1", ::torch::nn::Linear(::torch::nn::LinearOptions(3, 3).bias(false)));
    fc2 = register_module("fc2", ::torch::nn::Linear(::torch::nn::LinearOptions(3, 1).bias(false)));
    ::torch::NoGradGuard no_grad;
    fc1->weight.fill_(2);
    fc2->weight.fill_(3);
  }
  ::torch::Tensor forward(const ::torch::Tensor& x) { return fc2(::torch::relu(fc1(x))); }
  ::torch::nn::Linear fc1{nullptr}, fc2{nullptr};
};
TORCH_MODULE(CaptumNet);

TorchRuleModel rule_model(CaptumNet& net) {
  return TorchRuleModel([net](const at::Tensor& b) mutable { return net->forward(b); }, {3},
                        parameter_paths(*net));
}

void expect_values(const interpret::Attribution& a, const std::vector<double>& expected, double tol) {
  ASSERT_EQ(a.values.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(a.values[i], expected[i], tol) << i;
}

const std::vector<float> kCaptumX = {1, 2, 3};

interpret::LrpRule rule_of(LrpRuleKind kind, double gamma = 0.25) {
  interpret::LrpRule r;
  r.kind = kind;
  r.gamma = gamma;
  return r;
}

TEST(TorchRuleModel, LrpEpsilonMatchesCaptum) {
  CaptumNet net;
  TorchRuleModel model = rule_model(net);
  const interpret::Attribution a = interpret::lrp(model, kCaptumX, 0);
  EXPECT_EQ(a.method, "lrp");
  expect_values(a, {18, 36, 54}, 1e-4);
  EXPECT_FLOAT_EQ(a.output, 108);
  EXPECT_NEAR(a.delta, 0, 1e-4);
}

TEST(TorchRuleModel, LrpGammaAlphaBetaIdentityMatchCaptum) {
  CaptumNet net;
  {
    ::torch::NoGradGuard no_grad;
    net->fc1->weight[0][0] = -2;
  }
  TorchRuleModel model = rule_model(net);
  interpret::LrpOptions gamma;
  gamma.modules = {{"fc1", rule_of(LrpRuleKind::gamma, 1)}, {"fc2", rule_of(LrpRuleKind::gamma)}};
  expect_values(interpret::lrp(model, kCaptumX, 0, gamma), {28.0 / 3, 104.0 / 3, 52}, 1e-4);

  interpret::LrpOptions alpha;
  alpha.rule.kind = LrpRuleKind::alpha1_beta0;
  expect_values(interpret::lrp(model, kCaptumX, 0, alpha), {12, 33.6, 50.4}, 1e-4);

  interpret::LrpOptions identity;
  identity.modules = {{"fc1", rule_of(LrpRuleKind::identity)}};
  const interpret::Attribution a = interpret::lrp(model, kCaptumX, 0, identity);
  expect_values(a, {24, 36, 36}, 1e-4);
  EXPECT_FLOAT_EQ(a.output, 96);
  EXPECT_NEAR(a.delta, 0, 1e-4);  // 24 + 36 + 36 = 96
}

// Captum's test_relu_deeplift_exact_match, with torch::relu called in the forward (no module).
TEST(TorchRuleModel, DeepLiftOnTheReferenceModel) {
  TorchRuleModel model(
      [](const at::Tensor& x) {
        return 2 * ::torch::relu(x.select(1, 0)) + 2 * ::torch::relu(x.select(1, 1) - 1.5);
      },
      {2});
  const std::vector<float> x = {1, 2};
  const interpret::Attribution a = interpret::deeplift(model, x, 0);
  EXPECT_EQ(a.values, (std::vector<double>{2, 1}));
  EXPECT_EQ(a.output, 3);
  EXPECT_EQ(a.reference_output, 0);
  EXPECT_EQ(a.delta, 0);
}

// Note [Rules at ops]: one Linear called twice, a residual h + fc(h), torch::relu and an in-place
// relu_ in forward, tanh and sigmoid: DeepLIFT's summation-to-delta holds all the same.
struct TangledImpl : ::torch::nn::Module {
  TangledImpl() {
    fc = register_module("fc", ::torch::nn::Linear(6, 6));
    inner = register_module("inner", ::torch::nn::Linear(4, 6));
    head = register_module("head", ::torch::nn::Linear(6, 3));
  }
  ::torch::Tensor forward(const ::torch::Tensor& x) {
    ::torch::Tensor h = ::torch::relu(inner(x));
    h = h + ::torch::tanh(fc(h));             // residual, the first call of fc
    h = fc(h).relu_() + ::torch::sigmoid(h);  // fc again, in-place relu
    return head(h);
  }
  ::torch::nn::Linear fc{nullptr}, inner{nullptr}, head{nullptr};
};
TORCH_MODULE(Tangled);

TEST(TorchRuleModel, DeepLiftSummationToDeltaOnReusedModulesAndResiduals) {
  ::torch::manual_seed(3);
  Tangled net;
  TorchRuleModel model([net](const at::Tensor& b) mutable { return net->forward(b); }, {4},
                       parameter_paths(*net));
  const std::vector<float> x = {0.5f, -1.2f, 2.0f, 0.3f};
  interpret::DeepLiftOptions o;
  o.baseline = {-0.4f, 0.9f, 0.1f, -1.0f};
  for (std::int64_t target = 0; target < 3; ++target) {
    const interpret::Attribution a = interpret::deeplift(model, x, target, o);
    const double change = a.output - a.reference_output;
    EXPECT_GT(std::abs(change), 1e-3);
    EXPECT_NEAR(a.delta, 0, 2e-5 * std::max(1.0, std::abs(change))) << target;
  }
  // DeepLiftShap over three baselines, two pairs per call: the mean of each DeepLIFT.
  interpret::DeepLiftShapOptions shap;
  shap.baselines = {-0.4f, 0.9f, 0.1f, -1.0f, 0, 0, 0, 0, 1, 1, 1, 1};
  shap.max_batch = 2;
  const interpret::Attribution s = interpret::deeplift_shap(model, x, 1, shap);
  std::vector<double> mean(4, 0.0);
  for (int b = 0; b < 3; ++b) {
    interpret::DeepLiftOptions one;
    one.baseline.assign(shap.baselines.begin() + 4 * b, shap.baselines.begin() + 4 * b + 4);
    const interpret::Attribution a = interpret::deeplift(model, x, 1, one);
    for (int j = 0; j < 4; ++j) mean[j] += a.values[j] / 3;
  }
  expect_values(s, mean, 1e-5);
  EXPECT_NEAR(s.delta, 0, 1e-4);
  // LRP reports how far the biases, tanh and sigmoid are from conserving relevance.
  const interpret::Attribution r = interpret::lrp(model, x, 1);
  EXPECT_TRUE(std::isfinite(r.delta));
  EXPECT_NEAR(r.delta, r.sum() - r.output, 1e-12);
}

// Without biases, LRP-epsilon conserves relevance through ReLUs, a reused Linear and a residual
// add: sum R = f(x).
TEST(TorchRuleModel, LrpConservesThroughResidualsAndReusedModules) {
  ::torch::manual_seed(5);
  auto fc = ::torch::nn::Linear(::torch::nn::LinearOptions(5, 5).bias(false));
  auto head = ::torch::nn::Linear(::torch::nn::LinearOptions(5, 2).bias(false));
  TorchRuleModel model(
      [fc, head](const at::Tensor& x) mutable {
        at::Tensor h = x + ::torch::relu(fc(x));
        h = h + ::torch::relu(fc(h));
        return head(h);
      },
      {5});
  const std::vector<float> x = {1.0f, 0.5f, 2.0f, 0.7f, 1.5f};
  const interpret::Attribution r = interpret::lrp(model, x, 0);
  EXPECT_GT(std::abs(r.output), 1e-2);
  EXPECT_NEAR(r.delta, 0, 1e-4 * std::max(1.0, std::abs(r.output)));
}

TEST(TorchRuleModel, DeepLiftSummationToDeltaOnRandomReluMlps) {
  for (int seed = 0; seed < 4; ++seed) {
    ::torch::manual_seed(seed);
    ::torch::nn::Sequential mlp(::torch::nn::Linear(8, 16), ::torch::nn::ReLU(), ::torch::nn::Linear(16, 16),
                                ::torch::nn::ReLU(), ::torch::nn::Linear(16, 4));
    TorchRuleModel model([mlp](const at::Tensor& b) mutable { return mlp->forward(b); }, {8},
                         parameter_paths(*mlp));
    const at::Tensor xs = ::torch::randn({2, 8});
    const std::vector<float> x(xs.data_ptr<float>(), xs.data_ptr<float>() + 8);
    interpret::DeepLiftOptions o;
    o.baseline.assign(xs.data_ptr<float>() + 8, xs.data_ptr<float>() + 16);
    const interpret::Attribution a = interpret::deeplift(model, x, seed % 4, o);
    EXPECT_NEAR(a.delta, 0, 1e-5 * std::max(1.0, std::abs(a.output - a.reference_output))) << seed;
  }
}

TEST(TorchRuleModel, GuidedBackpropWithoutReluIsTheGradient) {
  ::torch::manual_seed(1);
  ::torch::nn::Sequential mlp(::torch::nn::Linear(4, 8), ::torch::nn::Tanh(), ::torch::nn::Linear(8, 2));
  TorchRuleModel model([mlp](const at::Tensor& b) mutable { return mlp->forward(b); }, {4});
  const std::vector<float> x = {0.3f, -0.2f, 1.1f, 0.5f};
  std::vector<float> score(1), gradient(4);
  model.gradient(TensorView(x.data(), DType::f32, {1, 4}), 1, score, gradient);
  const interpret::Attribution a = interpret::guided_backprop(model, x, 1);
  EXPECT_EQ(a.method, "guided-backprop");
  EXPECT_TRUE(std::isnan(a.delta));
  for (int j = 0; j < 4; ++j) EXPECT_EQ(a.values[j], gradient[j]) << j;
}

// x = (1, 1) -> W1 = [[1, 2], [3, -1], [-1, -1]] -> ReLU -> W2 = [1, -2, 5]: hidden z = (3, 2, -2),
// the gradient into the ReLUs (1, -2, 5). Plain: mask z > 0 -> (1, -2, 0), W1^T -> (-5, 4).
// Guided: also g > 0 -> (1, 0, 0) -> (1, 2). Deconvnet: relu(g) = (1, 0, 5) -> (-4, -3).
TEST(TorchRuleModel, GuidedBackpropAndDeconvnetByHand) {
  auto fc1 = ::torch::nn::Linear(::torch::nn::LinearOptions(2, 3).bias(false));
  auto fc2 = ::torch::nn::Linear(::torch::nn::LinearOptions(3, 1).bias(false));
  {
    ::torch::NoGradGuard no_grad;
    fc1->weight.copy_(::torch::tensor({1.0f, 2.0f, 3.0f, -1.0f, -1.0f, -1.0f}).reshape({3, 2}));
    fc2->weight.copy_(::torch::tensor({1.0f, -2.0f, 5.0f}).reshape({1, 3}));
  }
  TorchRuleModel model([fc1, fc2](const at::Tensor& b) mutable { return fc2(::torch::relu(fc1(b))); }, {2});
  const std::vector<float> x = {1, 1};
  EXPECT_EQ(interpret::guided_backprop(model, x, 0).values, (std::vector<double>{1, 2}));
  EXPECT_EQ(interpret::deconvnet(model, x, 0).values, (std::vector<double>{-4, -3}));
  // The rules lived only inside those calls: they wrote no parameter's .grad, and the plain
  // gradient is the model's own.
  EXPECT_FALSE(fc1->weight.grad().defined());
  EXPECT_FALSE(fc2->weight.grad().defined());
  std::vector<float> score(1), gradient(2);
  model.gradient(TensorView(x.data(), DType::f32, {1, 2}), 0, score, gradient);
  EXPECT_EQ(gradient, (std::vector<float>{-5, 4}));
  const at::Tensor in = ::torch::tensor({1.0f, 1.0f}).reshape({1, 2}).set_requires_grad(true);
  fc2(::torch::relu(fc1(in))).sum().backward();
  EXPECT_TRUE(::torch::equal(in.grad(), ::torch::tensor({-5.0f, 4.0f}).reshape({1, 2})));
}

TEST(TorchRuleModel, IdentityRuleNeedsMatchingSizes) {
  ::torch::nn::Linear fc(3, 2);
  TorchRuleModel model([fc](const at::Tensor& b) mutable { return fc(b); }, {3}, parameter_paths(*fc));
  interpret::LrpOptions o;
  o.rule.kind = LrpRuleKind::identity;
  EXPECT_THROW(interpret::lrp(model, kCaptumX, 0, o), Error);
}

}  // namespace
