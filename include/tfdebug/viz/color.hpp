// Colours of plots: a colour-blind-safe palette for series and colour maps for heatmaps.
//
//   auto c = tfdebug::viz::series_color(2);                          // the third series' colour
//   auto v = tfdebug::viz::map_color(tfdebug::viz::Colormap::viridis, 0.5);  // a heatmap cell
//   std::string css = tfdebug::viz::to_hex(c);                       // "#009e73"
//
// The series palette is Okabe and Ito's (2008), whose eight colours stay distinct under every
// common colour vision deficiency; past eight, colours repeat (plots then add markers or use small
// multiples). Colour maps: viridis for magnitudes (perceptually uniform, readable in grey), and a
// blue–white–red map for signed values, white at the middle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace tfdebug::viz {

struct Rgb {
  std::uint8_t r = 0, g = 0, b = 0;
  friend bool operator==(Rgb, Rgb) = default;
};

// Okabe–Ito, reordered so that the first colours are the most distinct on white:
// blue, orange, bluish green, vermillion, reddish purple, sky blue, yellow, black.
std::span<const Rgb> palette() noexcept;
Rgb series_color(std::size_t index) noexcept;

enum class Colormap {
  viridis,    // magnitudes: dark purple (low) to yellow (high)
  diverging,  // signed values: blue (low), white (middle), red (high)
};

// The colour of t in [0, 1] (clamped; NaN gives the map's "no value" grey).
Rgb map_color(Colormap map, double t) noexcept;
Rgb missing_color() noexcept;  // cells without a value (NaN): light grey

std::string to_hex(Rgb color);  // "#rrggbb"

}  // namespace tfdebug::viz
