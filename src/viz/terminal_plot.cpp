// Terminal plots: braille line plots, eighth-block bars, and their ASCII fallbacks.
#include "tfdebug/viz/terminal_plot.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "tfdebug/core/error.hpp"
#include "tfdebug/viz/color.hpp"
#include "tfdebug/viz/ticks.hpp"

namespace tfdebug::viz {
namespace {

constexpr int kMinWidth = 20;
constexpr int kMinHeight = 6;
// Glyphs of the series after the first when colour does not tell them apart.
constexpr std::string_view kMarkers = "+o#%@&=";  // not x: the x axis marks gaps with it

// Note [Braille cells]: U+2800 + bits, where the dot in column c (0, 1) and row r (0..3) is bit
// {0, 1, 2, 6} of column 0 and {3, 4, 5, 7} of column 1, rows counted from the top.
constexpr std::uint8_t kBrailleBit[2][4] = {{0x01, 0x02, 0x04, 0x40}, {0x08, 0x10, 0x20, 0x80}};

std::string utf8(char32_t code) {
  std::string out;
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
  return out;
}

// The xterm 256-colour cube's nearest entry (6 levels a channel), which terminals reached over
// SSH and tmux show even without 24-bit colour.
std::string ansi_colour(Rgb c) {
  auto level = [](std::uint8_t v) { return (static_cast<int>(v) * 5 + 127) / 255; };
  const int index = 16 + 36 * level(c.r) + 6 * level(c.g) + level(c.b);
  return "\x1b[38;5;" + std::to_string(index) + "m";
}
constexpr std::string_view kReset = "\x1b[0m";

std::string painted(const std::string& text, Rgb c, bool colour) {
  if (!colour) return text;
  return ansi_colour(c) + text + std::string(kReset);
}

Rgb nan_colour() {
  return series_color(3);
}  // vermillion, as plot.hpp marks gaps in red

std::string pad_left(const std::string& text, std::size_t width) {
  const std::size_t w = terminal_width(text);
  return w >= width ? text : std::string(width - w, ' ') + text;
}

// The first `columns` code points of text, or its middle elided with "~" / "…".
std::string elide_middle(const std::string& text, std::size_t columns, Glyphs glyphs) {
  std::vector<std::string> points;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t n = 1;
    while (i + n < text.size() && (static_cast<unsigned char>(text[i + n]) & 0xC0) == 0x80) ++n;
    points.push_back(text.substr(i, n));
    i += n;
  }
  if (points.size() <= columns) return text;
  if (columns == 0) return "";
  const std::size_t keep = columns - 1;
  const std::size_t head = (keep + 1) / 2;
  const std::size_t tail = keep - head;
  std::string out;
  for (std::size_t i = 0; i < head; ++i) out += points[i];
  out += glyphs == Glyphs::unicode ? "\u2026" : "~";
  for (std::size_t i = points.size() - tail; i < points.size(); ++i) out += points[i];
  return out;
}

struct Cell {
  std::uint8_t bits = 0;  // braille dots of every series
  int owner = -1;         // the last series with a dot here
  std::uint32_t series_mask = 0;
};

class Canvas {
 public:
  Canvas(int columns, int rows, int dots_x, int dots_y)
      : columns_(columns),
        rows_(rows),
        dots_x_(dots_x),
        dots_y_(dots_y),
        cells_(static_cast<std::size_t>(columns) * static_cast<std::size_t>(rows)) {}
  int dot_columns() const { return columns_ * dots_x_; }
  int dot_rows() const { return rows_ * dots_y_; }

  void dot(int x, int y, int series) {
    if (x < 0 || y < 0 || x >= dot_columns() || y >= dot_rows()) return;
    Cell& c = cell(x / dots_x_, y / dots_y_);
    if (dots_x_ == 2) c.bits |= kBrailleBit[x % 2][y % 4];
    c.owner = std::max(c.owner, series);
    c.series_mask |= 1u << (series % 32);
  }
  // Bresenham's line between two dots, both ends included.
  void line(int x0, int y0, int x1, int y1, int series) {
    const int dx = std::abs(x1 - x0), dy = -std::abs(y1 - y0);
    const int sx = x0 < x1 ? 1 : -1, sy = y0 < y1 ? 1 : -1;
    int error = dx + dy;
    for (;;) {
      dot(x0, y0, series);
      if (x0 == x1 && y0 == y1) return;
      const int e2 = 2 * error;
      if (e2 >= dy) {
        error += dy;
        x0 += sx;
      }
      if (e2 <= dx) {
        error += dx;
        y0 += sy;
      }
    }
  }
  const Cell& at(int column, int row) const {
    return cells_[static_cast<std::size_t>(row) * static_cast<std::size_t>(columns_) +
                  static_cast<std::size_t>(column)];
  }

