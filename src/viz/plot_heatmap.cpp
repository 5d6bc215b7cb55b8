// Heatmaps with a colour bar. Row 0 is at the top (a matrix reads that way); cells without a
// finite value (or not positive on a log scale) are grey, never the colour of the minimum.
#include <algorithm>
#include <cmath>
#include <memory>

#include "panels.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::viz::detail {
namespace {

constexpr double kBarWidth = 14;
constexpr std::size_t kMaxVectorCells = 20000;  // past this, cells are one raster image

struct ColorScale {
  Colormap map = Colormap::viridis;
  Scale scale = Scale::linear;
  double lo = 0, hi = 1;  // in the scale's units (log10 of the value for log)

  double position(double value) const {
    if (!plottable(value, scale)) return NAN;
    const double v = scale == Scale::log ? std::log10(value) : value;
    return hi > lo ? (v - lo) / (hi - lo) : 0.5;
  }
  Rgb color(double value) const { return map_color(map, position(value)); }
};

ColorScale color_scale(const Heatmap& plot) {
  ColorScale c{plot.map, plot.scale};
  Extent e;
  for (double v : plot.values) e.add(v, plot.scale);
  double lo = plot.lo && plottable(*plot.lo, plot.scale) ? *plot.lo : (e.empty() ? 1 : e.lo);
  double hi = plot.hi && plottable(*plot.hi, plot.scale) ? *plot.hi : (e.empty() ? 1 : e.hi);
  if (lo > hi) std::swap(lo, hi);
  // A diverging map's white is zero: without fixed limits the range is symmetric around it.
  if (plot.map == Colormap::diverging && plot.scale == Scale::linear && !plot.lo && !plot.hi) {
    const double reach = std::max(std::fabs(lo), std::fabs(hi));
    lo = -reach;
    hi = reach;
  }
  c.lo = plot.scale == Scale::log ? std::log10(lo) : lo;
  c.hi = plot.scale == Scale::log ? std::log10(hi) : hi;
  return c;
}

AxisPlan index_axis(std::string title, std::size_t count, const std::vector<std::string>& labels) {
  if (!labels.empty()) return category_axis(std::move(title), labels);
  AxisPlan plan;
  plan.title = std::move(title);
  plan.range = {0, static_cast<double>(std::max<std::size_t>(count, 1))};
  plan.grid = false;
  const Ticks t = linear_ticks(0, static_cast<double>(count > 0 ? count - 1 : 0), 6);
  for (std::size_t i = 0; i < t.values.size(); ++i) {
    if (t.values[i] != std::floor(t.values[i])) continue;  // cells have whole indices
    plan.ticks.push_back(t.values[i] + 0.5);
    plan.labels.push_back(t.labels[i]);
  }
  return plan;
}

struct BarTicks {
  std::vector<double> positions;  // 0 .. 1 along the bar
  std::vector<std::string> labels;
};

BarTicks bar_ticks(const ColorScale& c) {
  BarTicks out;
  const double lo = c.scale == Scale::log ? std::pow(10.0, c.lo) : c.lo;
  const double hi = c.scale == Scale::log ? std::pow(10.0, c.hi) : c.hi;
  const Ticks t = c.scale == Scale::log ? log_ticks(lo, hi, 5) : linear_ticks(lo, hi, 5);
  for (std::size_t i = 0; i < t.values.size(); ++i) {
    out.positions.push_back(c.position(t.values[i]));
    out.labels.push_back(t.labels[i]);
  }
  // The ends are the values a reader looks for first: label them when no tick is there.
  auto near = [&](double p) {
    return std::any_of(out.positions.begin(), out.positions.end(),
                       [p](double q) { return std::fabs(p - q) < 0.08; });
  };
  if (!near(0)) {
    out.positions.insert(out.positions.begin(), 0);
    out.labels.insert(out.labels.begin(), format_value(lo));
  }
  if (!near(1)) {
    out.positions.push_back(1);
    out.labels.push_back(format_value(hi));
  }
  return out;
}

double bar_reserve(const Canvas& canvas, const BarTicks& ticks, const std::string& title) {
  double widest = 0;
  for (const auto& label : ticks.labels) widest = std::max(widest, canvas.measure(label, kTickFont).width);
  return 12 + kBarWidth + 6 + widest + (title.empty() ? 0 : canvas.measure("Ag", kLabelFont).height + 8);
}

void draw_cells(const Canvas& canvas, const Heatmap& plot, const ColorScale& c, const Layout& l) {
  cairo_t* cr = canvas.cr();
  if (plot.rows * plot.cols <= kMaxVectorCells) {
    const double w = (l.right - l.left) / static_cast<double>(plot.cols);
    const double h = (l.bottom - l.top) / static_cast<double>(plot.rows);
    // Without antialiasing: neighbouring cells would otherwise leave faint seams between them.
    cairo_save(cr);
    cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
    for (std::size_t r = 0; r < plot.rows; ++r) {
      for (std::size_t k = 0; k < plot.cols; ++k) {
        const double x0 = std::round(l.left + w * static_cast<double>(k));
        const double x1 = std::round(l.left + w * static_cast<double>(k + 1));
        const double y0 = std::round(l.top + h * static_cast<double>(r));
        const double y1 = std::round(l.top + h * static_cast<double>(r + 1));
        canvas.rect(x0, y0, x1 - x0, y1 - y0, c.color(plot.values[r * plot.cols + k]));
      }
    }
    cairo_restore(cr);
    return;
  }
  const auto cols = static_cast<int>(plot.cols), rows = static_cast<int>(plot.rows);
  std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)> cells(
      cairo_image_surface_create(CAIRO_FORMAT_RGB24, cols, rows), cairo_surface_destroy);
  cairo_surface_flush(cells.get());
  unsigned char* data = cairo_image_surface_get_data(cells.get());
  const int stride = cairo_image_surface_get_stride(cells.get());
  for (int r = 0; r < rows; ++r) {
    auto* row = reinterpret_cast<std::uint32_t*>(data + static_cast<std::ptrdiff_t>(r) * stride);
    for (int k = 0; k < cols; ++k) {
      const Rgb rgb =
          c.color(plot.values[static_cast<std::size_t>(r) * plot.cols + static_cast<std::size_t>(k)]);
      row[k] = (std::uint32_t{rgb.r} << 16) | (std::uint32_t{rgb.g} << 8) | rgb.b;
    }
  }
  cairo_surface_mark_dirty(cells.get());
  cairo_save(cr);
  cairo_translate(cr, l.left, l.top);
  cairo_scale(cr, (l.right - l.left) / cols, (l.bottom - l.top) / rows);
  cairo_set_source_surface(cr, cells.get(), 0, 0);
  cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
  cairo_paint(cr);
  cairo_restore(cr);
}

}  // namespace

