// Plots checked by their pixels: where a known line crosses, that a NaN leaves a gap with its mark,
// the colour bar's ends, grey for missing cells; and the SVG read back by an independent
// renderer (rsvg-convert) showing what the PNG shows.
#include "tfdebug/viz/plot.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tfdebug/core/error.hpp"

namespace tfdebug::viz {
namespace {

int distance(Rgb a, Rgb b) {
  return std::abs(a.r - b.r) + std::abs(a.g - b.g) + std::abs(a.b - b.b);
}

// The pixel at (x, y) in pixel coordinates (rounded down, as pixel centres are at +0.5).
Rgb pixel(const Image& image, double x, double y) {
  return image.at(static_cast<int>(std::floor(x)), static_cast<int>(std::floor(y)));
}

// The closest colour to `color` among the 3 x 3 pixels around (x, y): a 2-pixel antialiased line
// covers its centre pixel fully only when it is axis-aligned.
int near(const Image& image, double x, double y, Rgb color) {
  int best = 1000;
  for (int dy = -1; dy <= 1; ++dy) {
    for (int dx = -1; dx <= 1; ++dx) best = std::min(best, distance(pixel(image, x + dx, y + dy), color));
  }
  return best;
}

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("tfdebug_plot_" + std::to_string(::getpid()) + "_" + name);
}

LinePlot diagonal() {
  LinePlot plot{
      .title = "diagonal", .x = {.title = "x", .lo = 0, .hi = 10}, .y = {.title = "y", .lo = 0, .hi = 10}};
  plot.series.push_back({.name = "", .x = {0, 10}, .y = {0, 10}});
  return plot;
}

TEST(LinePlot, AKnownLineCrossesAKnownPixel) {
  const LinePlot plot = diagonal();
  const Image image = render(plot);
  const Layout l = layout(plot);
  EXPECT_GT(l.right - l.left, 600);  // one unnamed series: no legend takes room
  for (double v : {2.0, 5.0, 7.5}) {
    EXPECT_LE(near(image, l.to_pixel_x(v), l.to_pixel_y(v), series_color(0)), 30) << v;
    // 12 pixels above the line is background or grid, never the line.
    EXPECT_GT(distance(pixel(image, l.to_pixel_x(v), l.to_pixel_y(v) - 12), series_color(0)), 300) << v;
  }
  EXPECT_DOUBLE_EQ(l.to_pixel_x(5), (l.left + l.right) / 2);
  EXPECT_DOUBLE_EQ(l.to_pixel_y(10), l.top);
}

TEST(LinePlot, ANanLeavesAnEmptyGapAndAMark) {
  LinePlot plot{.title = "gap", .x = {.lo = 0, .hi = 6}, .y = {.lo = 0, .hi = 2}};
  plot.series.push_back({.name = "loss", .x = {0, 1, 2, 3, 4, 5, 6}, .y = {1, 1, 1, NAN, 1, 1, 1}});
  const Image image = render(plot);
  const Layout l = layout(plot);
  const double y = l.to_pixel_y(1);
  for (double x : {0.5, 1.5, 4.5, 5.5})
    EXPECT_LE(distance(pixel(image, l.to_pixel_x(x), y), series_color(0)), 30) << x;
  // Nothing of the line between the last point before the NaN and the first after it.
  for (double x = 2.1; x < 3.9; x += 0.1) {
    EXPECT_GT(distance(pixel(image, l.to_pixel_x(x), y), series_color(0)), 200) << x;
  }
  // The mark: vermillion at the bottom of the plot box, under x = 3.
  EXPECT_LE(distance(pixel(image, l.to_pixel_x(3), l.bottom - 3), Rgb{213, 94, 0}), 30);
  EXPECT_GT(distance(pixel(image, l.to_pixel_x(1), l.bottom - 3), Rgb{213, 94, 0}), 200);
}

TEST(LinePlot, AnIsolatedPointBetweenGapsIsADot) {
  LinePlot plot{.x = {.lo = 0, .hi = 4}, .y = {.lo = 0, .hi = 2}};
  plot.series.push_back({.name = "", .x = {0, 1, 2, 3, 4}, .y = {NAN, NAN, 1, NAN, NAN}});
  const Image image = render(plot);
  const Layout l = layout(plot);
  EXPECT_LE(distance(pixel(image, l.to_pixel_x(2), l.to_pixel_y(1)), series_color(0)), 30);
}

TEST(LinePlot, AMillionPointsKeepTheirOneStepSpike) {
  // Note [Columns of points]: thousands of points a pixel column are reduced to four; a spike
  // of one step among a million must still reach its height.
  LinePlot plot{.x = {.lo = 0, .hi = 1e6}, .y = {.lo = 0, .hi = 10}};
  Series s{.name = ""};
  for (int i = 0; i <= 1'000'000; ++i) {
    s.x.push_back(i);
    s.y.push_back(i == 654'321 ? 9.0 : 1.0);
  }
  plot.series.push_back(std::move(s));
  const Image image = render(plot);
  const Layout l = layout(plot);
  EXPECT_LE(near(image, l.to_pixel_x(654'321), l.to_pixel_y(8.5), series_color(0)), 30);
  EXPECT_LE(near(image, l.to_pixel_x(100'000), l.to_pixel_y(1), series_color(0)), 30);
  EXPECT_GT(distance(pixel(image, l.to_pixel_x(100'000), l.to_pixel_y(8.5)), series_color(0)), 300);
}

TEST(LinePlot, LogAxisPutsDecadesEvenly) {
  LinePlot plot{.x = {.lo = 0, .hi = 1}, .y = {.scale = Scale::log, .lo = 0.1, .hi = 10}};
  plot.series.push_back({.name = "", .x = {0, 1}, .y = {1, 1}});
  const Layout l = layout(plot);
  EXPECT_NEAR(l.to_pixel_y(1), (l.top + l.bottom) / 2, 1e-9);
  const Image image = render(plot);
  EXPECT_LE(distance(pixel(image, l.to_pixel_x(0.5), l.to_pixel_y(1)), series_color(0)), 30);
}

TEST(LinePlot, ManySeriesGetDistinctColoursAndALegend) {
  LinePlot plot{.title = "twelve layers"};
  for (int k = 0; k < 12; ++k) {
    plot.series.push_back({.name = "layer " + std::to_string(k), .x = {0, 1}, .y = {k + 0.5, k + 0.5}});
  }
  const Layout with_legend = layout(plot);
  EXPECT_LT(with_legend.right, 800 - 60);  // the legend's room at the right
  const Image image = render(plot);
  for (int k = 0; k < 8; ++k) {
    EXPECT_LE(
        distance(pixel(image, with_legend.to_pixel_x(0.5), with_legend.to_pixel_y(k + 0.5)), series_color(k)),
        30)
        << k;
  }
}

TEST(Heatmap, CellsTakeTheColourMapAndNanIsGrey) {
  Heatmap h{.title = "2 x 3", .rows = 2, .cols = 3, .values = {0, 1, 2, 3, 4, NAN}};
  const Image image = render(h);
  const Layout l = layout(h);
  auto cell = [&](double r, double c) { return pixel(image, l.to_pixel_x(c + 0.5), l.to_pixel_y(r + 0.5)); };
  EXPECT_EQ(cell(0, 0), map_color(Colormap::viridis, 0.0));
  EXPECT_EQ(cell(0, 2), map_color(Colormap::viridis, 0.5));
  EXPECT_EQ(cell(1, 1), map_color(Colormap::viridis, 1.0));
  EXPECT_EQ(cell(1, 2), missing_color());
  // Row 0 is at the top.
  EXPECT_LT(l.to_pixel_y(0.5), l.to_pixel_y(1.5));
}

TEST(Heatmap, TheColourBarRunsFromLowAtTheBottomToHighAtTheTop) {
  Heatmap h{.rows = 1, .cols = 2, .values = {-5, 5}, .value_title = "value"};
  const Image image = render(h);
  const Layout l = layout(h);
  const double bar_x = l.right + 12 + 7;
  EXPECT_LE(distance(pixel(image, bar_x, l.top + 2), map_color(Colormap::viridis, 1.0)), 12);
  EXPECT_LE(distance(pixel(image, bar_x, l.bottom - 2), map_color(Colormap::viridis, 0.0)), 12);
  EXPECT_LE(distance(pixel(image, bar_x, (l.top + l.bottom) / 2), map_color(Colormap::viridis, 0.5)), 12);
}

TEST(Heatmap, DivergingIsSymmetricAroundZeroAndLargeMatricesAreRasterised) {
  Heatmap h{.rows = 300, .cols = 400, .map = Colormap::diverging};
  h.values.assign(300 * 400, 0.0);
  h.values[0] = 2;     // row 0, col 0: the maximum
  h.values[401] = -1;  // row 1, col 1: half the reach below zero
  const Image image = render(h, {.width = 1000, .height = 800});
  const Layout l = layout(Figure{.panels = {h}}, {.width = 1000, .height = 800});
  EXPECT_EQ(pixel(image, l.to_pixel_x(200.5), l.to_pixel_y(150.5)), map_color(Colormap::diverging, 0.5));
  EXPECT_EQ(pixel(image, l.to_pixel_x(0.5), l.to_pixel_y(0.5)), map_color(Colormap::diverging, 1.0));
  EXPECT_EQ(pixel(image, l.to_pixel_x(1.5), l.to_pixel_y(1.5)), map_color(Colormap::diverging, 0.25));
}

TEST(Histogram, BarsReachTheirCountsAndLogAxesKeepTheSmallest) {
  HistogramPlot h{
      .x = {.lo = 0, .hi = 4}, .y = {.lo = 0, .hi = 10}, .edges = {0, 1, 2, 3, 4}, .counts = {10, 5, 0, 2}};
  const Image image = render(h);
  const Layout l = layout(h);
  const Rgb bar{static_cast<std::uint8_t>(std::lround(0.85 * 0 + 0.15 * 255)),
                static_cast<std::uint8_t>(std::lround(0.85 * 114 + 0.15 * 255)),
                static_cast<std::uint8_t>(std::lround(0.85 * 178 + 0.15 * 255))};
  EXPECT_LE(distance(pixel(image, l.to_pixel_x(0.5), l.to_pixel_y(9.5)), bar), 6);
  EXPECT_LE(distance(pixel(image, l.to_pixel_x(1.5), l.to_pixel_y(4.5)), bar), 6);
  EXPECT_GT(distance(pixel(image, l.to_pixel_x(1.5), l.to_pixel_y(5.5)), bar), 100);
  EXPECT_GT(distance(pixel(image, l.to_pixel_x(2.5), l.to_pixel_y(0.5)), bar), 100);

  HistogramPlot log = h;
  log.y = {.scale = Scale::log};
  log.counts = {1000, 10, 0, 1};
  const Layout ll = layout(log);
  EXPECT_LT(ll.y.lo, 1.0);  // a count of 1 still has a bar
  EXPECT_LE(distance(pixel(render(log), ll.to_pixel_x(3.5), ll.to_pixel_y(0.9)), bar), 6);
}

TEST(BarChart, GroupsSideBySideAndNanIsMarkedNotZero) {
  BarChart b;
  b.y.lo = 0;
  b.y.hi = 4;
  b.categories = {"a", "b"};
  b.groups = {{.name = "mean", .values = {1, 2}}, {.name = "max", .values = {3, NAN}}};
  const Image image = render(b);
  const Layout l = layout(b);
  // Category i spans [i, i + 1); group k's bar is [i + 0.1 + 0.4k, i + 0.5 + 0.4k).
  EXPECT_EQ(pixel(image, l.to_pixel_x(0.3), l.to_pixel_y(0.5)), series_color(0));
  EXPECT_EQ(pixel(image, l.to_pixel_x(0.7), l.to_pixel_y(2.5)), series_color(1));
  EXPECT_EQ(pixel(image, l.to_pixel_x(1.3), l.to_pixel_y(1.5)), series_color(0));
  EXPECT_EQ(pixel(image, l.to_pixel_x(1.7), l.bottom - 3), (Rgb{213, 94, 0}));
  EXPECT_GT(distance(pixel(image, l.to_pixel_x(1.7), l.to_pixel_y(1.0)), series_color(1)), 200);
}

TEST(Figure, SmallMultiplesShareThePage) {
  Figure f{.title = "per layer", .columns = 2, .panels = {diagonal(), diagonal(), diagonal()}};
  const Layout first = layout(f, {}, 0), second = layout(f, {}, 1), third = layout(f, {}, 2);
  EXPECT_LT(first.right, 400);
  EXPECT_GT(second.left, 400);
  EXPECT_GT(third.top, 250);
  const Image image = render(f);
  EXPECT_LE(near(image, second.to_pixel_x(5), second.to_pixel_y(5), series_color(0)), 30);
}

TEST(Figure, BadFiguresAreErrors) {
  EXPECT_THROW(render(Figure{}), Error);
  EXPECT_THROW(save(diagonal(), "plot.gif"), Error);
  EXPECT_THROW(render(diagonal(), {.width = 10, .height = 10}), Error);
  LinePlot uneven;
  uneven.series.push_back({.name = "s", .x = {1, 2, 3}, .y = {1, 2}});
  EXPECT_THROW(render(uneven), Error);
  EXPECT_THROW(render(Heatmap{.rows = 2, .cols = 2, .values = {1, 2, 3}}), Error);
  EXPECT_THROW(render(HistogramPlot{.edges = {0, 1}, .counts = {1, 2}}), Error);
  EXPECT_THROW(save(diagonal(), "/nonexistent-dir/plot.png"), Error);
  EXPECT_EQ(format_for("A.SVG"), Format::svg);
  EXPECT_EQ(format_for("a.pdf"), Format::pdf);
  EXPECT_FALSE(format_for("a.jpeg"));
}

TEST(Figure, RsvgRendersTheSvgAsThePngShowsIt) {
  LinePlot plot = diagonal();
  plot.title = "diagonal with \u00e9l\u00e8ves & <tags>";  // text that must be escaped in XML
  const auto svg = temp_path("diag.svg"), png = temp_path("diag.png");
  save(plot, svg);
  const std::string command = "rsvg-convert -b white -o '" + png.string() + "' '" + svg.string() + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const Image back = read_png(png);
  ASSERT_EQ(back.width(), 800);
  ASSERT_EQ(back.height(), 500);
  const Layout l = layout(plot);
  for (double v : {2.0, 5.0, 7.5}) {
    EXPECT_LE(near(back, l.to_pixel_x(v), l.to_pixel_y(v), series_color(0)), 30) << v;
    EXPECT_GT(distance(pixel(back, l.to_pixel_x(v), l.to_pixel_y(v) - 12), series_color(0)), 300) << v;
  }
  std::filesystem::remove(svg);
  std::filesystem::remove(png);
}

TEST(Figure, PdfIsAPageOfTheFigureSize) {
  const auto pdf = temp_path("diag.pdf");
  save(diagonal(), pdf);
  std::ifstream in(pdf, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str().rfind("%PDF-", 0), 0u);
  EXPECT_NE(text.str().find("/MediaBox [ 0 0 800 500 ]"), std::string::npos);
  std::filesystem::remove(pdf);
}

}  // namespace
}  // namespace tfdebug::viz
