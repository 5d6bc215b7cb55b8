#include "canvas.hpp"

#include <pango/pangocairo.h>

#include <memory>
#include <string>
#include <vector>

#include "tfdebug/core/utf8.hpp"

namespace tfdebug::viz::detail {
namespace {

struct LayoutDeleter {
  void operator()(PangoLayout* layout) const noexcept { g_object_unref(layout); }
};
using LayoutPtr = std::unique_ptr<PangoLayout, LayoutDeleter>;

// `text` with each invalid UTF-8 step replaced by U+FFFD.
std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const Utf8Step step = next_utf8(text, i);
    if (step.valid) {
      out.append(text.substr(i, step.length));
    } else {
      out.append("\xEF\xBF\xBD");
    }
    i += step.length;
  }
  return out;
}

// Byte offsets where each code point of valid UTF-8 starts, and text.size() at the end.
std::vector<std::size_t> code_point_starts(std::string_view text) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < text.size(); i += next_utf8(text, i).length) starts.push_back(i);
  starts.push_back(text.size());
  return starts;
}

LayoutPtr make_layout(cairo_t* cr, std::string_view text, Font font) {
  LayoutPtr layout(pango_cairo_create_layout(cr));
  PangoFontDescription* description = pango_font_description_from_string("DejaVu Sans");
  pango_font_description_set_absolute_size(description, font.size * PANGO_SCALE);
  pango_font_description_set_weight(description, font.bold ? PANGO_WEIGHT_BOLD : PANGO_WEIGHT_NORMAL);
  pango_layout_set_font_description(layout.get(), description);
  pango_font_description_free(description);
  // Names come from model files: pango needs valid UTF-8 and would warn and draw nothing.
  const std::string valid = valid_utf8(text);
  pango_layout_set_text(layout.get(), valid.data(), static_cast<int>(valid.size()));
  return layout;
}

double offset(Align align, double extent) {
  switch (align) {
    case Align::start:
      return 0;
    case Align::middle:
      return -extent / 2;
    case Align::end:
      return -extent;
  }
  return 0;
}

}  // namespace

void Canvas::set_color(Rgb color, double alpha) const {
  cairo_set_source_rgba(cr_, color.r / 255.0, color.g / 255.0, color.b / 255.0, alpha);
}

void Canvas::line(double x0, double y0, double x1, double y1, Rgb color, double width) const {
  set_color(color);
  cairo_set_line_width(cr_, width);
  cairo_move_to(cr_, x0, y0);
  cairo_line_to(cr_, x1, y1);
  cairo_stroke(cr_);
}

void Canvas::rect(double x, double y, double w, double h, Rgb color, double alpha) const {
  set_color(color, alpha);
  cairo_rectangle(cr_, x, y, w, h);
  cairo_fill(cr_);
}

TextSize Canvas::measure(std::string_view text, Font font) const {
  if (text.empty()) return {};
  LayoutPtr layout = make_layout(cr_, text, font);
  int w = 0, h = 0;
  pango_layout_get_pixel_size(layout.get(), &w, &h);
  return {static_cast<double>(w), static_cast<double>(h)};
}

void Canvas::text(std::string_view text, double x, double y, Align horizontal, Align vertical, Font font,
                  Rgb color, double angle) const {
  if (text.empty()) return;
  LayoutPtr layout = make_layout(cr_, text, font);
  int w = 0, h = 0;
  pango_layout_get_pixel_size(layout.get(), &w, &h);
  cairo_save(cr_);
  cairo_translate(cr_, x, y);
  if (angle != 0) cairo_rotate(cr_, -angle * G_PI / 180.0);
  cairo_move_to(cr_, offset(horizontal, w), offset(vertical, h));
  set_color(color);
  pango_cairo_show_layout(cr_, layout.get());
  cairo_restore(cr_);
}

std::string Canvas::fit(std::string_view text, Font font, double max_width) const {
  std::string whole = valid_utf8(text);
  if (measure(whole, font).width <= max_width) return whole;
  // Keep the start and the end (layer names differ at both); cut code points, not bytes.
  const std::vector<std::size_t> starts = code_point_starts(whole);
  const std::size_t points = starts.size() - 1;
  for (std::size_t keep = points; keep-- > 1;) {
    const std::size_t head = (keep + 1) / 2, tail = keep / 2;
    std::string candidate = whole.substr(0, starts[head]) + "\u2026" + whole.substr(starts[points - tail]);
    if (measure(candidate, font).width <= max_width) return candidate;
  }
  return {};
}

}  // namespace tfdebug::viz::detail
