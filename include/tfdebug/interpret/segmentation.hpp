// Superpixels for LIME on images: quickshift (Vedaldi & Soatto 2008), as scikit-image's
// `quickshift` that upstream LIME calls (kernel_size 4, max_dist 200, ratio 0.2).
//
//   const auto s = tfdebug::interpret::quickshift(pixels, /*channels=*/3, /*height=*/32, /*width=*/32);
//   // s.labels[h * width + w] in 0 .. s.count - 1
//
// Why quickshift rather than SLIC: it is what LIME uses, so explanations are comparable, and it
// needs no segment count: a region of one colour becomes one segment whatever its size, where SLIC
// cuts it along a grid. Each pixel's density is the sum over a (2 * 3 kernel_size + 1)^2 window of
// exp(-d^2 / (2 kernel_size^2)), d the distance in (row, column, ratio * colour); each pixel links
// to the nearest pixel of its window with a higher density, unless that is farther than max_dist;
// the trees are the segments. Two departures, both because the input need not be RGB: the
// channels are not converted to Lab but rescaled so that the image's range spans 0..100 (Lab's
// lightness range), and ties of density are broken by the larger pixel index instead of
// scikit-image's random jitter (deterministic, nothing to seed). Labels are numbered 0.. in the
// order their first pixel appears (row-major), so every label in 0..count-1 is used.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tfdebug::interpret {

struct QuickshiftOptions {
  double kernel_size = 4;
  double max_dist = 200;
  double ratio = 0.2;
};

struct Segmentation {
  std::vector<std::int32_t> labels;  // one per pixel, row-major [height, width]
  std::int32_t count = 0;
};

// pixels: [channels, height, width], row-major.
Segmentation quickshift(std::span<const float> pixels, std::int64_t channels, std::int64_t height,
                        std::int64_t width, const QuickshiftOptions& options = {});

}  // namespace tfdebug::interpret
