#include "tfdebug/viz/color.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

namespace tfdebug::viz {
namespace {

constexpr std::array<Rgb, 8> kOkabeIto{{
    {0, 114, 178},    // blue
    {230, 159, 0},    // orange
    {0, 158, 115},    // bluish green
    {213, 94, 0},     // vermillion
    {204, 121, 167},  // reddish purple
    {86, 180, 233},   // sky blue
    {240, 228, 66},   // yellow
    {0, 0, 0},        // black
}};

// viridis at t = 0, 1/8, ..., 1 (van der Walt and Smith's map, as matplotlib samples it);
// linear interpolation between the stops stays within 2 levels of the 256-entry table.
constexpr std::array<Rgb, 9> kViridis{{
    {68, 1, 84},
    {72, 40, 120},
    {62, 73, 137},
    {49, 104, 142},
    {38, 130, 142},
    {31, 158, 137},
    {53, 183, 121},
    {110, 206, 88},
    {253, 231, 37},
}};

// ColorBrewer's RdBu at five stops, reversed so that low is blue.
constexpr std::array<Rgb, 5> kDiverging{{
    {33, 102, 172},
    {103, 169, 207},
    {247, 247, 247},
    {239, 138, 98},
    {178, 24, 43},
}};

template <std::size_t N>
Rgb interpolate(const std::array<Rgb, N>& stops, double t) {
  const double position = t * static_cast<double>(N - 1);
  const auto i = static_cast<std::size_t>(std::min(position, static_cast<double>(N - 2)));
  const double f = position - static_cast<double>(i);
  auto mix = [f](std::uint8_t a, std::uint8_t b) {
    return static_cast<std::uint8_t>(std::lround(a + (b - a) * f));
  };
  return {mix(stops[i].r, stops[i + 1].r), mix(stops[i].g, stops[i + 1].g), mix(stops[i].b, stops[i + 1].b)};
}

}  // namespace

std::span<const Rgb> palette() noexcept {
  return kOkabeIto;
}

Rgb series_color(std::size_t index) noexcept {
  return kOkabeIto[index % kOkabeIto.size()];
}

Rgb missing_color() noexcept {
  return {224, 224, 224};
}

Rgb map_color(Colormap map, double t) noexcept {
  if (std::isnan(t)) return missing_color();
  t = std::clamp(t, 0.0, 1.0);
  return map == Colormap::viridis ? interpolate(kViridis, t) : interpolate(kDiverging, t);
}

std::string to_hex(Rgb color) {
  char text[8];
  std::snprintf(text, sizeof text, "#%02x%02x%02x", color.r, color.g, color.b);
  return text;
}

}  // namespace tfdebug::viz