 private:
  Cell& cell(int column, int row) {
    return cells_[static_cast<std::size_t>(row) * static_cast<std::size_t>(columns_) +
                  static_cast<std::size_t>(column)];
  }
  int columns_, rows_, dots_x_, dots_y_;
  std::vector<Cell> cells_;
};

// The glyph of series `index` where colour does not tell series apart.
// Eight glyphs, repeating as the palette's eight colours do.
std::string series_glyph(std::size_t index, Glyphs glyphs) {
  const std::size_t i = index % (kMarkers.size() + 1);
  if (i == 0) return glyphs == Glyphs::unicode ? utf8(0x28FF) : "*";
  return std::string(1, kMarkers[i - 1]);
}

double x_of(const Series& s, std::size_t i) {
  return s.x.empty() ? static_cast<double>(i) : s.x[i];
}

bool plotted(double y, Scale scale) {
  return std::isfinite(y) && (scale == Scale::linear || y > 0);
}

// The legend, wrapped to `width` in at most `max_lines` lines: a glyph and a name for each series
// when there are several, what the crosses on the x axis mean when there are any. Series that do
// not fit are counted ("+3 more"), never cut.
std::vector<std::string> legend_lines(const TerminalLinePlot& plot, const TerminalOptions& options,
                                      bool any_gap, std::size_t width, std::size_t max_lines) {
  const bool braille = options.glyphs == Glyphs::unicode;
  std::vector<std::string> series;
  if (plot.series.size() > 1) {
    for (std::size_t k = 0; k < plot.series.size(); ++k) {
      const std::string glyph = options.colour
                                    ? painted(series_glyph(0, options.glyphs), series_color(k), true)
                                    : series_glyph(k, options.glyphs);
      series.push_back(glyph + " " + elide_middle(plot.series[k].name, width - 6, options.glyphs));
    }
  }
  std::string gap;
  if (any_gap)
    gap = painted(braille ? "\u00d7" : "x", nan_colour(), options.colour) +
          (plot.y_scale == Scale::log ? " not finite or <= 0" : " not finite");
  constexpr std::size_t kIndent = 2;
  // Lays out the first n series (+ "+N more") and the gap entry; empty when it takes too many lines.
  auto lay_out = [&](std::size_t n) {
    std::vector<std::string> entries(series.begin(), series.begin() + static_cast<std::ptrdiff_t>(n));
    if (n < series.size()) {
      std::string more = "+";  // appended piecewise: GCC 12 warns (-Wrestrict) on a chain of + here
      more += std::to_string(series.size() - n);
      more += " more";
      entries.push_back(std::move(more));
    }
    if (!gap.empty()) entries.push_back(gap);
    std::vector<std::string> lines;
    std::string line;
    for (const std::string& entry : entries) {
      const std::size_t w = terminal_width(entry);
      if (!line.empty() && terminal_width(line) + 2 + w > width) {
        lines.push_back(std::move(line));
        line.clear();
      }
      if (line.empty()) {
        line = std::string(kIndent, ' ') + entry;
      } else {
        line += "  " + entry;
      }
      if (terminal_width(line) > width) return std::vector<std::string>{};  // one entry wider than the plot
    }
    if (!line.empty()) lines.push_back(std::move(line));
    if (lines.size() > max_lines) return std::vector<std::string>{};
    return lines;
  };
  if (series.empty() && gap.empty()) return {};
  for (std::size_t n = series.size();; --n) {
    std::vector<std::string> lines = lay_out(n);
    if (!lines.empty() || n == 0) return lines;
  }
}

}  // namespace

Glyphs terminal_glyphs_from_environment() {
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::string_view(term) == "dumb") return Glyphs::ascii;
  for (const char* name : {"LC_ALL", "LC_CTYPE", "LANG"}) {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') continue;
    std::string lower;
    for (const char* p = value; *p; ++p)
      lower += static_cast<char>(std::tolower(static_cast<unsigned char>(*p)));
    return lower.find("utf-8") != std::string::npos || lower.find("utf8") != std::string::npos
               ? Glyphs::unicode
               : Glyphs::ascii;
  }
  return Glyphs::ascii;  // no locale at all is the C locale: 7-bit
}

std::size_t terminal_width(const std::string& text) {
  std::size_t columns = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0x1b && i + 1 < text.size() && text[i + 1] == '[') {
      i += 2;
      while (i < text.size() && !(text[i] >= 0x40 && text[i] <= 0x7e)) ++i;
      continue;
    }
    if ((c & 0xC0) != 0x80) ++columns;
  }
  return columns;
}

