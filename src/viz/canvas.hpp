// Canvas: a cairo context with the few drawing operations plots need, and text laid out by pango
// in DejaVu Sans (fonts-dejavu-core), so that PNG, SVG and PDF show the same glyphs.
#pragma once

#include <cairo.h>

#include <string>
#include <string_view>

#include "tfdebug/viz/color.hpp"

namespace tfdebug::viz::detail {

enum class Align { start, middle, end };

struct TextSize {
  double width = 0, height = 0;
};

struct Font {
  double size = 12;  // pixels
  bool bold = false;
};

inline constexpr Font kTitleFont{15, true};
inline constexpr Font kLabelFont{12, false};
inline constexpr Font kTickFont{11, false};
inline constexpr Rgb kInk{33, 33, 33};
inline constexpr Rgb kMutedInk{102, 102, 102};
inline constexpr Rgb kGrid{230, 230, 230};
inline constexpr Rgb kNonfiniteMark{213, 94, 0};  // the palette's vermillion

class Canvas {
 public:
  explicit Canvas(cairo_t* cr) : cr_(cr) {}
  cairo_t* cr() const noexcept { return cr_; }

  void set_color(Rgb color, double alpha = 1.0) const;
  void line(double x0, double y0, double x1, double y1, Rgb color, double width = 1.0) const;
  void rect(double x, double y, double w, double h, Rgb color, double alpha = 1.0) const;

  TextSize measure(std::string_view text, Font font) const;
  // Draws `text` with its anchor at (x, y): horizontally at its start, middle or end, vertically
  // at its top, middle or bottom. angle: degrees counter-clockwise about the anchor (90 reads
  // from bottom to top, as a y axis title does).
  void text(std::string_view text, double x, double y, Align horizontal, Align vertical, Font font,
            Rgb color = kInk, double angle = 0) const;
  // `text` cut with an ellipsis in the middle to fit `max_width` pixels ("" when nothing fits).
  std::string fit(std::string_view text, Font font, double max_width) const;

 private:
  cairo_t* cr_;
};

}  // namespace tfdebug::viz::detail
