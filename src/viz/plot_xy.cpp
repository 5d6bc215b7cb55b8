// Line and scatter plots. Note [Gaps, not zeros]: a value that is not finite (or not positive on
// a log axis) is never a coordinate. A line breaks there, an isolated point between two gaps is
// drawn as a dot so that it is not lost, and each missing x gets a vermillion tick under the plot
// box, so that a NaN step is seen, not silently bridged.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

#include "panels.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::viz::detail {
namespace {

void check_series(const std::vector<Series>& series, const char* plot) {
  for (const Series& s : series) {
    if (!s.x.empty() && s.x.size() != s.y.size()) {
      throw Error(std::string(plot) + " series '" + s.name + "': " + std::to_string(s.x.size()) +
                  " x values for " + std::to_string(s.y.size()) + " y values");
    }
  }
}

struct Planned {
  AxisPlan x, y;
  Legend legend;
  Layout layout;
};

Planned plan_xy(const Canvas& canvas, const std::string& title, const Axis& x_axis, const Axis& y_axis,
                const std::vector<Series>& series, Box panel) {
  Extent xs, ys;
  for (const Series& s : series) {
    for (std::size_t i = 0; i < s.y.size(); ++i) {
      if (!plottable(x_of(s, i), x_axis.scale)) continue;
      xs.add(x_of(s, i), x_axis.scale);
      ys.add(s.y[i], y_axis.scale);
    }
  }
  Planned p;
  p.x = plan_axis(x_axis, xs, 6);
  p.y = plan_axis(y_axis, ys, 5);
  p.legend = make_legend(series);
  p.layout = frame_layout(canvas, title, p.x, p.y, panel, legend_width(canvas, p.legend));
  return p;
}

void mark_missing(const Canvas& canvas, const Layout& layout, double px) {
  if (px < layout.left || px > layout.right) return;
  cairo_t* cr = canvas.cr();
  canvas.set_color(kNonfiniteMark);
  cairo_move_to(cr, px, layout.bottom - 7);
  cairo_line_to(cr, px - 4, layout.bottom - 1);
  cairo_line_to(cr, px + 4, layout.bottom - 1);
  cairo_close_path(cr);
  cairo_fill(cr);
}

// Note [Columns of points]: a series of a million steps is drawn in an 800-pixel plot. Points
// whose x lands in the same pixel column are reduced to the first, the lowest, the highest and
// the last of them, in their order (M4 aggregation): the stroked path covers exactly the pixels
// the full one would, at the cost of four points a column instead of thousands.
class ColumnPath {
 public:
  explicit ColumnPath(cairo_t* cr) : cr_(cr) {}

  void add(double x, double y) {
    const double column = std::floor(x);
    if (count_ > 0 && column != column_) flush();
    if (count_ == 0) {
      column_ = column;
      first_ = min_ = max_ = last_ = {x, y, index_};
    } else {
      if (y < min_.y) min_ = {x, y, index_};
      if (y > max_.y) max_ = {x, y, index_};
      last_ = {x, y, index_};
    }
    ++count_;
    ++index_;
    ++points_;
  }
  // Emits what is pending; the path is then ready to stroke.
  void finish() {
    if (count_ > 0) flush();
  }
  void reset() {
    count_ = 0;
    points_ = 0;
    started_ = false;
  }
  std::size_t points() const noexcept { return points_; }
  double last_x() const noexcept { return last_.x; }
  double last_y() const noexcept { return last_.y; }

 private:
  struct Point {
    double x = 0, y = 0;
    std::size_t index = 0;
  };
  void emit(const Point& p) {
    if (started_) {
      cairo_line_to(cr_, p.x, p.y);
    } else {
      cairo_move_to(cr_, p.x, p.y);
      started_ = true;
    }
  }
  void flush() {
    std::array<Point, 4> points{first_, min_, max_, last_};
    std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.index < b.index; });
    std::size_t previous = SIZE_MAX;
    for (const Point& p : points) {
      if (p.index == previous) continue;  // the same point in two roles
      emit(p);
      previous = p.index;
    }
    count_ = 0;
  }

  cairo_t* cr_;
  double column_ = 0;
  std::size_t count_ = 0, index_ = 0, points_ = 0;
  bool started_ = false;
  Point first_, min_, max_, last_;
};