std::vector<std::string> render_terminal(const TerminalLinePlot& plot, const TerminalOptions& options) {
  for (const Series& s : plot.series) {
    if (!s.x.empty() && s.x.size() != s.y.size())
      throw Error("terminal plot: series '" + s.name + "' has " + std::to_string(s.x.size()) +
                  " x values and " + std::to_string(s.y.size()) + " y values; expected as many of each");
  }
  const bool braille = options.glyphs == Glyphs::unicode;
  const int width = std::max(options.width, kMinWidth);
  const int height = std::max(options.height, kMinHeight);
  const Scale scale = plot.y_scale;

  // Ranges: x over every point (a gap's mark needs its place), y over the points drawn.
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  bool any_gap = false;
  for (const Series& s : plot.series) {
    for (std::size_t i = 0; i < s.y.size(); ++i) {
      const double x = x_of(s, i);
      if (!std::isfinite(x)) continue;
      x_lo = std::min(x_lo, x);
      x_hi = std::max(x_hi, x);
      if (plotted(s.y[i], scale)) {
        y_lo = std::min(y_lo, s.y[i]);
        y_hi = std::max(y_hi, s.y[i]);
      } else {
        any_gap = true;
      }
    }
  }
  if (!(x_lo <= x_hi)) x_lo = 0, x_hi = 1;
  if (x_lo == x_hi) x_lo -= 1, x_hi += 1;
  // The legend takes at most a third of what the plot leaves.
  const int title_lines = plot.title.empty() ? 0 : 1;
  const std::vector<std::string> legend =
      legend_lines(plot, options, any_gap, static_cast<std::size_t>(width),
                   static_cast<std::size_t>(std::max(1, (height - 4 - title_lines) / 3)));
  const int rows = height - 2 - title_lines - static_cast<int>(legend.size());
  // Decades are sparse, so a log axis can label more of them than a linear one has nice steps.
  const int y_target = std::max(2, scale == Scale::log ? rows / 2 : rows / 3);
  const Range y_range = padded_range(y_lo, y_hi, scale == Scale::log, y_target);
  const Ticks y_ticks = scale == Scale::log ? log_ticks(y_range.lo, y_range.hi, y_target)
                                            : linear_ticks(y_range.lo, y_range.hi, y_target);
  std::size_t label_width = 1;
  for (const std::string& label : y_ticks.labels) label_width = std::max(label_width, label.size());
  const int columns = width - static_cast<int>(label_width) - 1;
  Canvas canvas(columns, rows, braille ? 2 : 1, braille ? 4 : 1);

  auto transform = [&](double y) { return scale == Scale::log ? std::log10(y) : y; };
  const double t_lo = transform(y_range.lo), t_hi = transform(y_range.hi);
  auto dot_x = [&](double x) {
    return static_cast<int>(std::lround((x - x_lo) / (x_hi - x_lo) * (canvas.dot_columns() - 1)));
  };
  auto dot_y = [&](double y) {
    return static_cast<int>(std::lround((t_hi - transform(y)) / (t_hi - t_lo) * (canvas.dot_rows() - 1)));
  };
  const int dots_per_column = braille ? 2 : 1;
  const int dots_per_row = braille ? 4 : 1;

  std::vector<bool> gap_column(static_cast<std::size_t>(columns), false);
  for (std::size_t k = 0; k < plot.series.size(); ++k) {
    const Series& s = plot.series[k];
    bool have_previous = false;
    int px = 0, py = 0;
    for (std::size_t i = 0; i < s.y.size(); ++i) {
      const double x = x_of(s, i);
      if (!std::isfinite(x)) {
        have_previous = false;
        continue;
      }
      if (!plotted(s.y[i], scale)) {
        gap_column[static_cast<std::size_t>(dot_x(x) / dots_per_column)] = true;
        have_previous = false;
        continue;
      }
      const int cx = dot_x(x), cy = dot_y(s.y[i]);
      if (have_previous) {
        canvas.line(px, py, cx, cy, static_cast<int>(k));
      } else {
        canvas.dot(cx, cy, static_cast<int>(k));
      }
      px = cx;
      py = cy;
      have_previous = true;
    }
  }

  // The y tick of each row (the first when two fall on one).
  std::vector<int> tick_of_row(static_cast<std::size_t>(rows), -1);
  for (std::size_t t = 0; t < y_ticks.values.size(); ++t) {
    const int row = dot_y(y_ticks.values[t]) / dots_per_row;
    if (row >= 0 && row < rows && tick_of_row[static_cast<std::size_t>(row)] < 0)
      tick_of_row[static_cast<std::size_t>(row)] = static_cast<int>(t);
  }

  std::vector<std::string> out;
  if (!plot.title.empty())
    out.push_back(elide_middle(plot.title, static_cast<std::size_t>(width), options.glyphs));
  const bool several = plot.series.size() > 1;
  for (int row = 0; row < rows; ++row) {
    const int tick = tick_of_row[static_cast<std::size_t>(row)];
    std::string line = pad_left(tick >= 0 ? y_ticks.labels[static_cast<std::size_t>(tick)] : "", label_width);
    line += tick >= 0 ? (braille ? "\u2524" : "+") : (braille ? "\u2502" : "|");
    std::string run;  // cells of one colour, painted together
    int run_owner = -1;
    auto flush = [&] {
      line += run_owner >= 0 ? painted(run, series_color(static_cast<std::size_t>(run_owner)), options.colour)
                             : run;
      run.clear();
    };
    for (int column = 0; column < columns; ++column) {
      const Cell& c = canvas.at(column, row);
      std::string glyph;
      int owner = -1;
      if (c.owner < 0) {
        glyph = " ";
      } else if (options.colour || !several || c.owner % 8 == 0) {
        glyph = braille ? utf8(0x2800 + c.bits)
                        : (options.colour ? "*"
                                          : series_glyph(static_cast<std::size_t>(c.owner), options.glyphs));
        owner = options.colour ? c.owner : -1;
      } else {
        glyph = series_glyph(static_cast<std::size_t>(c.owner), options.glyphs);
      }
      if (owner != run_owner) {
        flush();
        run_owner = owner;
      }
      run += glyph;
    }
    flush();
    out.push_back(std::move(line));
  }

  // The x axis: a tick mark under each labelled tick, a cross under each gap.
  // Steps are whole numbers: their ticks are too (no 2.5 between 0 and 5).
  bool whole = true;
  for (const Series& s : plot.series) {
    for (std::size_t i = 0; i < s.y.size() && whole; ++i) whole = x_of(s, i) == std::floor(x_of(s, i));
  }
  const int x_target = std::max(2, columns / 8);
  Ticks x_ticks = linear_ticks(x_lo, x_hi, x_target);
  for (int t : {x_target - 1, x_target + 1, x_target - 2, x_target + 2}) {
    if (!whole || x_ticks.step == std::floor(x_ticks.step)) break;
    if (t >= 2) x_ticks = linear_ticks(x_lo, x_hi, t);
  }
  std::string labels(static_cast<std::size_t>(width), ' ');
  std::vector<bool> tick_column(static_cast<std::size_t>(columns), false);
  int free_from = 0;  // the first column of the label line a label may take
  for (std::size_t t = 0; t < x_ticks.values.size(); ++t) {
    const int column = dot_x(x_ticks.values[t]) / dots_per_column;
    const std::string& label = x_ticks.labels[t];
    const int length = static_cast<int>(label.size());
    int start = static_cast<int>(label_width) + 1 + column - length / 2;
    start = std::clamp(start, 0, width - length);
    if (start < free_from) continue;
    labels.replace(static_cast<std::size_t>(start), label.size(), label);
    free_from = start + length + 1;
    tick_column[static_cast<std::size_t>(column)] = true;
  }
  std::string axis(label_width, ' ');
  axis += braille ? "\u2514" : "+";
  for (int column = 0; column < columns; ++column) {
    if (gap_column[static_cast<std::size_t>(column)]) {
      axis += painted(braille ? "\u00d7" : "x", nan_colour(), options.colour);
    } else if (tick_column[static_cast<std::size_t>(column)]) {
      axis += braille ? "\u252c" : "+";
    } else {
      axis += braille ? "\u2500" : "-";
    }
  }
  out.push_back(std::move(axis));
  while (!labels.empty() && labels.back() == ' ') labels.pop_back();
  out.push_back(std::move(labels));

  out.insert(out.end(), legend.begin(), legend.end());
  return out;
}

