// Attention captured from the softmax inside attention modules (Note [Attention from softmax]):
// the demo model's explicit attention against q, k computed from its parameters, and
// torch::nn::MultiheadAttention against its own need_weights output; head masking against the
// attention computed without the head.
#include "tfdebug/torch/attention_capture.hpp"

#include <gtest/gtest.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/transformerlayer.h>
#include <torch/utils.h>

#include <cmath>

#include "demo_model.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/interpret/attention.hpp"
#include "tfdebug/interpret/attention_rollout.hpp"

namespace tfdebug::torch {
namespace {

at::Tensor parameter(::torch::nn::Module& m, const std::string& name) {
  return m.named_parameters()[name];
}

void expect_rows_sum_to_one(const interpret::AttentionMaps& maps) {
  for (std::int64_t l = 0; l < maps.layer_count(); ++l)
    for (std::int64_t h = 0; h < maps.heads; ++h)
      for (std::int64_t i = 0; i < maps.tokens; ++i) {
        double sum = 0;
        for (std::int64_t j = 0; j < maps.tokens; ++j) sum += maps.at(l, h, i, j);
        EXPECT_NEAR(sum, 1.0, 1e-6) << l << " " << h << " " << i;
      }
}

TEST(AttentionCapture, DemoModelLayerZeroEqualsSoftmaxOfQK) {
  demo::DemoConfig config;
  config.steps = 0;
  demo::DemoTrainer trainer(config);
  for (int s = 0; s < 20; ++s) trainer.train_step();  // weights that are not the initial ones
  ::torch::nn::Module& model = trainer.model();
  const at::Tensor tokens = at::tensor(std::vector<std::int64_t>{3, 5, 1, 7, 2, 0, 3, 5}).view({1, 8});
  const interpret::AttentionMaps maps = capture_attention(model, [&] {
    const at::NoGradGuard no_grad;
    (void)trainer.logits(tokens);
  });
  ASSERT_EQ(maps.layers, (std::vector<std::string>{"blocks.0.attn", "blocks.1.attn"}));
  ASSERT_EQ(maps.heads, 4);
  ASSERT_EQ(maps.tokens, 8);
  expect_rows_sum_to_one(maps);

  // Layer 0 by hand: x = tok + pos, h = ln1(x), q = h Wq^T + bq, k likewise; per head of 8
  // dimensions, softmax(q k^T / sqrt(8) + causal mask).
  const at::NoGradGuard no_grad;
  const at::Tensor x = parameter(model, "tok.weight").index_select(0, tokens.view({8})) +
                       parameter(model, "pos.weight").slice(0, 0, 8);
  const at::Tensor h =
      at::layer_norm(x, {32}, parameter(model, "blocks.0.ln1.weight"), parameter(model, "blocks.0.ln1.bias"));
  const at::Tensor q =
      at::linear(h, parameter(model, "blocks.0.attn.q.weight"), parameter(model, "blocks.0.attn.q.bias"));
  const at::Tensor k =
      at::linear(h, parameter(model, "blocks.0.attn.k.weight"), parameter(model, "blocks.0.attn.k.bias"));
  for (std::int64_t head = 0; head < 4; ++head) {
    const at::Tensor qh = q.slice(1, head * 8, head * 8 + 8).to(at::kDouble);
    const at::Tensor kh = k.slice(1, head * 8, head * 8 + 8).to(at::kDouble);
    at::Tensor scores = qh.matmul(kh.t()) / std::sqrt(8.0);
    scores = scores.masked_fill(at::ones({8, 8}, at::kBool).triu(1), -INFINITY);
    const at::Tensor p = scores.softmax(-1);
    for (std::int64_t i = 0; i < 8; ++i)
      for (std::int64_t j = 0; j < 8; ++j)
        EXPECT_NEAR(maps.at(0, head, i, j), p[i][j].item<double>(), 2e-6) << head << " " << i << " " << j;
  }
  // Causal: nothing to the future.
  EXPECT_EQ(maps.at(1, 2, 3, 4), 0.0);
}

TEST(AttentionCapture, MultiheadAttentionInAnEncoderLayer) {
  ::torch::manual_seed(3);
  ::torch::nn::TransformerEncoderLayer layer(
      ::torch::nn::TransformerEncoderLayerOptions(8, 2).dim_feedforward(16));
  layer->eval();
  const at::Tensor src = at::randn({5, 1, 8});  // [sequence, batch, d_model]
  const interpret::AttentionMaps maps = capture_attention(*layer, [&] {
    const at::NoGradGuard no_grad;
    (void)layer->forward(src);
  });
  ASSERT_EQ(maps.layers, (std::vector<std::string>{"self_attn"}));
  ASSERT_EQ(maps.heads, 2);
  ASSERT_EQ(maps.tokens, 5);
  expect_rows_sum_to_one(maps);
  // The module's own per-head weights (need_weights, not averaged): [batch, heads, 5, 5].
  const at::NoGradGuard no_grad;
  const at::Tensor w = std::get<1>(layer->self_attn->forward(src, src, src, {}, true, {}, false));
  ASSERT_EQ(w.sizes().vec(), (std::vector<std::int64_t>{1, 2, 5, 5}));
  for (std::int64_t head = 0; head < 2; ++head)
    for (std::int64_t i = 0; i < 5; ++i)
      for (std::int64_t j = 0; j < 5; ++j)
        EXPECT_NEAR(maps.at(0, head, i, j), w[0][head][i][j].item<double>(), 1e-6);
}

TEST(AttentionCapture, MaskingAHeadIsComputingWithoutIt) {
  ::torch::manual_seed(5);
  ::torch::nn::MultiheadAttention mha(::torch::nn::MultiheadAttentionOptions(8, 2));
  mha->eval();
  const at::Tensor x = at::randn({4, 1, 8});
  const at::NoGradGuard no_grad;
  at::Tensor masked;
  const std::vector<float> scale = {1.0f, 0.0f};
  run_with_head_scale(
      *mha, [&] { masked = std::get<0>(mha->forward(x, x, x)); }, scale);
  // By hand: head 0's probabilities times its values, head 1 contributing nothing, out_proj.
  const at::Tensor w = std::get<1>(mha->forward(x, x, x, {}, true, {}, false));  // [1, 2, 4, 4]
  const at::Tensor v =
      at::linear(x.view({4, 8}), mha->in_proj_weight.slice(0, 16, 24), mha->in_proj_bias.slice(0, 16, 24));
  at::Tensor mixed = at::zeros({4, 8});
  mixed.slice(1, 0, 4).copy_(w[0][0].matmul(v.slice(1, 0, 4)));
  const at::Tensor expected = at::linear(mixed, mha->out_proj->weight, mha->out_proj->bias);
  EXPECT_TRUE(at::allclose(masked.view({4, 8}), expected, 1e-5, 1e-6));
  // The unmasked output differs from it: head 1 mattered.
  const at::Tensor full = std::get<0>(mha->forward(x, x, x));
  EXPECT_FALSE(at::allclose(full, masked, 1e-3, 1e-4));
  // Scale 1 everywhere is the model itself.
  at::Tensor same;
  run_with_head_scale(
      *mha, [&] { same = std::get<0>(mha->forward(x, x, x)); }, std::vector<float>{1.0f, 1.0f});
  EXPECT_TRUE(at::equal(same, full));
  EXPECT_THROW(run_with_head_scale(
                   *mha, [&] { (void)mha->forward(x, x, x); }, std::vector<float>{1.0f}),
               Error);
}

TEST(TorchAttentionModel, HeadImportanceAndRolloutOfTheDemo) {
  demo::DemoConfig config;
  demo::DemoTrainer trainer(config);
  for (int s = 0; s < 20; ++s) trainer.train_step();
  TorchAttentionModel model(
      trainer.model(),
      [&](const at::Tensor& batch) { return trainer.logits(batch.to(at::kLong)).select(1, -1); }, {6});
  EXPECT_EQ(model.output_size(), 16);
  const std::vector<float> x = {3, 5, 1, 0, 3, 5};
  const auto r = interpret::head_importance(model, x, 1);
  ASSERT_EQ(r.importance.size(), 8u);
  for (const double v : r.importance) EXPECT_TRUE(std::isfinite(v));
  EXPECT_NE(r.importance, std::vector<double>(8, 0.0));
  // With every head masked, a position sees no other token: the tokens before the last stop
  // mattering to its output, which they did before.
  const std::vector<float> y = {7, 2, 9, 0, 4, 5};
  std::vector<float> fx(16), fy(16), gx(16), gy(16);
  const std::vector<float> none(8, 0.0f), all(8, 1.0f);
  model.forward_with_heads(x, none, fx);
  model.forward_with_heads(y, none, fy);
  model.forward_with_heads(x, all, gx);
  model.forward_with_heads(y, all, gy);
  for (std::size_t k = 0; k < 16; ++k) EXPECT_NEAR(fx[k], fy[k], 1e-5) << k;
  EXPECT_NE(gx, gy);
  const auto a = interpret::rollout_attribution(model, x);
  EXPECT_EQ(a.method, "attention-rollout");
  EXPECT_NEAR(a.sum(), 1.0, 1e-9);
  EXPECT_EQ(a.values.size(), 6u);
}

}  // namespace
}  // namespace tfdebug::torch