Layout draw_panel(const Canvas& canvas, const Heatmap& plot, Box panel, bool draw) {
  if (plot.rows * plot.cols != plot.values.size() || plot.rows == 0 || plot.cols == 0) {
    throw Error("heatmap '" + plot.title + "': " + std::to_string(plot.values.size()) + " values for " +
                std::to_string(plot.rows) + " x " + std::to_string(plot.cols) + " cells");
  }
  if ((!plot.row_labels.empty() && plot.row_labels.size() != plot.rows) ||
      (!plot.col_labels.empty() && plot.col_labels.size() != plot.cols)) {
    throw Error("heatmap '" + plot.title + "': labels must be one per row and one per column");
  }
  const ColorScale c = color_scale(plot);
  const BarTicks ticks = bar_ticks(c);
  const AxisPlan x = index_axis(plot.x_title, plot.cols, plot.col_labels);
  const AxisPlan y = index_axis(plot.y_title, plot.rows, plot.row_labels);
  const Layout l =
      frame_layout(canvas, plot.title, x, y, panel, bar_reserve(canvas, ticks, plot.value_title), true);
  if (!draw) return l;
  draw_cells(canvas, plot, c, l);
  draw_frame(canvas, plot.title, x, y, l, panel);
  // The colour bar: high at the top.
  const double bx = l.right + 12, top = l.top, height = l.bottom - l.top;
  constexpr int kSteps = 128;
  cairo_save(canvas.cr());
  cairo_set_antialias(canvas.cr(), CAIRO_ANTIALIAS_NONE);
  for (int i = 0; i < kSteps; ++i) {
    const double y0 = std::round(top + height * (1 - static_cast<double>(i + 1) / kSteps));
    const double y1 = std::round(top + height * (1 - static_cast<double>(i) / kSteps));
    canvas.rect(bx, y0, kBarWidth, y1 - y0, map_color(c.map, (i + 0.5) / kSteps));
  }
  cairo_restore(canvas.cr());
  canvas.set_color(kMutedInk);
  cairo_set_line_width(canvas.cr(), 1);
  cairo_rectangle(canvas.cr(), bx + 0.5, top + 0.5, kBarWidth - 1, height - 1);
  cairo_stroke(canvas.cr());
  double widest = 0;
  for (std::size_t i = 0; i < ticks.positions.size(); ++i) {
    const double py = top + height * (1 - ticks.positions[i]);
    canvas.line(bx + kBarWidth, py, bx + kBarWidth + 3, py, kMutedInk);
    canvas.text(ticks.labels[i], bx + kBarWidth + 5, py, Align::start, Align::middle, kTickFont, kMutedInk);
    widest = std::max(widest, canvas.measure(ticks.labels[i], kTickFont).width);
  }
  if (!plot.value_title.empty()) {
    canvas.text(canvas.fit(plot.value_title, kLabelFont, height), bx + kBarWidth + 8 + widest,
                top + height / 2, Align::middle, Align::start, kLabelFont, kInk, 90);
  }
  return l;
}

}  // namespace tfdebug::viz::detail
