#include "axes.hpp"

#include <algorithm>
#include <cmath>

namespace tfdebug::viz::detail {
namespace {

constexpr double kPad = 8;
constexpr double kTickLength = 4;

// Every k-th label, k the smallest that keeps neighbours from overlapping along the axis.
std::size_t label_stride(const Canvas& canvas, const AxisPlan& axis, bool horizontal, double axis_pixels) {
  if (axis.labels.size() < 2 || axis_pixels <= 0) return 1;
  double widest = 0;
  for (const auto& label : axis.labels) {
    const TextSize size = canvas.measure(label, kTickFont);
    widest = std::max(widest, horizontal ? size.width : size.height);
  }
  const double spacing = axis_pixels / static_cast<double>(axis.labels.size());
  return std::max<std::size_t>(1, static_cast<std::size_t>(std::ceil((widest + 6) / spacing)));
}

bool is_category_axis(const AxisPlan& axis) {
  return !axis.ticks.empty() && axis.ticks.front() == 0.5 && !axis.grid;
}

// "+3 more" (built in steps: GCC 12 warns falsely on "+" + std::to_string(n), PR105329).
std::string more_text(std::size_t n) {
  std::string text = std::to_string(n);
  text.insert(0, 1, '+');
  text += " more";
  return text;
}

}  // namespace

bool plottable(double value, Scale scale) noexcept {
  return std::isfinite(value) && (scale == Scale::linear || value > 0);
}

void Extent::add(double value, Scale scale) noexcept {
  if (!plottable(value, scale)) return;
  lo = std::min(lo, value);
  hi = std::max(hi, value);
}

AxisPlan plan_axis(const Axis& axis, const Extent& data, int target) {
  AxisPlan plan;
  plan.title = axis.title;
  plan.scale = axis.scale;
  const bool log = axis.scale == Scale::log;
  double lo = data.empty() ? (log ? 1.0 : 0.0) : data.lo;
  double hi = data.empty() ? (log ? 10.0 : 1.0) : data.hi;
  if (axis.lo && plottable(*axis.lo, axis.scale)) lo = *axis.lo;
  if (axis.hi && plottable(*axis.hi, axis.scale)) hi = *axis.hi;
  if (lo > hi) std::swap(lo, hi);
  const Range padded = padded_range(lo, hi, log, target);
  plan.range = {axis.lo && plottable(*axis.lo, axis.scale) ? lo : padded.lo,
                axis.hi && plottable(*axis.hi, axis.scale) ? hi : padded.hi};
  if (plan.range.lo == plan.range.hi) plan.range = padded;
  const Ticks ticks = log ? log_ticks(plan.range.lo, plan.range.hi, target)
                          : linear_ticks(plan.range.lo, plan.range.hi, target);
  plan.ticks = ticks.values;
  plan.labels = ticks.labels;
  if (axis.integer && !log && ticks.step < 1) {
    // Fewer whole numbers than ticks wanted: each of them.
    plan.ticks.clear();
    plan.labels.clear();
    for (double v = std::ceil(plan.range.lo); v <= plan.range.hi && plan.ticks.size() < 100; ++v) {
      plan.ticks.push_back(v);
      plan.labels.push_back(format_tick(v, 1));
    }
  }
  return plan;
}

AxisPlan category_axis(std::string title, const std::vector<std::string>& names) {
  AxisPlan plan;
  plan.title = std::move(title);
  plan.range = {0, static_cast<double>(std::max<std::size_t>(names.size(), 1))};
  plan.grid = false;
  for (std::size_t i = 0; i < names.size(); ++i) {
    plan.ticks.push_back(static_cast<double>(i) + 0.5);
    plan.labels.push_back(names[i]);
  }
  return plan;
}

Legend make_legend(const std::vector<Series>& series) {
  Legend legend;
  if (series.size() == 1 && series[0].name.empty()) return legend;
  for (std::size_t i = 0; i < series.size(); ++i) {
    if (legend.names.size() == 8) {
      legend.more = series.size() - i;
      break;
    }
    legend.names.push_back(series[i].name.empty() ? "series " + std::to_string(i + 1) : series[i].name);
    legend.colors.push_back(series_color(i));
  }
  return legend;
}

double legend_width(const Canvas& canvas, const Legend& legend) {
  if (legend.empty()) return 0;
  double widest = 0;
  for (const auto& name : legend.names) widest = std::max(widest, canvas.measure(name, kLabelFont).width);
  if (legend.more > 0) widest = std::max(widest, canvas.measure(more_text(legend.more), kLabelFont).width);
  return std::min(widest, 180.0) + 22 + kPad;
}

void draw_legend(const Canvas& canvas, const Legend& legend, double left, double top) {
  const double row = 18;
  for (std::size_t i = 0; i < legend.names.size(); ++i) {
    const double y = top + row * static_cast<double>(i) + row / 2;
    canvas.line(left, y, left + 16, y, legend.colors[i], 2.5);
    canvas.text(canvas.fit(legend.names[i], kLabelFont, 180), left + 22, y, Align::start, Align::middle,
                kLabelFont);
  }
  if (legend.more > 0) {
    const double y = top + row * static_cast<double>(legend.names.size()) + row / 2;
    canvas.text(more_text(legend.more), left + 22, y, Align::start, Align::middle, kLabelFont, kMutedInk);
  }
}

Layout frame_layout(const Canvas& canvas, const std::string& title, const AxisPlan& x, const AxisPlan& y,
                    Box panel, double right_reserve, bool y_down) {
  double tick_width = 0;
  for (const auto& label : y.labels)
    tick_width = std::max(tick_width, canvas.measure(label, kTickFont).width);
  tick_width = std::min(tick_width, panel.width() * 0.3);
  const double tick_height = canvas.measure("0123456789", kTickFont).height;
  const double label_height = canvas.measure("Ag", kLabelFont).height;
  const double title_height = title.empty() ? 0 : canvas.measure(title, kTitleFont).height + kPad;
  Layout layout;
  layout.left =
      panel.left + kPad + (y.title.empty() ? 0 : label_height + kPad) + tick_width + kTickLength + 4;
  layout.top = panel.top + kPad + title_height;
  // The last x label is centred on the frame's right edge: leave it room to be read whole.
  const double last_label =
      x.labels.empty() || right_reserve > 0 ? 0 : canvas.measure(x.labels.back(), kTickFont).width / 2;
  layout.right = panel.right - std::max(kPad, last_label + 2) - right_reserve;
  layout.bottom =
      panel.bottom - kPad - (x.title.empty() ? 0 : label_height + 4) - tick_height - kTickLength - 4;
  if (layout.right - layout.left < 20) layout.right = layout.left + 20;
  if (layout.bottom - layout.top < 20) layout.bottom = layout.top + 20;
  layout.x = x.range;
  layout.y = y.range;
  layout.x_scale = x.scale;
  layout.y_scale = y.scale;
  layout.y_down = y_down;
  return layout;
}

void draw_frame(const Canvas& canvas, const std::string& title, const AxisPlan& x, const AxisPlan& y,
                const Layout& layout, Box panel) {
  if (!title.empty()) {
    canvas.text(canvas.fit(title, kTitleFont, panel.width() - 2 * kPad), (panel.left + panel.right) / 2,
                panel.top + kPad, Align::middle, Align::start, kTitleFont);
  }
  const std::size_t x_stride = label_stride(canvas, x, true, layout.right - layout.left);
  const std::size_t y_stride = label_stride(canvas, y, false, layout.bottom - layout.top);
  for (std::size_t i = 0; i < x.ticks.size(); ++i) {
    const double px = layout.to_pixel_x(x.ticks[i]);
    if (x.grid) canvas.line(px, layout.top, px, layout.bottom, kGrid);
    canvas.line(px, layout.bottom, px, layout.bottom + kTickLength, kMutedInk);
    if (i % x_stride != 0) continue;
    const double room =
        is_category_axis(x) ? (layout.right - layout.left) / x.ticks.size() * x_stride - 4 : 1e9;
    canvas.text(canvas.fit(x.labels[i], kTickFont, room), px, layout.bottom + kTickLength + 2, Align::middle,
                Align::start, kTickFont, kMutedInk);
  }
  const double y_room = layout.left - panel.left - kPad - 4 - kTickLength;
  for (std::size_t i = 0; i < y.ticks.size(); ++i) {
    const double py = layout.to_pixel_y(y.ticks[i]);
    if (y.grid) canvas.line(layout.left, py, layout.right, py, kGrid);
    canvas.line(layout.left - kTickLength, py, layout.left, py, kMutedInk);
    if (i % y_stride != 0) continue;
    canvas.text(canvas.fit(y.labels[i], kTickFont, y_room), layout.left - kTickLength - 3, py, Align::end,
                Align::middle, kTickFont, kMutedInk);
  }
  cairo_t* cr = canvas.cr();
  canvas.set_color(kMutedInk);
  cairo_set_line_width(cr, 1);
  cairo_rectangle(cr, layout.left + 0.5, layout.top + 0.5, layout.right - layout.left - 1,
                  layout.bottom - layout.top - 1);
  cairo_stroke(cr);
  if (!x.title.empty()) {
    canvas.text(canvas.fit(x.title, kLabelFont, layout.right - layout.left), (layout.left + layout.right) / 2,
                panel.bottom - kPad, Align::middle, Align::end, kLabelFont);
  }
  if (!y.title.empty()) {
    canvas.text(canvas.fit(y.title, kLabelFont, layout.bottom - layout.top), panel.left + kPad,
                (layout.top + layout.bottom) / 2, Align::middle, Align::start, kLabelFont, kInk, 90);
  }
}

void clip_to(const Canvas& canvas, const Layout& layout) {
  cairo_save(canvas.cr());
  cairo_rectangle(canvas.cr(), layout.left, layout.top, layout.right - layout.left,
                  layout.bottom - layout.top);
  cairo_clip(canvas.cr());
}

}  // namespace tfdebug::viz::detail
