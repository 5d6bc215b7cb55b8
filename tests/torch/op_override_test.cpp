// Note [Op overrides] (src/torch/op_override.hpp): under an OverrideScope every op of the thread
// reaches the override, through the boxed fallback and through the unboxed hot-op kernels alike,
// and what the override leaves on the stack is what the caller gets.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "op_override.hpp"

namespace {

using tfdebug::torch::detail::OpOverride;
using tfdebug::torch::detail::OverrideScope;
using tfdebug::torch::detail::pass_through;

// Records every op's name, and the output of the softmaxes.
struct Recorder : OpOverride {
  void call(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* stack) override {
    pass_through(op, keys, stack);
    names.push_back(op.schema().name());
    if (op.schema().name() == "aten::softmax") softmaxes.push_back(stack->back().toTensor());
  }
  std::vector<std::string> names;
  std::vector<at::Tensor> softmaxes;
};

// Runs relu (an unboxed hot op) and exp (a boxed one) as something else: 10 * input.
struct Replace : OpOverride {
  void call(const c10::OperatorHandle& op, c10::DispatchKeySet keys, ::torch::jit::Stack* stack) override {
    const std::string name = op.schema().name();
    if (name == "aten::relu" || name == "aten::exp") {
      const at::Tensor x = stack->back().toTensor();
      stack->pop_back();
      stack->emplace_back(x * 10);  // the scope's key is excluded here: not intercepted again
      return;
    }
    pass_through(op, keys, stack);
  }
};

TEST(OpOverride, SeesHotAndBoxedOpsAndTheirOutputs) {
  const at::Tensor x = at::arange(6, at::kFloat).reshape({2, 3});
  Recorder recorder;
  at::Tensor y;
  {
    const OverrideScope scope(recorder);
    y = at::softmax(at::exp(x) - 1, 1);  // exp: boxed; sub, softmax: hot ops
  }
  ASSERT_EQ(recorder.softmaxes.size(), 1u);
  EXPECT_TRUE(at::equal(recorder.softmaxes[0], y));
  EXPECT_TRUE(at::allclose(y, at::softmax(at::exp(x) - 1, 1)));
  EXPECT_NE(std::find(recorder.names.begin(), recorder.names.end(), "aten::exp"), recorder.names.end());
  EXPECT_NE(std::find(recorder.names.begin(), recorder.names.end(), "aten::sub"), recorder.names.end());
  // Outer ops only: softmax's own inner _softmax is not seen.
  EXPECT_EQ(std::find(recorder.names.begin(), recorder.names.end(), "aten::_softmax"), recorder.names.end());
}

TEST(OpOverride, WhatTheOverrideReturnsIsTheResult) {
  const at::Tensor x = at::tensor({-1.0f, 2.0f});
  Replace replace;
  at::Tensor relu, exp;
  {
    const OverrideScope scope(replace);
    relu = at::relu(x);
    exp = at::exp(x);
  }
  EXPECT_EQ(relu[0].item<float>(), -10.0f);
  EXPECT_EQ(relu[1].item<float>(), 20.0f);
  EXPECT_EQ(exp[0].item<float>(), -10.0f);
  // After the scope, the ops are themselves again.
  EXPECT_EQ(at::relu(x)[0].item<float>(), 0.0f);
}

TEST(OpOverride, InPlaceHotOpsReturnSelfAndScopesNest) {
  Recorder outer;
  Recorder inner;
  at::Tensor a = at::ones({3});
  {
    const OverrideScope o(outer);
    {
      const OverrideScope i(inner);
      at::Tensor& r = a.mul_(3.0);  // aten::mul_.Scalar, an unboxed in-place kernel
      EXPECT_EQ(&r, &a);
    }
    a.add_(a);  // back to the outer override
  }
  EXPECT_EQ(a[0].item<float>(), 6.0f);
  EXPECT_EQ(inner.names, std::vector<std::string>({"aten::mul_"}));
  EXPECT_EQ(outer.names, std::vector<std::string>({"aten::add_"}));
}

TEST(OpOverride, BackwardOpsOnTheCpuReachTheOverride) {
  const at::Tensor x = at::tensor({-1.0f, 2.0f}).set_requires_grad(true);
  Recorder recorder;
  {
    const OverrideScope scope(recorder);
    at::relu(x).sum().backward();
  }
  EXPECT_NE(std::find(recorder.names.begin(), recorder.names.end(), "aten::threshold_backward"),
            recorder.names.end());
  EXPECT_EQ(x.grad()[0].item<float>(), 0.0f);
  EXPECT_EQ(x.grad()[1].item<float>(), 1.0f);
}

}  // namespace
