// Terminal plots: exact output of small plots in braille and ASCII, where known points land, the
// width kept, NaN gaps marked, log axes, colour only when asked, bars in eighth blocks.
#include "tfdebug/viz/terminal_plot.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "tfdebug/core/error.hpp"
#include "tfdebug/viz/ticks.hpp"

namespace tfdebug::viz {
namespace {

// y = x for x = 0..4 with a NaN at x = 3: the line rises from the bottom-left cell to a lone dot
// at (4, 4), and the x axis has a cross under x = 3. The x ticks are whole numbers (0 2 4, not
// 0 2.5), as steps are.
TerminalLinePlot rising_line() {
  TerminalLinePlot plot;
  plot.series.push_back({.name = "a", .x = {0, 1, 2, 3, 4}, .y = {0, 1, 2, NAN, 4}});
  return plot;
}

TEST(TerminalPlot, BrailleGolden) {
  const std::vector<std::string> expected = {
      "5┤                 ⢀",  //
      " │                  ",  //
      " │     ⢀⣀⠤⠔⠂        ",  //
      "0┤⣀⠤⠔⠒⠉⠁            ",  //
      " └┬────────┬───×───┬",  //
      "  0        2       4",  //
      "  × not finite",
  };
  EXPECT_EQ(render_terminal(rising_line(), {.width = 20, .height = 7}), expected);
}

TEST(TerminalPlot, AsciiGolden) {
  const std::vector<std::string> expected = {
      "5+                  ",  //
      " |                 *",  //
      " |  ********        ",  //
      "0+**                ",  //
      " ++--------+---x---+",  //
      "  0        2       4",  //
      "  x not finite",
  };
  EXPECT_EQ(render_terminal(rising_line(), {.width = 20, .height = 7, .glyphs = Glyphs::ascii}), expected);
}

// Note [Braille cells] in terminal_plot.cpp: the y range is padded to [0, 5], 4 rows of 4 dots;
// y = 4 is dot row round(1/5 * 15) = 3 (the bottom dot of the top row), x = 4 the last dot column
// (the right half of cell 17): bit 0x80, U+2880.
TEST(TerminalPlot, KnownPointLandsOnKnownCell) {
  const std::vector<std::string> lines = render_terminal(rising_line(), {.width = 20, .height = 7});
  EXPECT_EQ(lines[0].substr(lines[0].size() - 3), "\u2880");
  // x = 0, y = 0: the bottom-left dot of the first cell (bit 0x40), joined to x = 1 (dot row 12).
  const std::string row3 = lines[3];
  EXPECT_EQ(row3.substr(0, 4), "0\u2524");  // "0┤"
  EXPECT_EQ(row3.substr(4, 3), "\u28c0");   // ⣀: both bottom dots
}

TEST(TerminalPlot, SeriesToldApartByGlyphWithoutColour) {
  TerminalLinePlot plot = rising_line();
  plot.series.push_back({.name = "falling", .x = {0, 4}, .y = {4, 0}});
  const auto lines = render_terminal(plot, {.width = 40, .height = 7, .glyphs = Glyphs::ascii});
  EXPECT_EQ(lines[1], " |++++++++++                           *");
  EXPECT_EQ(lines[3], "0+*****                       ++++++++++");
  EXPECT_EQ(lines.back(), "  * a  + falling  x not finite");
}

TEST(TerminalPlot, LegendWrapsAndCountsWhatDoesNotFit) {
  TerminalLinePlot plot;
  for (int k = 0; k < 9; ++k)
    plot.series.push_back({.name = "layer" + std::to_string(k), .x = {0, 1}, .y = {0, 1.0 * k}});
  // 40 columns, 16 lines: at most (16 - 4) / 3 = 4 legend lines; 9 entries of 8 columns, 4 a line.
  const auto lines = render_terminal(plot, {.width = 40, .height = 16, .glyphs = Glyphs::ascii});
  ASSERT_EQ(lines.size(), 16u);
  EXPECT_EQ(lines[13], "  * layer0  + layer1  o layer2  # layer3");
  EXPECT_EQ(lines[14], "  % layer4  @ layer5  & layer6  = layer7");
  EXPECT_EQ(lines[15], "  * layer8");  // the ninth series: the palette and glyphs repeat
  // 8 lines: one legend line, the rest counted.
  const auto small = render_terminal(plot, {.width = 40, .height = 8, .glyphs = Glyphs::ascii});
  EXPECT_EQ(small.back(), "  * layer0  + layer1  o layer2  +6 more");
}

TEST(TerminalPlot, ColourOnlyWhenAsked) {
  TerminalLinePlot plot = rising_line();
  plot.series.push_back({.name = "b", .x = {0, 4}, .y = {4, 0}});
  for (const auto& line : render_terminal(plot, {.width = 40, .height = 8})) {
    EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
  }
  const auto coloured = render_terminal(plot, {.width = 40, .height = 8, .colour = true});
  std::string all;
  for (const auto& line : coloured) all += line + "\n";
  // Okabe-Ito blue (0, 114, 178) and orange (230, 159, 0) in the 256-colour cube: 31 and 214.
  EXPECT_NE(all.find("\x1b[38;5;31m"), std::string::npos);
  EXPECT_NE(all.find("\x1b[38;5;214m"), std::string::npos);
  // Colour takes no columns: the plot is as wide as without it.
  const auto plain = render_terminal(plot, {.width = 40, .height = 8});
  ASSERT_EQ(coloured.size(), plain.size());
  for (std::size_t i = 0; i < plain.size(); ++i)
    EXPECT_EQ(terminal_width(coloured[i]), terminal_width(plain[i]));
}

TEST(TerminalPlot, FitsWidthAndHeight) {
  TerminalLinePlot plot;
  plot.title = "a title longer than the plot is wide, which is elided in the middle";
  for (int k = 0; k < 12; ++k) {
    Series s;
    s.name = "series " + std::to_string(k);
    for (int i = 0; i < 1000; ++i) s.y.push_back(std::sin(i * 0.01 * (k + 1)) * 1e4);
    plot.series.push_back(std::move(s));
  }
  for (int width : {20, 33, 80, 191}) {
    for (int height : {6, 11, 40}) {
      const auto lines = render_terminal(plot, {.width = width, .height = height});
      EXPECT_EQ(lines.size(), static_cast<std::size_t>(height));
      for (const auto& line : lines) EXPECT_LE(terminal_width(line), static_cast<std::size_t>(width)) << line;
      EXPECT_EQ(terminal_width(lines[1]), static_cast<std::size_t>(width));  // a plot row is full width
    }
  }
  // Below the minimum, the plot takes the minimum.
  EXPECT_EQ(render_terminal(plot, {.width = 3, .height = 2}).size(), 6u);
}

TEST(TerminalPlot, LogAxisLabelsDecadesAndMarksNonPositive) {
  TerminalLinePlot plot;
  plot.y_scale = Scale::log;
  plot.series.push_back({.name = "g", .x = {}, .y = {1e-3, 1e-2, 0, 1e-1, 1}});
  const auto lines = render_terminal(plot, {.width = 30, .height = 11});
  // 8 rows over [1e-3, 1]: decades at dot rows 0, 10.33, 20.67, 31 -> rows 0, 2, 5, 7, labelled
  // as log_ticks labels them.
  const Ticks decades = log_ticks(1e-3, 1, 4);
  ASSERT_EQ(decades.values, (std::vector<double>{1e-3, 1e-2, 1e-1, 1}));
  const int rows[] = {7, 5, 2, 0};
  for (std::size_t i = 0; i < 4; ++i) {
    const std::string& line = lines[static_cast<std::size_t>(rows[i])];
    const std::size_t axis = line.find("\u2524");
    ASSERT_NE(axis, std::string::npos) << line;
    EXPECT_EQ(line.substr(line.find_first_not_of(' '), axis - line.find_first_not_of(' ')),
              decades.labels[i]);
  }
  EXPECT_EQ(lines.back(), "  \u00d7 not finite or <= 0");
  // The 0 at x = 2 is the middle of 24 columns: its cross in column 12 of the axis.
  const std::string axis = lines[8];
  EXPECT_NE(axis.find("\u00d7"), std::string::npos);
}

TEST(TerminalPlot, MismatchedSeriesIsAnError) {
  TerminalLinePlot plot;
  plot.series.push_back({.name = "bad", .x = {0, 1}, .y = {1}});
  EXPECT_THROW(render_terminal(plot, {}), Error);
}

TEST(TerminalBarsTest, EighthBlocksGolden) {
  const TerminalBars bars{.labels = {"a", "bb", "ccc"}, .values = {1, 0.5, 0.0625}, .value_labels = {}};
  // Area: 20 - 3 (labels) - 6 ("0.0625") - 2 = 9 cells; 0.5 of 9 is 4 cells and a half (U+258C),
  // 0.0625 of 9 is 0.5625 cells: 4.5 eighths, rounded to 5 (U+258B).
  const std::vector<std::string> expected = {
      "a   █████████      1",
      "bb  ████▌        0.5",
      "ccc ▋         0.0625",
  };
  EXPECT_EQ(render_terminal(bars, {.width = 20}), expected);
  const std::vector<std::string> ascii = {
      "a   #########      1",
      "bb  #####        0.5",  // 4.5 cells: rounded to 5
      "ccc #         0.0625",
  };
  EXPECT_EQ(render_terminal(bars, {.width = 20, .glyphs = Glyphs::ascii}), ascii);
}

TEST(TerminalBarsTest, LogScaleAndNonFinite) {
  const TerminalBars bars{
      .labels = {"big", "small", "nan"}, .values = {100, 1, NAN}, .value_labels = {}, .scale = Scale::log};
  const auto lines = render_terminal(bars, {.width = 30, .glyphs = Glyphs::ascii});
  // From 0.1 (a tenth of the smallest): 100 is 3 decades, 1 is one: 20 and 6.67 of 20 cells.
  EXPECT_EQ(lines[0], "big   #################### 100");
  EXPECT_EQ(lines[1], "small #######                1");
  EXPECT_EQ(lines[2], "nan                        NaN");
}

TEST(TerminalBarsTest, LongLabelsElidedInTheMiddle) {
  const TerminalBars bars{.labels = {"blocks.11.attention.output.dense"}, .values = {2}, .value_labels = {}};
  const auto lines = render_terminal(bars, {.width = 30, .glyphs = Glyphs::ascii});
  EXPECT_EQ(lines[0], "block~ense ################# 2");
}

TEST(TerminalHistogram, BinsLabelledByRangeAndMerged) {
  const double edges[] = {-1, -0.5, 0, 0.5, 1};
  const std::int64_t counts[] = {3, 10, 7, 1};
  const auto lines =
      render_terminal_histogram(edges, counts, {.width = 40, .height = 0, .glyphs = Glyphs::ascii});
  const std::vector<std::string> expected = {
      "[  -1, -0.5) #######                   3",  // 3/10 of 24 cells
      "[-0.5, 0)    ######################## 10",
      "[   0, 0.5)  #################         7",
      "[ 0.5, 1]    ##                        1",
  };
  EXPECT_EQ(lines, expected);
  // Two lines: neighbours added together.
  const auto merged =
      render_terminal_histogram(edges, counts, {.width = 30, .height = 2, .glyphs = Glyphs::ascii});
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].substr(0, 8), "[-1, 0) ");
  EXPECT_EQ(merged[0].substr(merged[0].size() - 2), "13");
  EXPECT_EQ(merged[1].substr(0, 7), "[ 0, 1]");
  EXPECT_EQ(merged[1].substr(merged[1].size() - 2), " 8");
  EXPECT_THROW(render_terminal_histogram(std::span<const double>(edges, 3), counts, {}), Error);
}