std::vector<std::string> render_terminal(const TerminalBars& bars, const TerminalOptions& options) {
  if (bars.labels.size() != bars.values.size() ||
      (!bars.value_labels.empty() && bars.value_labels.size() != bars.values.size()))
    throw Error("terminal bars: " + std::to_string(bars.labels.size()) + " labels, " +
                std::to_string(bars.values.size()) + " values and " +
                std::to_string(bars.value_labels.size()) + " value labels; expected one of each a bar");
  const bool blocks = options.glyphs == Glyphs::unicode;
  const int width = std::max(options.width, kMinWidth);
  std::vector<std::string> values;
  std::size_t value_width = 0;
  double top = 0, smallest = INFINITY;
  for (std::size_t i = 0; i < bars.values.size(); ++i) {
    const double v = bars.values[i];
    values.push_back(bars.value_labels.empty() ? format_value(v) : bars.value_labels[i]);
    value_width = std::max(value_width, terminal_width(values.back()));
    if (std::isfinite(v) && v > 0) {
      top = std::max(top, v);
      smallest = std::min(smallest, v);
    }
  }
  std::size_t label_width = 0;
  for (const std::string& label : bars.labels) label_width = std::max(label_width, terminal_width(label));
  label_width = std::min<std::size_t>(label_width, static_cast<std::size_t>(width) / 3);
  const int area = std::max(1, width - static_cast<int>(label_width) - static_cast<int>(value_width) - 2);
  const bool log = bars.scale == Scale::log && top > 0;
  const double floor = log ? std::log10(smallest) - 1 : 0;

  std::vector<std::string> out;
  for (std::size_t i = 0; i < bars.values.size(); ++i) {
    const std::string label = elide_middle(bars.labels[i], label_width, options.glyphs);
    std::string line = label + std::string(label_width - terminal_width(label), ' ') + " ";
    const double v = bars.values[i];
    double fraction = 0;
    if (std::isfinite(v) && v > 0 && top > 0)
      fraction = log ? (std::log10(v) - floor) / (std::log10(top) - floor) : v / top;
    // In eighths of a cell (blocks) or whole cells (ASCII), at least one for a positive value.
    const int unit = blocks ? 8 : 1;
    int length = static_cast<int>(std::lround(fraction * area * unit));
    if (fraction > 0) length = std::max(length, 1);
    std::string bar;
    for (int k = 0; k < length / unit; ++k) bar += blocks ? "\u2588" : "#";
    if (blocks && length % unit != 0)
      bar += utf8(static_cast<char32_t>(0x2590 - length % unit));  // U+2589..U+258F
    line += painted(bar, series_color(0), options.colour && !bar.empty());
    line += std::string(static_cast<std::size_t>(area) - terminal_width(bar), ' ') + " ";
    const std::string value = pad_left(values[i], value_width);
    line += std::isfinite(v) ? value : painted(value, nan_colour(), options.colour);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out.push_back(std::move(line));
  }
  return out;
}

