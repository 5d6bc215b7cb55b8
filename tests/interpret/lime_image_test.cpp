// LIME for images on a model that reads one region only: its superpixel gets the highest weight;
// the surrogate against python3-sklearn's Ridge; seeding; the fills.
#include "tfdebug/interpret/lime_image.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "lime_check.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

// [1, 40, 40] images; output 0 = the sum of the top-left 20 x 20 pixels, squared over 400 (not
// linear in the masks), output 1 = the sum of the whole image.
class RegionModel : public ForwardModel {
 public:
  std::vector<std::int64_t> input_shape() const override { return {1, 40, 40}; }
  std::int64_t output_size() const override { return 2; }
  void forward(const TensorView& x, std::span<float> out) override {
    const auto* p = static_cast<const float*>(x.data());
    for (std::int64_t i = 0; i < x.shape(0); ++i, p += 1600) {
      double region = 0, all = 0;
      for (std::int64_t r = 0; r < 40; ++r)
        for (std::int64_t c = 0; c < 40; ++c) {
          all += p[r * 40 + c];
          if (r < 20 && c < 20) region += p[r * 40 + c];
        }
      out[static_cast<std::size_t>(2 * i)] = static_cast<float>(region * region / 400);
      out[static_cast<std::size_t>(2 * i + 1)] = static_cast<float>(all);
      largest_batch = std::max(largest_batch, x.shape(0));
    }
  }
  std::int64_t largest_batch = 0;
};

// Quadrants of 1 and 2 (top-left and bottom-right 1): four superpixels.
std::vector<float> quadrants() {
  std::vector<float> out;
  for (int r = 0; r < 40; ++r)
    for (int c = 0; c < 40; ++c) out.push_back((r < 20) == (c < 20) ? 1.0f : 2.0f);
  return out;
}

TEST(LimeImage, TheRegionTheModelReadsGetsTheHighestWeight) {
  RegionModel m;
  const std::vector<float> x = quadrants();
  LimeImageOptions o;
  o.hide = HiddenFill::value;  // 0: a hidden superpixel is black
  o.seed = 2;
  const LimeImageAttribution a = lime_image(m, x, 0, o);
  ASSERT_EQ(a.superpixel_weights.size(), 4U);
  const std::int32_t read = a.segments[0];  // the top-left superpixel
  for (std::size_t s = 0; s < 4; ++s) {
    if (static_cast<std::int32_t>(s) == read) continue;
    EXPECT_GT(a.superpixel_weights[static_cast<std::size_t>(read)], a.superpixel_weights[s] + 100) << s;
    EXPECT_NEAR(a.superpixel_weights[s], 0, 1);  // the model never looks there (up to the ridge)
  }
  EXPECT_NEAR(a.output, 400, 1e-3);
  EXPECT_EQ(a.values.size(), 1600U);
  EXPECT_EQ(a.values[0],
            a.superpixel_weights[static_cast<std::size_t>(read)]);  // per pixel, in the input's shape
  EXPECT_EQ(a.shape, (std::vector<std::int64_t>{1, 40, 40}));
  EXPECT_EQ(a.evaluations, 1000);
  EXPECT_GE(a.r2, 0.99);  // one superpixel, on or off: the surrogate is exact up to the ridge
  // The whole image's sum weighs each superpixel by its pixels' total: 400 or 800.
  const LimeImageAttribution all = lime_image(m, x, 1, o);
  for (std::size_t s = 0; s < 4; ++s) {
    const double value = x[static_cast<std::size_t>(
        std::find(a.segments.begin(), a.segments.end(), static_cast<std::int32_t>(s)) - a.segments.begin())];
    EXPECT_NEAR(all.superpixel_weights[s], 400 * value, 0.03 * 400 * value) << s;  // up to the ridge
  }
}

TEST(LimeImage, MeanFillAndTheSurrogateIsSklearnsRidge) {
  RegionModel m;
  // A gradient inside each quadrant, so a superpixel's mean differs from its pixels.
  std::vector<float> x = quadrants();
  for (std::size_t p = 0; p < x.size(); ++p) x[p] += 0.01f * static_cast<float>(p % 40);
  LimeImageOptions o;
  o.samples = 300;
  o.seed = 3;
  o.keep_neighbourhood = true;
  const LimeImageAttribution a = lime_image(m, x, 0, o);
  EXPECT_GE(a.r2, 0);
  EXPECT_LE(a.r2, 1);
  EXPECT_TRUE(testing::sklearn_agrees(a, a.superpixel_weights, "lime_image"));
  // Same seed, any batch: bit for bit.
  o.max_batch = 7;
  const LimeImageAttribution b = lime_image(m, x, 0, o);
  EXPECT_EQ(a.superpixel_weights, b.superpixel_weights);
  EXPECT_EQ(a.intercept, b.intercept);
  EXPECT_EQ(m.largest_batch, 64);
  // Given superpixels are used as given.
  o.segments.assign(1600, 0);
  for (std::size_t p = 0; p < 1600; ++p) o.segments[p] = p % 40 < 20 ? 0 : 1;
  EXPECT_EQ(lime_image(m, x, 0, o).superpixel_weights.size(), 2U);
  o.segments.resize(5);
  EXPECT_THROW(lime_image(m, x, 0, o), Error);
}

}  // namespace
}  // namespace tfdebug::interpret
