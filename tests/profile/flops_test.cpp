// Every FLOP formula against a value computed by hand in the comment next to it.
#include "tfdebug/profile/flops.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace tfdebug::profile {
namespace {

using A = OpArg;

std::optional<double> flops(std::string_view op, std::vector<OpArg> args) {
  return op_flops(op, args);
}

TEST(Flops, MatrixProducts) {
  // [64,32]x[32,16]: 2*64*32*16
  EXPECT_EQ(flops("aten::mm", {A::tensor({64, 32}), A::tensor({32, 16})}), 65536.0);
  EXPECT_EQ(flops("mm", {A::tensor({64, 32}), A::tensor({31, 16})}), std::nullopt);  // k mismatch
  // addmm(bias [16], [8,4], [4,16]): 2*8*4*16 = 1024 (the bias add is not counted)
  EXPECT_EQ(flops("aten::addmm", {A::tensor({16}), A::tensor({8, 4}), A::tensor({4, 16})}), 1024.0);
  // bmm [3,5,7]x[3,7,2]: 2*3*5*7*2 = 420
  EXPECT_EQ(flops("aten::bmm", {A::tensor({3, 5, 7}), A::tensor({3, 7, 2})}), 420.0);
  EXPECT_EQ(flops("aten::bmm", {A::tensor({3, 5, 7}), A::tensor({4, 7, 2})}), std::nullopt);
  // baddbmm(self, [3,5,7], [3,7,2]) = 420
  EXPECT_EQ(flops("aten::baddbmm", {A::tensor({3, 5, 2}), A::tensor({3, 5, 7}), A::tensor({3, 7, 2})}),
            420.0);
  // linear([32,17,32], weight [64,32]): 2 * 32*17*32 * 64 = 2228224
  EXPECT_EQ(flops("aten::linear", {A::tensor({32, 17, 32}), A::tensor({64, 32}), A::tensor({64})}),
            2228224.0);
  EXPECT_EQ(flops("aten::linear", {A::tensor({32, 17, 31}), A::tensor({64, 32}), A::none()}), std::nullopt);
}

TEST(Flops, MatmulBroadcastCases) {
  // 1-D . 1-D: dot of 10: 2*10 = 20
  EXPECT_EQ(flops("aten::matmul", {A::tensor({10}), A::tensor({10})}), 20.0);
  // [4,10] . [10]: 2*4*10 = 80
  EXPECT_EQ(flops("aten::matmul", {A::tensor({4, 10}), A::tensor({10})}), 80.0);
  // [10] . [10,3]: 2*10*3 = 60
  EXPECT_EQ(flops("aten::matmul", {A::tensor({10}), A::tensor({10, 3})}), 60.0);
  // [4,10] . [10,3]: 2*4*10*3 = 240
  EXPECT_EQ(flops("aten::matmul", {A::tensor({4, 10}), A::tensor({10, 3})}), 240.0);
  // [2,3,4,10] . [10,5] (matrix broadcast over 6 batches): 2*6*4*10*5 = 2400
  EXPECT_EQ(flops("aten::matmul", {A::tensor({2, 3, 4, 10}), A::tensor({10, 5})}), 2400.0);
  // [2,1,4,10] . [3,10,5]: batch broadcast [2,3] = 6: 2*6*4*10*5 = 2400
  EXPECT_EQ(flops("aten::matmul", {A::tensor({2, 1, 4, 10}), A::tensor({3, 10, 5})}), 2400.0);
  // [10] . [2,10,5]: vector times a batch of matrices: 2*2*1*10*5 = 200
  EXPECT_EQ(flops("aten::matmul", {A::tensor({10}), A::tensor({2, 10, 5})}), 200.0);
  // [2,4,10] . [10]: 2*2*4*10*1 = 160
  EXPECT_EQ(flops("aten::matmul", {A::tensor({2, 4, 10}), A::tensor({10})}), 160.0);
  // the demo's attention scores: [32,4,16,8] . [32,4,8,16]: 2*128*16*8*16 = 524288
  EXPECT_EQ(flops("aten::matmul", {A::tensor({32, 4, 16, 8}), A::tensor({32, 4, 8, 16})}), 524288.0);
  EXPECT_EQ(flops("aten::matmul", {A::tensor({2, 4, 10}), A::tensor({3, 10, 5})}), std::nullopt);
}

TEST(Flops, Convolution) {
  // conv2d input [1,3,8,8], weight [4,3,3,3], stride 1, padding 1, dilation 1: output [1,4,8,8]
  // = 256 elements, each 3*3*3 = 27 multiply-adds: 2*256*27 = 13824
  std::vector<OpArg> conv = {A::tensor({1, 3, 8, 8}), A::tensor({4, 3, 3, 3}), A::none(),
                             A::ints({1, 1}),         A::ints({1, 1}),         A::ints({1, 1}),
                             A::boolean(false),       A::ints({0, 0}),         A::integer(1)};
  EXPECT_EQ(op_flops("aten::convolution", conv), 13824.0);
  EXPECT_EQ(op_flops("aten::_convolution", conv), 13824.0);
  // stride 2, no padding: output (8 - 3) / 2 + 1 = 3 per side: [2,4,3,3] with batch 2 = 72
  // elements: 2*72*27 = 3888
  std::vector<OpArg> strided = {
      A::tensor({2, 3, 8, 8}), A::tensor({4, 3, 3, 3}), A::none(), A::ints({2}), A::ints({0}), A::ints({1}),
      A::boolean(false)};
  EXPECT_EQ(op_flops("aten::convolution", strided), 3888.0);
  // groups 2: weight [4, 2, 3, 3] on 4 input channels, padding 1: 2*(1*4*8*8)*(2*9) = 9216
  std::vector<OpArg> grouped = {A::tensor({1, 4, 8, 8}),
                                A::tensor({4, 2, 3, 3}),
                                A::none(),
                                A::ints({1}),
                                A::ints({1}),
                                A::ints({1}),
                                A::boolean(false),
                                A::ints({0}),
                                A::integer(2)};
  EXPECT_EQ(op_flops("aten::convolution", grouped), 9216.0);
  // transposed: input [1,4,5,5], weight [4, 2, 3, 3] (in, out/groups, k): every input element
  // scatters into 2*9 outputs: 2*100*18 = 3600
  std::vector<OpArg> transposed = {
      A::tensor({1, 4, 5, 5}), A::tensor({4, 2, 3, 3}), A::none(), A::ints({2}), A::ints({0}), A::ints({1}),
      A::boolean(true)};
  EXPECT_EQ(op_flops("aten::convolution", transposed), 3600.0);
  // conv1d(input [2,3,10], weight [5,3,3], bias, stride [1], padding [0], dilation [2]):
  // output length 10 - 2*2 = 6: 2 * (2*5*6) * 9 = 1080
  EXPECT_EQ(flops("aten::conv1d", {A::tensor({2, 3, 10}), A::tensor({5, 3, 3}), A::tensor({5}), A::ints({1}),
                                   A::ints({0}), A::ints({2}), A::integer(1)}),
            1080.0);
  // padding="same" is a string: no formula for that call
  EXPECT_EQ(flops("aten::conv2d", {A::tensor({1, 3, 8, 8}), A::tensor({4, 3, 3, 3}), A::none(), A::ints({1}),
                                   A::string("same"), A::ints({1}), A::integer(1)}),
            std::nullopt);
  // convolution_backward for the first case, all three gradients: 13824 + 13824 + 256 = 27904
  std::vector<OpArg> backward = {A::tensor({1, 4, 8, 8}),
                                 A::tensor({1, 3, 8, 8}),
                                 A::tensor({4, 3, 3, 3}),
                                 A::ints({4}),
                                 A::ints({1}),
                                 A::ints({1}),
                                 A::ints({1}),
                                 A::boolean(false),
                                 A::ints({0}),
                                 A::integer(1),
                                 A::ints({1, 1, 1})};
  EXPECT_EQ(op_flops("aten::convolution_backward", backward), 27904.0);
  backward[10] = A::ints({1, 0, 0});
  EXPECT_EQ(op_flops("aten::convolution_backward", backward), 13824.0);
}

TEST(Flops, NormalisationAndActivations) {
  // softmax over [4,10]: 5 per element = 200; log_softmax the same
  EXPECT_EQ(flops("aten::softmax", {A::tensor({4, 10}), A::integer(-1)}), 200.0);
  EXPECT_EQ(flops("aten::_softmax", {A::tensor({4, 10}), A::integer(-1), A::boolean(false)}), 200.0);
  EXPECT_EQ(flops("aten::_log_softmax", {A::tensor({4, 10}), A::integer(-1), A::boolean(false)}), 200.0);
  // layer_norm over [32,17,32] = 17408 elements with weight and bias: 7 per element = 121856
  EXPECT_EQ(flops("aten::native_layer_norm",
                  {A::tensor({32, 17, 32}), A::ints({32}), A::tensor({32}), A::tensor({32}), A::none()}),
            121856.0);
  // without weight and bias: 5 per element = 87040
  EXPECT_EQ(flops("aten::layer_norm", {A::tensor({32, 17, 32}), A::ints({32}), A::none(), A::none()}),
            87040.0);
  // gelu on 100 elements: erf form 5 each = 500, tanh form 9 each = 900
  EXPECT_EQ(flops("aten::gelu", {A::tensor({10, 10}), A::string("none")}), 500.0);
  EXPECT_EQ(flops("aten::gelu", {A::tensor({10, 10}), A::string("tanh")}), 900.0);
  // relu, add (broadcast [4,1] + [1,5] = 20 elements), addcmul_ (3 per element)
  EXPECT_EQ(flops("aten::relu", {A::tensor({4, 5})}), 20.0);
  EXPECT_EQ(flops("aten::add", {A::tensor({4, 1}), A::tensor({1, 5})}), 20.0);
  EXPECT_EQ(flops("aten::add", {A::tensor({4, 2}), A::tensor({3, 5})}), std::nullopt);
  EXPECT_EQ(flops("aten::addcmul_", {A::tensor({6}), A::tensor({6}), A::tensor({6})}), 18.0);
  // attention: q, k, v [2,4,16,8], no mask: per batch element 2*16*16*8 (QK) + 256 (scale) +
  // 5*256 (softmax) + 2*16*16*8 (AV) = 4096 + 256 + 1280 + 4096 = 9728; 8 batch elements = 77824
  EXPECT_EQ(flops("aten::_scaled_dot_product_attention",
                  {A::tensor({2, 4, 16, 8}), A::tensor({2, 4, 16, 8}), A::tensor({2, 4, 16, 8}), A::none()}),
            77824.0);
  // with a mask: + 256 per batch element = 79872
  EXPECT_EQ(flops("aten::_scaled_dot_product_attention", {A::tensor({2, 4, 16, 8}), A::tensor({2, 4, 16, 8}),
                                                          A::tensor({2, 4, 16, 8}), A::tensor({16, 16})}),
            79872.0);
}

TEST(Flops, BackwardOps) {
  // _softmax_backward_data(grad, output, dim, dtype) on [4,10]: 4 per element = 160
  EXPECT_EQ(flops("aten::_softmax_backward_data", {A::tensor({4, 10}), A::tensor({4, 10}), A::integer(-1)}),
            160.0);
  EXPECT_EQ(
      flops("aten::_log_softmax_backward_data", {A::tensor({4, 10}), A::tensor({4, 10}), A::integer(-1)}),
      160.0);
  // native_layer_norm_backward on [8,32] = 256 elements with a weight, all gradients:
  // (11 + 2 + 1) * 256 = 3584; input gradient only, no weight: 10 * 256 = 2560
  std::vector<OpArg> ln = {A::tensor({8, 32}), A::tensor({8, 32}), A::ints({32}),   A::tensor({8, 1}),
                           A::tensor({8, 1}),  A::tensor({32}),    A::tensor({32}), A::ints({1, 1, 1})};
  EXPECT_EQ(op_flops("aten::native_layer_norm_backward", ln), 3584.0);
  ln[5] = A::none();
  ln[7] = A::ints({1, 0, 0});
  EXPECT_EQ(op_flops("aten::native_layer_norm_backward", ln), 2560.0);
  // gelu_backward (erf form) on 100 elements: 11 each = 1100; the tanh form has no formula
  EXPECT_EQ(flops("aten::gelu_backward", {A::tensor({10, 10}), A::tensor({10, 10}), A::string("none")}),
            1100.0);
  EXPECT_EQ(flops("aten::gelu_backward", {A::tensor({10, 10}), A::tensor({10, 10}), A::string("tanh")}),
            std::nullopt);
  // embedding_dense_backward(grad [32,16,32], indices, 16, -1, false): one add per element = 16384
  EXPECT_EQ(flops("aten::embedding_dense_backward", {A::tensor({32, 16, 32}), A::tensor({32, 16}),
                                                     A::integer(16), A::integer(-1), A::boolean(false)}),
            16384.0);
  EXPECT_EQ(flops("aten::embedding_dense_backward", {A::tensor({32, 16, 32}), A::tensor({32, 16}),
                                                     A::integer(16), A::integer(-1), A::boolean(true)}),
            32768.0);
  // threshold_backward (relu's backward) on [4,5]: 20
  EXPECT_EQ(flops("aten::threshold_backward", {A::tensor({4, 5}), A::tensor({4, 5}), A::integer(0)}), 20.0);
}

TEST(Flops, ZeroAndUnknown) {
  EXPECT_EQ(flops("aten::view", {A::tensor({4, 5}), A::ints({20})}), 0.0);
  EXPECT_EQ(flops("aten::slice_backward", {A::tensor({4, 5})}), 0.0);
  EXPECT_EQ(flops("aten::embedding", {A::tensor({16, 32}), A::tensor({32, 16})}), 0.0);
  EXPECT_TRUE(has_flops_formula("aten::copy_"));
  EXPECT_EQ(flops("aten::some_custom_op", {A::tensor({4})}), std::nullopt);
  EXPECT_FALSE(has_flops_formula("aten::some_custom_op"));
  EXPECT_FALSE(has_flops_formula("aten::cumsum"));
  // a shape longer than OpArg::kMaxValues is not captured
  EXPECT_EQ(A::tensor({1, 1, 1, 1, 1, 1, 1, 1, 1}).kind, OpArg::Kind::kOther);
}

}  // namespace
}  // namespace tfdebug::profile