std::vector<std::string> render_terminal_histogram(std::span<const double> edges,
                                                   std::span<const std::int64_t> counts,
                                                   const TerminalOptions& options) {
  if (edges.size() != counts.size() + 1)
    throw Error("terminal histogram: " + std::to_string(edges.size()) + " edges for " +
                std::to_string(counts.size()) + " bins; expected one more edge than bins");
  const std::size_t bins = counts.size();
  const std::size_t lines = options.height > 0 ? static_cast<std::size_t>(options.height) : bins;
  const std::size_t group = std::max<std::size_t>(1, (bins + lines - 1) / std::max<std::size_t>(1, lines));
  TerminalBars bars;
  std::vector<std::pair<double, double>> ranges;
  for (std::size_t b = 0; b < bins; b += group) {
    const std::size_t end = std::min(bins, b + group);
    std::int64_t count = 0;
    for (std::size_t k = b; k < end; ++k) count += counts[k];
    ranges.emplace_back(edges[b], edges[end]);
    bars.values.push_back(static_cast<double>(count));
    bars.value_labels.push_back(std::to_string(count));
  }
  // Four significant digits, unless that makes neighbours look alike: then at the bin width's
  // resolution.
  std::vector<std::string> lo, hi;
  for (const auto& [a, b] : ranges) {
    lo.push_back(format_value(a));
    hi.push_back(format_value(b));
  }
  bool alike = false;
  for (std::size_t i = 0; i < ranges.size(); ++i) alike = alike || lo[i] == hi[i];
  if (alike) {
    const double step = (ranges.back().second - ranges.front().first) / static_cast<double>(ranges.size());
    for (std::size_t i = 0; i < ranges.size(); ++i) {
      lo[i] = format_tick(ranges[i].first, step);
      hi[i] = format_tick(ranges[i].second, step);
    }
  }
  std::size_t lo_width = 0;
  for (const std::string& label : lo) lo_width = std::max(lo_width, label.size());
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    std::string label = "[";
    label += pad_left(lo[i], lo_width);
    label += ", ";
    label += hi[i];
    label += i + 1 == ranges.size() ? ']' : ')';
    bars.labels.push_back(std::move(label));
  }
  return render_terminal(bars, options);
}

}  // namespace tfdebug::viz
