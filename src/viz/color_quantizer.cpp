#include "color_quantizer.hpp"

#include <algorithm>
#include <limits>

#include "tfdebug/core/error.hpp"

namespace tfdebug::viz::detail {

std::size_t ExactPalette::slot_of(PackedRgb color) const noexcept {
  // Fibonacci hashing: neighbouring colours (a gradient) land far apart.
  return static_cast<std::size_t>((color * 2654435761u) >> 22) & (kSlots - 1);
}

bool ExactPalette::add(PackedRgb color) {
  for (std::size_t s = slot_of(color);; s = (s + 1) & (kSlots - 1)) {
    if (keys_[s] == color + 1) return true;
    if (keys_[s] != 0) continue;
    if (colors_.size() == kMaxColors) return false;
    keys_[s] = color + 1;
    indices_[s] = static_cast<std::uint8_t>(colors_.size());
    colors_.push_back(color);
    return true;
  }
}

bool ExactPalette::add_all(std::span<const PackedRgb> pixels) {
  // Plots are runs of one colour: a pixel equal to the one before needs no lookup.
  PackedRgb last = 0;
  bool have_last = false;
  for (const PackedRgb c : pixels) {
    if (have_last && c == last) continue;
    if (!add(c)) return false;
    last = c;
    have_last = true;
  }
  return true;
}

std::uint8_t ExactPalette::index_of(PackedRgb color) const {
  for (std::size_t s = slot_of(color);; s = (s + 1) & (kSlots - 1)) {
    if (keys_[s] == color + 1) return indices_[s];
    TFDEBUG_ASSERT(keys_[s] != 0, "colour missing from the palette it was added to");
  }
}

std::optional<std::uint8_t> ExactPalette::find(PackedRgb color) const {
  for (std::size_t s = slot_of(color);; s = (s + 1) & (kSlots - 1)) {
    if (keys_[s] == color + 1) return indices_[s];
    if (keys_[s] == 0) return std::nullopt;
  }
}

namespace {

struct ColorCount {
  PackedRgb color;
  std::uint32_t count;
};

// Pixels of one colour that make it a flat area (Note [Flat areas first]).
constexpr std::uint32_t kFlatArea = 32;

int channel(PackedRgb c, int axis) noexcept {
  return int((c >> (16 - 8 * axis)) & 0xff);
}

// A box of median cut: the distinct colours [begin, end) of the working array.
struct Box {
  std::size_t begin = 0, end = 0;
  std::uint64_t pixels = 0;
  int longest_axis = 0;  // 0 red, 1 green, 2 blue
  int extent = 0;        // the colours' range along it