void dot(const Canvas& canvas, double px, double py, double radius, Rgb color, double alpha = 1.0) {
  canvas.set_color(color, alpha);
  cairo_arc(canvas.cr(), px, py, radius, 0, 2 * M_PI);
  cairo_fill(canvas.cr());
}

}  // namespace

Layout draw_panel(const Canvas& canvas, const LinePlot& plot, Box panel, bool draw) {
  check_series(plot.series, "line plot");
  const Planned p = plan_xy(canvas, plot.title, plot.x, plot.y, plot.series, panel);
  if (!draw) return p.layout;
  const Layout& l = p.layout;
  draw_frame(canvas, plot.title, p.x, p.y, l, panel);
  clip_to(canvas, l);
  cairo_t* cr = canvas.cr();
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
  for (std::size_t k = 0; k < plot.series.size(); ++k) {
    const Series& s = plot.series[k];
    const Rgb color = series_color(k);
    ColumnPath path(cr);
    double last_mark = -1;
    auto end_run = [&] {
      if (path.points() == 1) {
        dot(canvas, path.last_x(), path.last_y(), 2.5, color);
      } else if (path.points() > 1) {
        path.finish();
        canvas.set_color(color);
        cairo_set_line_width(cr, 2);
        cairo_stroke(cr);
      }
      cairo_new_path(cr);
      path.reset();
    };
    for (std::size_t i = 0; i < s.y.size(); ++i) {
      const double x = x_of(s, i);
      if (!plottable(x, plot.x.scale)) continue;
      if (!plottable(s.y[i], plot.y.scale)) {
        end_run();
        const double px = l.to_pixel_x(x);
        if (std::fabs(px - last_mark) >= 1) {  // one mark a pixel, however many NaN land there
          mark_missing(canvas, l, px);
          last_mark = px;
        }
        continue;
      }
      path.add(l.to_pixel_x(x), l.to_pixel_y(s.y[i]));
    }
    end_run();
  }
  cairo_restore(cr);
  // Markers after the clip: a point on the frame is drawn whole.
  for (std::size_t k = 0; k < plot.series.size() && plot.markers; ++k) {
    const Series& s = plot.series[k];
    const Rgb color = series_color(k);
    {
      for (std::size_t i = 0; i < s.y.size(); ++i) {
        if (plottable(x_of(s, i), plot.x.scale) && plottable(s.y[i], plot.y.scale)) {
          dot(canvas, l.to_pixel_x(x_of(s, i)), l.to_pixel_y(s.y[i]), 3, color);
        }
      }
    }
  }
  draw_legend(canvas, p.legend, l.right + 12, l.top);
  return l;
}

Layout draw_panel(const Canvas& canvas, const ScatterPlot& plot, Box panel, bool draw) {
  check_series(plot.series, "scatter plot");
  const Planned p = plan_xy(canvas, plot.title, plot.x, plot.y, plot.series, panel);
  if (!draw) return p.layout;
  const Layout& l = p.layout;
  draw_frame(canvas, plot.title, p.x, p.y, l, panel);
  clip_to(canvas, l);
  for (std::size_t k = 0; k < plot.series.size(); ++k) {
    const Series& s = plot.series[k];
    for (std::size_t i = 0; i < s.y.size(); ++i) {
      const double x = x_of(s, i);
      if (!plottable(x, plot.x.scale)) continue;
      if (!plottable(s.y[i], plot.y.scale)) {
        mark_missing(canvas, l, l.to_pixel_x(x));
        continue;
      }
      dot(canvas, l.to_pixel_x(x), l.to_pixel_y(s.y[i]), 3.5, series_color(k), 0.75);
    }
  }
  cairo_restore(canvas.cr());
  draw_legend(canvas, p.legend, l.right + 12, l.top);
  return l;
}

}  // namespace tfdebug::viz::detail
