// Histograms and bar charts. Bars start at zero on a linear axis and at the axis' bottom on a log
// one (a zero count then has no bar, as it has no logarithm).
#include <algorithm>
#include <cmath>

#include "panels.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::viz::detail {
namespace {

double bar_base(const AxisPlan& axis) {
  return axis.scale == Scale::log ? axis.range.lo : std::max(axis.range.lo, 0.0);
}

// On a log axis a bar grows from the axis' bottom: leave room under the smallest value, or a bar
// of exactly a power of ten would have no length.
void widen_for_bars(Extent& extent, Scale scale) {
  if (scale == Scale::log && !extent.empty()) extent.lo /= 3;
}

}  // namespace

Layout draw_panel(const Canvas& canvas, const HistogramPlot& plot, Box panel, bool draw) {
  if (!plot.counts.empty() && plot.edges.size() != plot.counts.size() + 1) {
    throw Error("histogram '" + plot.title + "': " + std::to_string(plot.edges.size()) + " edges for " +
                std::to_string(plot.counts.size()) + " bins (expected bins + 1)");
  }
  Extent xs, ys;
  for (double e : plot.edges) xs.add(e, plot.x.scale);
  for (double c : plot.counts) ys.add(c, plot.y.scale);
  if (plot.y.scale == Scale::linear) ys.add(0, Scale::linear);
  widen_for_bars(ys, plot.y.scale);
  const AxisPlan x = plan_axis(plot.x, xs, 6);
  AxisPlan y = plan_axis(plot.y, ys, 5);
  if (y.scale == Scale::linear && !plot.y.lo) y.range.lo = std::max(y.range.lo, 0.0);
  const Layout l = frame_layout(canvas, plot.title, x, y, panel, 0);
  if (!draw) return l;
  draw_frame(canvas, plot.title, x, y, l, panel);
  clip_to(canvas, l);
  const double base = l.to_pixel_y(bar_base(y));
  for (std::size_t i = 0; i < plot.counts.size(); ++i) {
    const double a = plot.edges[i], b = plot.edges[i + 1];
    if (!plottable(a, x.scale) || !plottable(b, x.scale) || !plottable(plot.counts[i], y.scale)) continue;
    const double x0 = l.to_pixel_x(a), x1 = l.to_pixel_x(b);
    const double top = l.to_pixel_y(plot.counts[i]);
    const double gap = x1 - x0 > 4 ? 0.5 : 0;
    canvas.rect(x0 + gap, top, std::max(x1 - x0 - 2 * gap, 0.5), base - top, series_color(0), 0.85);
  }
  cairo_restore(canvas.cr());
  if (!plot.note.empty()) {
    canvas.text(canvas.fit(plot.note, kTickFont, l.right - l.left - 8), l.right - 4, l.top + 4, Align::end,
                Align::start, kTickFont, kNonfiniteMark);
  }
  return l;
}

Layout draw_panel(const Canvas& canvas, const BarChart& plot, Box panel, bool draw) {
  for (const BarGroup& g : plot.groups) {
    if (g.values.size() != plot.categories.size()) {
      throw Error("bar chart '" + plot.title + "' group '" + g.name +
                  "': " + std::to_string(g.values.size()) + " values for " +
                  std::to_string(plot.categories.size()) + " categories");
    }
  }
  Extent vs;
  for (const BarGroup& g : plot.groups) {
    for (double v : g.values) vs.add(v, plot.y.scale);
  }
  if (plot.y.scale == Scale::linear) vs.add(0, Scale::linear);
  widen_for_bars(vs, plot.y.scale);
  AxisPlan value = plan_axis(plot.y, vs, 5);
  const AxisPlan category = category_axis(plot.category_title, plot.categories);
  std::vector<Series> names;
  for (const BarGroup& g : plot.groups) names.push_back({g.name, {}, {}});
  const Legend legend = make_legend(names);
  const Layout l =
      plot.horizontal
          ? frame_layout(canvas, plot.title, value, category, panel, legend_width(canvas, legend), true)
          : frame_layout(canvas, plot.title, category, value, panel, legend_width(canvas, legend));
  if (!draw) return l;
  if (plot.horizontal) {
    draw_frame(canvas, plot.title, value, category, l, panel);
  } else {
    draw_frame(canvas, plot.title, category, value, l, panel);
  }
  clip_to(canvas, l);
  const double groups = static_cast<double>(std::max<std::size_t>(plot.groups.size(), 1));
  const double width = 0.8 / groups;
  for (std::size_t k = 0; k < plot.groups.size(); ++k) {
    for (std::size_t i = 0; i < plot.categories.size(); ++i) {
      const double v = plot.groups[k].values[i];
      const double c0 = static_cast<double>(i) + 0.1 + width * static_cast<double>(k);
      if (!plottable(v, value.scale)) {
        // Note [Gaps, not zeros] (plot_xy.cpp): a missing value is marked, not drawn as 0.
        const double mid = c0 + width / 2;
        if (plot.horizontal) {
          canvas.rect(l.left + 1, l.to_pixel_y(mid) - 2, 6, 4, kNonfiniteMark);
        } else {
          canvas.rect(l.to_pixel_x(mid) - 2, l.bottom - 7, 4, 6, kNonfiniteMark);
        }
        continue;
      }
      const double base = bar_base(value);
      if (plot.horizontal) {
        const double x0 = l.to_pixel_x(base), x1 = l.to_pixel_x(v);
        const double y0 = l.to_pixel_y(c0), y1 = l.to_pixel_y(c0 + width);
        canvas.rect(std::min(x0, x1), std::min(y0, y1), std::fabs(x1 - x0), std::fabs(y1 - y0),
                    series_color(k));
      } else {
        const double x0 = l.to_pixel_x(c0), x1 = l.to_pixel_x(c0 + width);
        const double y0 = l.to_pixel_y(base), y1 = l.to_pixel_y(v);
        canvas.rect(x0, std::min(y0, y1), x1 - x0, std::fabs(y1 - y0), series_color(k));
      }
    }
  }
  cairo_restore(canvas.cr());
  draw_legend(canvas, legend, l.right + 12, l.top);
  return l;
}

}  // namespace tfdebug::viz::detail
