// One panel of a figure per plot type: each computes its layout and, when `canvas` draws, draws
// itself. Private to tfdebug::viz.
#pragma once

#include "axes.hpp"

namespace tfdebug::viz::detail {

Layout draw_panel(const Canvas& canvas, const LinePlot& plot, Box panel, bool draw);
Layout draw_panel(const Canvas& canvas, const ScatterPlot& plot, Box panel, bool draw);
Layout draw_panel(const Canvas& canvas, const HistogramPlot& plot, Box panel, bool draw);
Layout draw_panel(const Canvas& canvas, const BarChart& plot, Box panel, bool draw);
Layout draw_panel(const Canvas& canvas, const Heatmap& plot, Box panel, bool draw);
Layout draw_panel(const Canvas& canvas, const DistributionPlot& plot, Box panel, bool draw);
Layout draw_panel(const Canvas& canvas, const RidgePlot& plot, Box panel, bool draw);

// x of point i of a series (its x, or i when x is empty).
inline double x_of(const Series& s, std::size_t i) {
  return s.x.empty() ? static_cast<double>(i) : s.x[i];
}

}  // namespace tfdebug::viz::detail
