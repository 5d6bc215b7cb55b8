#include "tfdebug/core/tensor.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

namespace tfdebug {
namespace {

TEST(Tensor, ZeroFilledAndTyped) {
  Tensor t(DType::f64, {2, 3});
  EXPECT_EQ(t.numel(), 6);
  for (double x : t.values<double>()) EXPECT_EQ(x, 0.0);
  t.values<double>()[4] = 7.0;
  EXPECT_EQ(t.at({1, 1}), 7.0);
  EXPECT_THROW((void)t.values<float>(), Error);
  Tensor h(DType::bf16, {4});
  EXPECT_EQ(h.values<std::uint16_t>().size(), 4u);
  EXPECT_THROW((void)h.values<float>(), Error);
}

TEST(Tensor, CopyOfStridedViewIsRowMajor) {
  std::vector<float> data(12);
  std::iota(data.begin(), data.end(), 0.0f);
  const TensorView v(data.data(), DType::f32, {3, 4});
  const Tensor t = Tensor::copy_of(v.transposed(0, 1).flipped(1), DType::f64);
  ASSERT_EQ(t.shape().size(), 2u);
  EXPECT_EQ(t.shape()[0], 4);
  const std::vector<double> expected = {8, 4, 0, 9, 5, 1, 10, 6, 2, 11, 7, 3};
  const auto values = t.values<double>();
  EXPECT_EQ(std::vector<double>(values.begin(), values.end()), expected);

  const Tensor same = Tensor::copy_of(v.sliced(1, 0, 4, 3));
  EXPECT_EQ(same.dtype(), DType::f32);
  const auto f = same.values<float>();
  EXPECT_EQ(std::vector<float>(f.begin(), f.end()), (std::vector<float>{0, 3, 4, 7, 8, 11}));
}

TEST(Tensor, CopyOfConvertsNarrowFloatsExactly) {
  const std::uint16_t halves[3] = {0x3C00, 0xFC00, 0x0001};  // 1, -inf, 2^-24
  const Tensor t = Tensor::copy_of(TensorView(halves, DType::f16, {3}), DType::f32);
  EXPECT_EQ(t.values<float>()[0], 1.0f);
  EXPECT_EQ(t.values<float>()[1], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(t.values<float>()[2], 0x1p-24f);
  EXPECT_THROW(Tensor::copy_of(TensorView(halves, DType::f16, {3}), DType::i32), Error);
}

TEST(Tensor, FromValuesChecksTheCount) {
  const std::vector<float> values = {1, 2, 3, 4, 5, 6};
  const std::int64_t shape[] = {2, 3};
  const Tensor t = Tensor::from_values(values, shape);
  EXPECT_EQ(t.at({1, 0}), 4.0);
  const std::int64_t wrong[] = {4, 2};
  EXPECT_THROW(Tensor::from_values(values, wrong), Error);
}

}  // namespace
}  // namespace tfdebug
