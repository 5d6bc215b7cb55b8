// Plots of plain data, drawn with cairo (text through pango) into PNG, SVG or PDF.
//
//   tfdebug::viz::LinePlot loss{.title = "loss", .x = {.title = "step"}, .y = {.title = "loss"}};
//   loss.series.push_back({.name = "train", .x = steps, .y = losses});   // NaN in y: a marked gap
//   tfdebug::viz::save(loss, "loss.png");                                 // or .svg, .pdf
//
//   tfdebug::viz::Heatmap h{.title = "attention, head 0", .rows = 8, .cols = 8, .values = probs};
//   tfdebug::viz::Image pixels = tfdebug::viz::render(h, {.width = 480, .height = 480});
//
//   tfdebug::viz::Figure grid{.title = "gradient norm per layer", .columns = 3};  // small multiples
//   for (auto& layer : layers) grid.panels.push_back(line_plot_of(layer));
//
// Every plot has a title, axis titles, nice ticks (ticks.hpp) and the colour-blind-safe palette
// (color.hpp). Values that are not finite never become coordinates: a line has a gap there with
// a red mark on the x axis, a heatmap cell is grey, a histogram says how many it left out.
// `layout()` tells where data coordinates land in pixels, for tests and image maps.
#pragma once

#include <array>
#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tfdebug/viz/color.hpp"
#include "tfdebug/viz/image.hpp"
#include "tfdebug/viz/ticks.hpp"

namespace tfdebug::viz {

enum class Scale { linear, log };

struct Axis {
  std::string title;
  Scale scale = Scale::linear;   // log: values <= 0 are left out like non-finite ones
  std::optional<double> lo, hi;  // fixed limits; otherwise the data's range, padded to ticks
  bool integer = false;          // whole-number ticks only (steps, layers)
};

// One named series of points. x and y have the same length; an empty x means 0, 1, 2, ...
struct Series {
  std::string name;
  std::vector<double> x;
  std::vector<double> y;
};

struct LinePlot {
  std::string title;
  Axis x, y;
  std::vector<Series> series;  // more than 8: the legend lists the first 8 and how many more
  bool markers = false;        // a dot at every point
};

struct ScatterPlot {
  std::string title;
  Axis x, y;
  std::vector<Series> series;
};

// Bars over bin edges (edges.size() == counts.size() + 1), e.g. from tfdebug::histogram_fixed.
struct HistogramPlot {
  std::string title;
  Axis x, y;  // y.scale = log for counts spanning decades
  std::vector<double> edges;
  std::vector<double> counts;
  std::string note;  // shown under the title, e.g. "3 NaN and 1 +inf not shown"
};

// TensorBoard's "distributions": bands between percentiles of a value at each step, darker
// toward the median. bands[i] holds the 0, 6.68, 15.87, 30.85, 50, 69.15, 84.13, 93.32 and 100th
// percentiles (TensorBoard's basis points 0, 668, 1587, 3085, 5000, 6915, 8413, 9332, 10000).
struct DistributionPlot {
  std::string title;
  Axis x, y;
  std::vector<double> steps;
  std::vector<std::array<double, 9>> bands;
};

// TensorBoard's "histograms": one histogram per step, drawn as ridges offset by step, newest in
// front. Every step shares the bin edges.
struct RidgePlot {
  std::string title;
  Axis x;  // the values binned
  std::string step_title = "step";
  std::vector<double> steps;
  std::vector<double> edges;
  std::vector<std::vector<double>> counts;  // counts[i] for steps[i], edges.size() - 1 each
};

// A matrix of values with a colour bar: attention probabilities, activations, gradient norm per
// layer x step. values are row-major, rows * cols of them; NaN cells are grey.
struct Heatmap {
  std::string title;
  std::string x_title, y_title;
  std::size_t rows = 0, cols = 0;
  std::vector<double> values;
  std::vector<std::string> row_labels, col_labels;  // optional; thinned when they would overlap
  Colormap map = Colormap::viridis;
  Scale scale = Scale::linear;   // log: the colour follows log10 of the value (values <= 0: grey)
  std::optional<double> lo, hi;  // colour bar limits; otherwise the finite values' range
  std::string value_title;       // the colour bar's title
};

struct BarGroup {
  std::string name;
  std::vector<double> values;  // one per category
};

// Bars per category, groups side by side: "mean |grad|" and "max |grad|" per layer is the
// gradient-flow plot. Horizontal bars suit many or long category names.
struct BarChart {
  std::string title;
  Axis y;  // the value axis
  std::string category_title;
  std::vector<std::string> categories;
  std::vector<BarGroup> groups;
  bool horizontal = false;
};

using Plot =
    std::variant<LinePlot, ScatterPlot, HistogramPlot, DistributionPlot, RidgePlot, Heatmap, BarChart>;

// One plot or small multiples: panels laid out `columns` wide, row by row, under one title.
struct Figure {
  std::string title;
  int columns = 1;
  std::vector<Plot> panels;
};

enum class Format { png, svg, pdf };
// From the extension (.png, .svg, .pdf, any case); nullopt for any other.
std::optional<Format> format_for(const std::filesystem::path& path);

struct Size {
  int width = 800;
  int height = 500;
};

// Writes the figure; the format follows the extension. Throws tfdebug::Error naming the file for
// an unknown extension, a figure with no panel, or a file that cannot be written.
void save(const Figure& figure, const std::filesystem::path& path, Size size = {});
void save(const Plot& plot, const std::filesystem::path& path, Size size = {});  // a figure of one
// The figure as pixels (what save writes as PNG), and as SVG text.
Image render(const Figure& figure, Size size = {});
Image render(const Plot& plot, Size size = {});
std::string render_svg(const Figure& figure, Size size = {});
std::string render_svg(const Plot& plot, Size size = {});

// Where panel `panel`'s data lands: its plot box in pixels and the axis ranges mapped onto it.
// For heatmaps, x and y are column and row positions (cell i spans [i, i + 1)).
struct Layout {
  double left = 0, top = 0, right = 0, bottom = 0;  // the plot box, pixels from the top left
  Range x, y;
  Scale x_scale = Scale::linear, y_scale = Scale::linear;
  bool y_down = false;  // heatmaps: row 0 at the top
  double to_pixel_x(double value) const;
  double to_pixel_y(double value) const;
};
Layout layout(const Figure& figure, Size size = {}, std::size_t panel = 0);
Layout layout(const Plot& plot, Size size = {});

}  // namespace tfdebug::viz
