#include "tfdebug/interpret/segmentation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {

Segmentation quickshift(std::span<const float> pixels, std::int64_t channels, std::int64_t height,
                        std::int64_t width, const QuickshiftOptions& o) {
  if (channels < 1 || height < 1 || width < 1 ||
      pixels.size() != static_cast<std::size_t>(channels * height * width)) {
    throw Error("quickshift: " + std::to_string(pixels.size()) + " values are not an image of " +
                std::to_string(channels) + " x " + std::to_string(height) + " x " + std::to_string(width));
  }
  if (!(o.kernel_size > 0) || !(o.max_dist >= 0) || !(o.ratio >= 0))
    throw Error("quickshift: kernel_size must be > 0, max_dist and ratio >= 0");
  const auto c = static_cast<std::size_t>(channels);
  const auto h = static_cast<std::size_t>(height), w = static_cast<std::size_t>(width);
  const std::size_t area = h * w;
  // Pixel-major colours, the image's range mapped to 0..100, times the ratio.
  float low = std::numeric_limits<float>::infinity(), high = -low;
  for (const float v : pixels) {
    if (!std::isfinite(v)) throw Error("quickshift: the image has a non-finite value");
    low = std::min(low, v), high = std::max(high, v);
  }
  const double unit = high > low ? 100.0 / (static_cast<double>(high) - low) : 0.0;
  std::vector<double> colour(area * c);
  for (std::size_t k = 0; k < c; ++k)
    for (std::size_t p = 0; p < area; ++p)
      colour[p * c + k] = o.ratio * unit * (static_cast<double>(pixels[k * area + p]) - low);
  const auto reach = static_cast<std::ptrdiff_t>(3 * o.kernel_size);
  const auto distance2 = [&](std::size_t p, std::size_t q) {
    const std::size_t p_row = p / w, q_row = q / w;  // whole rows: integer division meant
    const auto dr = static_cast<double>(p_row) - static_cast<double>(q_row);
    const auto dc = static_cast<double>(p % w) - static_cast<double>(q % w);
    double d = dr * dr + dc * dc;
    for (std::size_t k = 0; k < c; ++k)
      d += (colour[p * c + k] - colour[q * c + k]) * (colour[p * c + k] - colour[q * c + k]);
    return d;
  };
  const auto window = [&](std::size_t p, auto&& visit) {
    const auto r = static_cast<std::ptrdiff_t>(p / w), col = static_cast<std::ptrdiff_t>(p % w);
    const std::ptrdiff_t r0 = std::max<std::ptrdiff_t>(0, r - reach);
    const std::ptrdiff_t r1 = std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(h) - 1, r + reach);
    const std::ptrdiff_t c0 = std::max<std::ptrdiff_t>(0, col - reach);
    const std::ptrdiff_t c1 = std::min<std::ptrdiff_t>(static_cast<std::ptrdiff_t>(w) - 1, col + reach);
    for (std::ptrdiff_t rr = r0; rr <= r1; ++rr)
      for (std::ptrdiff_t cc = c0; cc <= c1; ++cc)
        visit(static_cast<std::size_t>(rr) * w + static_cast<std::size_t>(cc));
  };
  std::vector<double> density(area, 0.0);
  const double two_k2 = 2 * o.kernel_size * o.kernel_size;
  for (std::size_t p = 0; p < area; ++p)
    window(p, [&](std::size_t q) { density[p] += std::exp(-distance2(p, q) / two_k2); });
  // "Higher": a larger density, or the same density and a larger index (ties broken, deterministically).
  const auto higher = [&](std::size_t q, std::size_t p) {
    return density[q] > density[p] || (density[q] == density[p] && q > p);
  };
  std::vector<std::size_t> parent(area);
  for (std::size_t p = 0; p < area; ++p) {
    double closest = std::numeric_limits<double>::infinity();
    parent[p] = p;
    window(p, [&](std::size_t q) {
      if (!higher(q, p)) return;
      const double d = distance2(p, q);
      if (d < closest) closest = d, parent[p] = q;
    });
    if (std::sqrt(closest) > o.max_dist) parent[p] = p;
  }
  // Each pixel to its tree's root: parents are always higher, so the chains end.
  for (std::size_t p = 0; p < area; ++p) {
    std::size_t root = parent[p];
    while (parent[root] != root) root = parent[root];
    parent[p] = root;
  }
  Segmentation s;
  s.labels.assign(area, -1);
  std::vector<std::int32_t> label_of_root(area, -1);
  for (std::size_t p = 0; p < area; ++p) {
    std::int32_t& l = label_of_root[parent[p]];
    if (l < 0) l = s.count++;
    s.labels[p] = l;
  }
  return s;
}

}  // namespace tfdebug::interpret
