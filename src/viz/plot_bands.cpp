// TensorBoard's two views of a distribution over time: percentile bands ("distributions") and
// one histogram per step drawn as ridges ("histograms").
#include <algorithm>
#include <cmath>

#include "panels.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::viz::detail {

Layout draw_panel(const Canvas& canvas, const DistributionPlot& plot, Box panel, bool draw) {
  if (plot.steps.size() != plot.bands.size()) {
    throw Error("distribution plot '" + plot.title + "': " + std::to_string(plot.steps.size()) +
                " steps for " + std::to_string(plot.bands.size()) + " sets of percentiles");
  }
  auto usable = [&](std::size_t i) {
    if (!plottable(plot.steps[i], plot.x.scale)) return false;
    return std::all_of(plot.bands[i].begin(), plot.bands[i].end(),
                       [&](double v) { return plottable(v, plot.y.scale); });
  };
  Extent xs, ys;
  for (std::size_t i = 0; i < plot.steps.size(); ++i) {
    if (!usable(i)) continue;
    xs.add(plot.steps[i], plot.x.scale);
    for (double v : plot.bands[i]) ys.add(v, plot.y.scale);
  }
  const AxisPlan x = plan_axis(plot.x, xs, 6);
  const AxisPlan y = plan_axis(plot.y, ys, 5);
  const Layout l = frame_layout(canvas, plot.title, x, y, panel, 0);
  if (!draw) return l;
  draw_frame(canvas, plot.title, x, y, l, panel);
  clip_to(canvas, l);
  cairo_t* cr = canvas.cr();
  const Rgb color = series_color(1);
  // Runs of steps with every percentile plottable; a step without them is a gap (Note [Gaps, not
  // zeros] in plot_xy.cpp).
  std::size_t i = 0;
  while (i < plot.steps.size()) {
    if (!usable(i)) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < plot.steps.size() && usable(end)) ++end;
    for (int band = 0; band < 4; ++band) {
      cairo_new_path(cr);
      for (std::size_t k = i; k < end; ++k) {
        cairo_line_to(cr, l.to_pixel_x(plot.steps[k]), l.to_pixel_y(plot.bands[k][band]));
      }
      for (std::size_t k = end; k-- > i;) {
        cairo_line_to(cr, l.to_pixel_x(plot.steps[k]), l.to_pixel_y(plot.bands[k][8 - band]));
      }
      cairo_close_path(cr);
      canvas.set_color(color, 0.18);
      cairo_fill(cr);
    }
    cairo_new_path(cr);
    for (std::size_t k = i; k < end; ++k)
      cairo_line_to(cr, l.to_pixel_x(plot.steps[k]), l.to_pixel_y(plot.bands[k][4]));
    canvas.set_color(color);
    cairo_set_line_width(cr, 1.5);
    cairo_stroke(cr);
    i = end;
  }
  cairo_restore(cr);
  return l;
}

Layout draw_panel(const Canvas& canvas, const RidgePlot& plot, Box panel, bool draw) {
  if (plot.steps.size() != plot.counts.size()) {
    throw Error("histogram-over-time plot '" + plot.title + "': " + std::to_string(plot.steps.size()) +
                " steps for " + std::to_string(plot.counts.size()) + " histograms");
  }
  for (const auto& c : plot.counts) {
    if (c.size() + 1 != plot.edges.size()) {
      throw Error("histogram-over-time plot '" + plot.title + "': every histogram needs " +
                  std::to_string(plot.edges.size() > 0 ? plot.edges.size() - 1 : 0) +
                  " counts (one per bin)");
    }
  }
  const std::size_t n = plot.steps.size();
  const double ridge = std::max(1.5, static_cast<double>(n) * 0.25);  // a ridge's height, in step slots
  Extent xs;
  for (double e : plot.edges) xs.add(e, plot.x.scale);
  const AxisPlan x = plan_axis(plot.x, xs, 6);
  AxisPlan y;
  y.title = plot.step_title;
  y.grid = false;
  y.range = {0, static_cast<double>(n > 0 ? n - 1 : 0) + ridge};
  // Label every step whose label fits; draw_frame thins them when they would overlap.
  for (std::size_t i = 0; i < n; ++i) {
    y.ticks.push_back(static_cast<double>(n - 1 - i));
    y.labels.push_back(format_value(plot.steps[i]));
  }
  const Layout l = frame_layout(canvas, plot.title, x, y, panel, 0);
  if (!draw) return l;
  draw_frame(canvas, plot.title, x, y, l, panel);
  clip_to(canvas, l);
  double most = 0;
  for (const auto& c : plot.counts) {
    for (double v : c) {
      if (std::isfinite(v)) most = std::max(most, v);
    }
  }
  cairo_t* cr = canvas.cr();
  for (std::size_t i = 0; i < n; ++i) {  // oldest first: newer ridges are drawn in front
    const double base = static_cast<double>(n - 1 - i);
    auto curve = [&] {
      for (std::size_t b = 0; b + 1 < plot.edges.size(); ++b) {
        const double v = std::isfinite(plot.counts[i][b]) && most > 0 ? plot.counts[i][b] / most : 0;
        const double mid = (plot.edges[b] + plot.edges[b + 1]) / 2;
        cairo_line_to(cr, l.to_pixel_x(mid), l.to_pixel_y(base + v * ridge));
      }
    };
    // Filled white to hide the older ridges behind it; only the curve is stroked.
    cairo_new_path(cr);
    cairo_move_to(cr, l.to_pixel_x(plot.edges.front()), l.to_pixel_y(base));
    curve();
    cairo_line_to(cr, l.to_pixel_x(plot.edges.back()), l.to_pixel_y(base));
    cairo_close_path(cr);
    canvas.set_color({255, 255, 255}, 0.9);
    cairo_fill(cr);
    cairo_new_path(cr);
    curve();
    canvas.set_color(map_color(Colormap::viridis, n > 1 ? 0.85 * static_cast<double>(i) / (n - 1) : 0));
    cairo_set_line_width(cr, 1.4);
    cairo_stroke(cr);
  }
  cairo_restore(cr);
  return l;
}

}  // namespace tfdebug::viz::detail
