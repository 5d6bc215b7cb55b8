// The frame every x/y plot shares: title, plot box, grid, ticks, axis titles and legend, and
// the data ranges behind them. Private to tfdebug::viz.
#pragma once

#include <limits>
#include <string>
#include <vector>

#include "canvas.hpp"
#include "tfdebug/viz/plot.hpp"

namespace tfdebug::viz::detail {

struct Box {
  double left = 0, top = 0, right = 0, bottom = 0;
  double width() const noexcept { return right - left; }
  double height() const noexcept { return bottom - top; }
};

// The finite values seen (and, on a log axis, only the positive ones).
struct Extent {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double value, Scale scale) noexcept;
  bool empty() const noexcept { return lo > hi; }
};

// A value that can be a coordinate on an axis of this scale.
bool plottable(double value, Scale scale) noexcept;

struct AxisPlan {
  std::string title;
  Scale scale = Scale::linear;
  Range range;
  std::vector<double> ticks;  // in data units
  std::vector<std::string> labels;
  bool grid = true;
};

// Ticks and range from the axis' fixed limits, else the data's extent padded to ticks.
AxisPlan plan_axis(const Axis& axis, const Extent& data, int target);
// Categories 0 .. n-1 at the middle of [i, i + 1): range [0, n], one label each.
AxisPlan category_axis(std::string title, const std::vector<std::string>& names);

struct Legend {
  std::vector<std::string> names;
  std::vector<Rgb> colors;
  std::size_t more = 0;  // series left out of the legend
  bool empty() const noexcept { return names.empty(); }
};
// The first 8 named series' legend (none for a single unnamed series).
Legend make_legend(const std::vector<Series>& series);
double legend_width(const Canvas& canvas, const Legend& legend);
void draw_legend(const Canvas& canvas, const Legend& legend, double left, double top);

// The plot box inside `panel` once the title, tick labels and axis titles have their room, and
// `right_reserve` pixels at the right (a legend, a colour bar).
Layout frame_layout(const Canvas& canvas, const std::string& title, const AxisPlan& x, const AxisPlan& y,
                    Box panel, double right_reserve, bool y_down = false);
// Draws the title, grid, frame, ticks and axis titles of that layout.
void draw_frame(const Canvas& canvas, const std::string& title, const AxisPlan& x, const AxisPlan& y,
                const Layout& layout, Box panel);
// Clips drawing to the plot box until restore().
void clip_to(const Canvas& canvas, const Layout& layout);

}  // namespace tfdebug::viz::detail
