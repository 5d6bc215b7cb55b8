// Palettes of at most 256 colours for GIF frames: the exact colours of a region when it has few
// enough, else the flat areas' colours and median cut (Heckbert, 1982) for the rest. Private to
// the GIF writer.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "animation_frames.hpp"

namespace tfdebug::viz::detail {

// A set of at most `kMaxColors` distinct colours, each with its index in insertion order: the
// exact palette of a region, and the lookup from colour to index when writing it.
class ExactPalette {
 public:
  static constexpr std::size_t kMaxColors = 256;

  // Adds the colour unless present; false (and nothing added) when it is new and the palette is
  // full.
  bool add(PackedRgb color);
  // Adds every pixel; false as soon as one does not fit (the palette then holds kMaxColors).
  bool add_all(std::span<const PackedRgb> pixels);
  // The colour's index; the colour must have been added.
  std::uint8_t index_of(PackedRgb color) const;
  // The colour's index, or nullopt when it was never added.
  std::optional<std::uint8_t> find(PackedRgb color) const;

  std::size_t size() const noexcept { return colors_.size(); }
  const std::vector<PackedRgb>& colors() const noexcept { return colors_; }

 private:
  // Open addressing, four times the most colours held: short probe sequences.
  static constexpr std::size_t kSlots = 1024;
  std::size_t slot_of(PackedRgb color) const noexcept;
  std::array<std::uint32_t, kSlots> keys_{};  // colour + 1; 0 is an empty slot
  std::array<std::uint8_t, kSlots> indices_{};
  std::vector<PackedRgb> colors_;
};

// A palette chosen by median cut and each pixel's nearest entry in it. Colours that cover many
// pixels (flat areas) get entries of their own first, so they stay exact.
struct QuantizedRegion {
  std::vector<PackedRgb> palette;     // at most max_colors
  std::vector<std::uint8_t> indices;  // one per pixel
};
QuantizedRegion median_cut(std::span<const PackedRgb> pixels, std::size_t max_colors);

}  // namespace tfdebug::viz::detail