TEST(TerminalGlyphs, FromEnvironment) {
  ::setenv("TERM", "xterm-256color", 1);
  ::unsetenv("LC_ALL");
  ::unsetenv("LC_CTYPE");
  ::setenv("LANG", "en_US.UTF-8", 1);
  EXPECT_EQ(terminal_glyphs_from_environment(), Glyphs::unicode);
  ::setenv("LC_ALL", "C", 1);  // LC_ALL wins over LANG
  EXPECT_EQ(terminal_glyphs_from_environment(), Glyphs::ascii);
  ::setenv("LC_ALL", "C.utf8", 1);
  EXPECT_EQ(terminal_glyphs_from_environment(), Glyphs::unicode);
  ::setenv("TERM", "dumb", 1);
  EXPECT_EQ(terminal_glyphs_from_environment(), Glyphs::ascii);
  ::unsetenv("TERM");
  ::unsetenv("LC_ALL");
  ::unsetenv("LANG");
  EXPECT_EQ(terminal_glyphs_from_environment(), Glyphs::ascii);
}

TEST(TerminalWidth, CountsCodePointsNotEscapes) {
  EXPECT_EQ(terminal_width("abc"), 3u);
  EXPECT_EQ(terminal_width("\u28ff\u2502x"), 3u);
  EXPECT_EQ(terminal_width("\x1b[38;5;31mab\x1b[0m"), 2u);
}

}  // namespace
}  // namespace tfdebug::viz