  void measure(const std::vector<ColorCount>& colors) {
    int lo[3] = {255, 255, 255}, hi[3] = {0, 0, 0};
    pixels = 0;
    for (std::size_t i = begin; i < end; ++i) {
      for (int a = 0; a < 3; ++a) {
        lo[a] = std::min(lo[a], channel(colors[i].color, a));
        hi[a] = std::max(hi[a], channel(colors[i].color, a));
      }
      pixels += colors[i].count;
    }
    longest_axis = 0;
    for (int a = 1; a < 3; ++a) {
      if (hi[a] - lo[a] > hi[longest_axis] - lo[longest_axis]) longest_axis = a;
    }
    extent = hi[longest_axis] - lo[longest_axis];
  }
  // Which box to split next: the one that makes the most error, taken as its pixels times its
  // extent, so that a large flat area and a small spread of colours both get entries.
  double priority() const noexcept { return end - begin < 2 ? -1.0 : double(pixels) * double(extent); }
};

PackedRgb mean_color(const std::vector<ColorCount>& colors, const Box& box) {
  std::uint64_t sum[3] = {0, 0, 0};
  for (std::size_t i = box.begin; i < box.end; ++i) {
    for (int a = 0; a < 3; ++a) sum[a] += std::uint64_t(channel(colors[i].color, a)) * colors[i].count;
  }
  const auto mean = [&](int a) { return std::uint8_t((sum[a] + box.pixels / 2) / box.pixels); };
  return pack(mean(0), mean(1), mean(2));
}

std::uint8_t nearest(const std::vector<PackedRgb>& palette, PackedRgb c) {
  int best = std::numeric_limits<int>::max();
  std::size_t best_index = 0;
  for (std::size_t i = 0; i < palette.size(); ++i) {
    int d = 0;
    for (int a = 0; a < 3; ++a) {
      const int diff = channel(palette[i], a) - channel(c, a);
      d += diff * diff;
    }
    if (d < best) {
      best = d;
      best_index = i;
    }
  }
  return static_cast<std::uint8_t>(best_index);
}

}  // namespace

QuantizedRegion median_cut(std::span<const PackedRgb> pixels, std::size_t max_colors) {
  TFDEBUG_ASSERT(!pixels.empty() && max_colors >= 1 && max_colors <= 256, "median cut of nothing");
  // The distinct colours with their pixel counts. Runs of one colour first (a plot's rows are
  // mostly runs), so that the sort sees a run once rather than each of its pixels.
  std::vector<ColorCount> runs;
  for (std::size_t i = 0; i < pixels.size();) {
    std::size_t j = i + 1;
    while (j < pixels.size() && pixels[j] == pixels[i]) ++j;
    runs.push_back({pixels[i], static_cast<std::uint32_t>(j - i)});
    i = j;
  }
  std::sort(runs.begin(), runs.end(),
            [](const ColorCount& a, const ColorCount& b) { return a.color < b.color; });
  std::vector<ColorCount> colors;
  for (const ColorCount& run : runs) {
    if (!colors.empty() && colors.back().color == run.color) {
      colors.back().count += run.count;
    } else {
      colors.push_back(run);
    }
  }

  // Note [Flat areas first]: a plot is flat areas (background, heatmap cells, bars) and the
  // antialiased edges of text and lines between them. The colours that cover many pixels get an
  // entry of their own, exact; median cut shares the other entries among the rest, whose error
  // only softens an edge.
  QuantizedRegion out;
  std::sort(colors.begin(), colors.end(), [](const ColorCount& a, const ColorCount& b) {
    return a.count != b.count ? a.count > b.count : a.color < b.color;
  });
  const std::size_t most_reserved = max_colors / 2;
  std::size_t reserved = 0;
  while (reserved < colors.size() && reserved < most_reserved && colors[reserved].count >= kFlatArea)
    ++reserved;
  for (std::size_t i = 0; i < reserved; ++i) out.palette.push_back(colors[i].color);

  std::vector<Box> boxes;
  if (reserved < colors.size()) {
    boxes.emplace_back();
    boxes[0].begin = reserved;
    boxes[0].end = colors.size();
    boxes[0].measure(colors);
  }
  while (!boxes.empty() && reserved + boxes.size() < max_colors) {
    const auto widest = std::max_element(
        boxes.begin(), boxes.end(), [](const Box& a, const Box& b) { return a.priority() < b.priority(); });
    if (widest->priority() < 0) break;  // every box is one colour
    Box box = *widest;
    const int axis = box.longest_axis;
    std::sort(colors.begin() + std::ptrdiff_t(box.begin), colors.begin() + std::ptrdiff_t(box.end),
              [axis](const ColorCount& a, const ColorCount& b) {
                return channel(a.color, axis) < channel(b.color, axis);
              });
    // Split at the pixel-weighted median, keeping at least one colour on each side.
    std::uint64_t seen = 0;
    std::size_t split = box.begin + 1;
    for (std::size_t i = box.begin; i + 1 < box.end; ++i) {
      seen += colors[i].count;
      split = i + 1;
      if (2 * seen >= box.pixels) break;
    }
    Box low = box, high = box;
    low.end = split;
    high.begin = split;
    low.measure(colors);
    high.measure(colors);
    *widest = low;
    boxes.push_back(high);
  }

  for (const Box& box : boxes) out.palette.push_back(mean_color(colors, box));
  // Each distinct colour's nearest entry (not merely its box's: a box's mean can be nearer to a
  // colour of the next box), then each pixel by binary search among the distinct colours.
  std::sort(colors.begin(), colors.end(),
            [](const ColorCount& a, const ColorCount& b) { return a.color < b.color; });
  std::vector<std::uint8_t> index_of_color(colors.size());
  for (std::size_t i = 0; i < colors.size(); ++i) index_of_color[i] = nearest(out.palette, colors[i].color);
  out.indices.resize(pixels.size());
  PackedRgb last = pixels[0] + 1;
  std::uint8_t last_index = 0;
  for (std::size_t i = 0; i < pixels.size(); ++i) {
    if (pixels[i] != last) {
      last = pixels[i];
      const auto it = std::lower_bound(colors.begin(), colors.end(), last,
                                       [](const ColorCount& a, PackedRgb c) { return a.color < c; });
      last_index = index_of_color[std::size_t(it - colors.begin())];
    }
    out.indices[i] = last_index;
  }
  return out;
}

}  // namespace tfdebug::viz::detail
