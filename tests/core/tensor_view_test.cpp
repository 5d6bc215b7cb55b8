#include "tfdebug/core/tensor_view.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/stats.hpp"

namespace tfdebug {
namespace {

std::vector<float> iota(int n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

TEST(TensorView, ContiguousShapeAndStrides) {
  const auto data = iota(24);
  const TensorView v(data.data(), DType::f32, {2, 3, 4});
  EXPECT_EQ(v.rank(), 3);
  EXPECT_EQ(v.numel(), 24);
  EXPECT_EQ(v.stride(0), 12);
  EXPECT_EQ(v.stride(1), 4);
  EXPECT_EQ(v.stride(2), 1);
  EXPECT_TRUE(v.is_contiguous());
  EXPECT_EQ(v.at({1, 2, 3}), 23.0);
  EXPECT_EQ(v.describe(), "f32[2, 3, 4]");
}

TEST(TensorView, TransposeSliceFlipBroadcast) {
  const auto data = iota(12);
  const TensorView v(data.data(), DType::f32, {3, 4});
  const TensorView t = v.transposed(0, 1);
  EXPECT_EQ(t.shape(0), 4);
  EXPECT_EQ(t.at({3, 2}), 11.0);
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.describe(), "f32[4, 3] strides [1, 4]");

  const TensorView s = v.sliced(1, 1, 4, 2);  // columns 1 and 3
  EXPECT_EQ(s.shape(1), 2);
  EXPECT_EQ(s.at({2, 1}), 11.0);
  EXPECT_EQ(s.at({0, 0}), 1.0);

  const TensorView f = v.flipped(0);
  EXPECT_EQ(f.stride(0), -4);
  EXPECT_EQ(f.at({0, 0}), 8.0);
  EXPECT_EQ(f.at({2, 3}), 3.0);

  const TensorView row = v.sliced(0, 1, 2);
  const TensorView b = row.broadcast(0, 5);
  EXPECT_EQ(b.stride(0), 0);
  EXPECT_EQ(b.numel(), 20);
  EXPECT_EQ(b.at({4, 2}), 6.0);
}

// Regression (fuzz/gguf_fuzz.cpp): the strides of an empty tensor with huge other dimensions
// overflowed 64 bits; an empty tensor's strides address nothing.
TEST(TensorView, EmptyTensorWithHugeDimensions) {
  const float x = 0;
  const std::int64_t huge = std::int64_t{1} << 40;
  const TensorView v(&x, DType::f32, {0, huge, huge});
  EXPECT_EQ(v.numel(), 0);
  EXPECT_TRUE(v.is_contiguous());
  EXPECT_EQ(compute_stats(v).count, 0);
  const TensorView t = v.transposed(0, 2);  // [2^40, 2^40, 0]: numel must not multiply first
  EXPECT_EQ(t.numel(), 0);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(compute_stats(t).count, 0);
}

TEST(TensorView, RankZeroIsOneElement) {
  const float x = 2.5f;
  const TensorView v(&x, DType::f32, std::span<const std::int64_t>{});
  EXPECT_EQ(v.numel(), 1);
  EXPECT_TRUE(v.is_contiguous());
  EXPECT_EQ(v.at(std::span<const std::int64_t>{}), 2.5);
}

TEST(TensorView, BadArgumentsThrowClearErrors) {
  const auto data = iota(12);
  const TensorView v(data.data(), DType::f32, {3, 4});
  EXPECT_THROW(v.at({3, 0}), Error);
  EXPECT_THROW(v.at({0}), Error);
  EXPECT_THROW(v.transposed(0, 2), Error);
  EXPECT_THROW(v.sliced(1, 2, 5), Error);
  EXPECT_THROW(v.broadcast(0, 4), Error);
  EXPECT_THROW(TensorView(data.data(), DType::f32, {-1, 2}), Error);
  EXPECT_THROW(TensorView(data.data(), DType::f32, {1, 1, 1, 1, 1, 1, 1, 1, 1}), Error);
  EXPECT_THROW(TensorView(data.data(), DType::f32, {std::int64_t{1} << 40, std::int64_t{1} << 40}), Error);
  try {
    (void)v.at({0, 9});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of range for dimension 1 of f32[3, 4]"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tfdebug
