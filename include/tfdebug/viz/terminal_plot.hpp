// Plots as text for a terminal: line plots drawn in Unicode braille (2 x 4 dots a character
// cell), horizontal bar charts and histograms in eighth blocks, and an ASCII fallback of each
// for terminals that cannot show Unicode (TERM=dumb, a locale that is not UTF-8).
//
//   tfdebug::viz::TerminalLinePlot loss{.title = "loss"};
//   loss.series.push_back({.name = "loss", .x = steps, .y = losses});  // NaN in y: a marked gap
//   tfdebug::viz::TerminalOptions options{.width = 80, .height = 20,
//                                         .glyphs = tfdebug::viz::terminal_glyphs_from_environment()};
//   for (const std::string& line : tfdebug::viz::render_terminal(loss, options)) std::puts(line.c_str());
//
//    2.9 ┤⠑⢄
//      2 ┤  ⠈⠢⣀      (y ticks: linear_ticks / log_ticks of ticks.hpp)
//      1 ┤     ⠉⠒⠤⠤⣀⣀
//      0 └┬──────×───┬
//         0          40
//
// Every line of the result is at most `width` columns wide, and there are at most `height` lines
// (plots smaller than the minimum below grow to it). Series are told apart by colour (ANSI
// 256-colour escapes, the Okabe-Ito palette of color.hpp) when `colour` is set, and by glyph
// otherwise: the first series in braille (or `*`), the others as `+ o # % @ & =`. A value that is
// not finite, or not positive on a log axis, breaks its line and puts a `×` (`x`) on the x axis.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tfdebug/viz/plot.hpp"

namespace tfdebug::viz {

enum class Glyphs {
  unicode,  // braille dots, box drawing, eighth blocks
  ascii,    // 7-bit only
};

// ascii when TERM is "dumb" or the locale (the first of LC_ALL, LC_CTYPE, LANG that is set) does
// not name UTF-8; unicode otherwise.
Glyphs terminal_glyphs_from_environment();

struct TerminalOptions {
  int width = 80;   // columns, labels included (at least 20)
  int height = 20;  // lines, axes, labels, title and legend included (at least 6)
  Glyphs glyphs = Glyphs::unicode;
  bool colour = false;  // ANSI colour escapes (they take no columns)
};

struct TerminalLinePlot {
  std::string title;           // a line above the plot when not empty
  std::vector<Series> series;  // plot.hpp's Series: an empty x means 0, 1, 2, ...
  Scale y_scale = Scale::linear;
};

// The plot, one string a line, without newlines.
std::vector<std::string> render_terminal(const TerminalLinePlot& plot, const TerminalOptions& options);

// Horizontal bars, one line each: the label (elided in the middle when long), the bar and the
// value. Bars grow from zero (negative values draw none); on a log scale from a tenth of the
// smallest positive value, so that every positive value shows. A value that is not finite is
// written as such, without a bar.
struct TerminalBars {
  std::vector<std::string> labels;
  std::vector<double> values;
  std::vector<std::string> value_labels;  // what is written after each bar; empty: format_value
  Scale scale = Scale::linear;
};
std::vector<std::string> render_terminal(const TerminalBars& bars, const TerminalOptions& options);

// A histogram as horizontal bars, one bin a line labelled by its range ("[0.25, 0.5)"), with its
// count. edges.size() == counts.size() + 1 (tfdebug::histogram_fixed). More bins than `height`
// lines: neighbouring bins are added together so that they fit.
std::vector<std::string> render_terminal_histogram(std::span<const double> edges,
                                                   std::span<const std::int64_t> counts,
                                                   const TerminalOptions& options);

// Columns `text` takes: its UTF-8 code points, ANSI escape sequences left out.
std::size_t terminal_width(const std::string& text);

}  // namespace tfdebug::viz
