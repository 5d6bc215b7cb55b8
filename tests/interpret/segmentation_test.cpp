// Quickshift superpixels: every pixel labelled, labels 0..count-1 all used, one segment per
// region of one colour, deterministic.
#include "tfdebug/interpret/segmentation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

// A [channels, h, w] image whose pixel (r, c) has value(r, c) in every channel.
template <class F>
std::vector<float> image(std::int64_t channels, std::int64_t h, std::int64_t w, F value) {
  std::vector<float> out;
  for (std::int64_t k = 0; k < channels; ++k)
    for (std::int64_t r = 0; r < h; ++r)
      for (std::int64_t c = 0; c < w; ++c) out.push_back(static_cast<float>(value(r, c) * (k + 1)));
  return out;
}

void expect_contiguous_labels(const Segmentation& s, std::size_t pixels) {
  ASSERT_EQ(s.labels.size(), pixels);
  std::set<std::int32_t> used(s.labels.begin(), s.labels.end());
  EXPECT_EQ(used.size(), static_cast<std::size_t>(s.count));
  EXPECT_EQ(*used.begin(), 0);
  EXPECT_EQ(*used.rbegin(), s.count - 1);
}

TEST(Quickshift, ATwoRegionImageGivesTwoSegments) {
  for (const std::int64_t channels : {1, 3}) {
    const auto pixels =
        image(channels, 40, 40, [](std::int64_t, std::int64_t c) { return c < 20 ? 0.0 : 1.0; });
    const Segmentation s = quickshift(pixels, channels, 40, 40);
    expect_contiguous_labels(s, 1600);
    EXPECT_EQ(s.count, 2);
    for (std::int64_t r = 0; r < 40; ++r)
      for (std::int64_t c = 0; c < 40; ++c)
        EXPECT_EQ(s.labels[static_cast<std::size_t>(r * 40 + c)], c < 20 ? 0 : 1);
  }
}

TEST(Quickshift, FourQuadrantsGiveFourSegmentsAndATexturedImageIsFullyLabelled) {
  const auto quadrants =
      image(1, 40, 40, [](std::int64_t r, std::int64_t c) { return (r < 20) == (c < 20) ? 1.0 : 0.0; });
  const Segmentation q = quickshift(quadrants, 1, 40, 40);
  expect_contiguous_labels(q, 1600);
  EXPECT_EQ(q.count, 4);
  EXPECT_EQ(q.labels[0], 0);
  EXPECT_EQ(q.labels[39], 1);
  EXPECT_EQ(q.labels[20 * 40], 2);
  EXPECT_EQ(q.labels[39 * 40 + 39], 3);
  // Smooth texture: many segments, every pixel labelled, and the same answer twice.
  const auto texture =
      image(3, 64, 64, [](std::int64_t r, std::int64_t c) { return std::sin(0.4 * r) * std::cos(0.3 * c); });
  const Segmentation t = quickshift(texture, 3, 64, 64);
  expect_contiguous_labels(t, 64 * 64);
  EXPECT_GT(t.count, 1);
  EXPECT_EQ(quickshift(texture, 3, 64, 64).labels, t.labels);
}

TEST(Quickshift, BadInputIsAClearError) {
  const std::vector<float> pixels(10, 0.0f);
  EXPECT_THROW(quickshift(pixels, 1, 3, 3), Error);
  QuickshiftOptions o;
  o.kernel_size = 0;
  EXPECT_THROW(quickshift(pixels, 1, 2, 5, o), Error);
  const Segmentation flat = quickshift(pixels, 1, 2, 5);  // one colour, small: one segment
  EXPECT_EQ(flat.count, 1);
}

}  // namespace
}  // namespace tfdebug::interpret
