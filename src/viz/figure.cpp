// Figures: panels laid out on a page, and the three surfaces they are drawn on (an image for
// PNG, SVG, PDF). The same code draws all three, so a PNG test pins what the SVG shows too.
#include <cairo-pdf.h>
#include <cairo-svg.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <memory>

#include "panels.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::viz {
namespace {

using detail::Box;
using detail::Canvas;

using SurfacePtr = std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)>;
using ContextPtr = std::unique_ptr<cairo_t, decltype(&cairo_destroy)>;

void check_size(Size size) {
  if (size.width < 50 || size.height < 50 || size.width > 16384 || size.height > 16384) {
    throw Error("plot size " + std::to_string(size.width) + " x " + std::to_string(size.height) +
                " is outside 50 .. 16384 pixels a side");
  }
}

void check_figure(const Figure& figure) {
  if (figure.panels.empty()) throw Error("a figure needs at least one plot");
}

Figure one_panel(const Plot& plot) {
  Figure figure;
  figure.panels.push_back(plot);
  return figure;
}

std::vector<Box> panel_boxes(const Canvas& canvas, const Figure& figure, Size size) {
  const std::size_t columns = static_cast<std::size_t>(std::clamp<int>(figure.columns, 1, 64));
  const std::size_t count = figure.panels.size();
  const std::size_t rows = (count + columns - 1) / columns;
  const std::size_t used_columns = std::min(columns, count);
  const double top = figure.title.empty() ? 0 : canvas.measure(figure.title, detail::kTitleFont).height + 16;
  const double w = size.width / static_cast<double>(used_columns);
  const double h = (size.height - top) / static_cast<double>(rows);
  std::vector<Box> boxes;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t row = i / columns, column = i % columns;
    const double x = w * static_cast<double>(column), y = top + h * static_cast<double>(row);
    boxes.push_back({x, y, x + w, y + h});
  }
  return boxes;
}

Layout draw_figure(cairo_t* cr, const Figure& figure, Size size, bool draw, std::size_t wanted = 0) {
  const Canvas canvas(cr);
  if (draw) {
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    if (!figure.title.empty()) {
      canvas.text(canvas.fit(figure.title, detail::kTitleFont, size.width - 16), size.width / 2.0, 8,
                  detail::Align::middle, detail::Align::start, detail::kTitleFont);
    }
  }
  const std::vector<Box> boxes = panel_boxes(canvas, figure, size);
  Layout wanted_layout;
  for (std::size_t i = 0; i < figure.panels.size(); ++i) {
    if (!draw && i != wanted) continue;
    const Layout l = std::visit(
        [&](const auto& plot) { return detail::draw_panel(canvas, plot, boxes[i], draw); }, figure.panels[i]);
    if (i == wanted) wanted_layout = l;
  }
  return wanted_layout;
}

void check_status(cairo_surface_t* surface, const std::string& what) {
  const cairo_status_t status = cairo_surface_status(surface);
  if (status != CAIRO_STATUS_SUCCESS) throw Error(what + ": " + cairo_status_to_string(status));
}

cairo_status_t append_to_string(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

double Layout::to_pixel_x(double value) const {
  const double lo = x_scale == Scale::log ? std::log10(x.lo) : x.lo;
  const double hi = x_scale == Scale::log ? std::log10(x.hi) : x.hi;
  const double v = x_scale == Scale::log ? std::log10(value) : value;
  return left + (hi > lo ? (v - lo) / (hi - lo) : 0.5) * (right - left);
}

double Layout::to_pixel_y(double value) const {
  const double lo = y_scale == Scale::log ? std::log10(y.lo) : y.lo;
  const double hi = y_scale == Scale::log ? std::log10(y.hi) : y.hi;
  const double v = y_scale == Scale::log ? std::log10(value) : value;
  const double t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
  return y_down ? top + t * (bottom - top) : bottom - t * (bottom - top);
}

std::optional<Format> format_for(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return std::tolower(c); });
  if (ext == ".png") return Format::png;
  if (ext == ".svg") return Format::svg;
  if (ext == ".pdf") return Format::pdf;
  return std::nullopt;
}

Image render(const Figure& figure, Size size) {
  check_figure(figure);
  check_size(size);
  SurfacePtr surface(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, size.width, size.height),
                     cairo_surface_destroy);
  check_status(surface.get(), "plot image");
  {
    ContextPtr cr(cairo_create(surface.get()), cairo_destroy);
    draw_figure(cr.get(), figure, size, true);
  }
  cairo_surface_flush(surface.get());
  Image image(size.width, size.height);
  const unsigned char* data = cairo_image_surface_get_data(surface.get());
  const int stride = cairo_image_surface_get_stride(surface.get());
  for (int y = 0; y < size.height; ++y) {
    const auto* row = reinterpret_cast<const std::uint32_t*>(data + static_cast<std::ptrdiff_t>(y) * stride);
    for (int x = 0; x < size.width; ++x) {
      // The page is painted white first, so every pixel is opaque and needs no unpremultiplying.
      const std::uint32_t p = row[x];
      image.set(x, y,
                {static_cast<std::uint8_t>(p >> 16), static_cast<std::uint8_t>(p >> 8),
                 static_cast<std::uint8_t>(p)},
                static_cast<std::uint8_t>(p >> 24));
    }
  }
  return image;
}

std::string render_svg(const Figure& figure, Size size) {
  check_figure(figure);
  check_size(size);
  std::string svg;
  {
    SurfacePtr surface(cairo_svg_surface_create_for_stream(append_to_string, &svg, size.width, size.height),
                       cairo_surface_destroy);
    cairo_svg_surface_set_document_unit(surface.get(), CAIRO_SVG_UNIT_PX);
    {
      ContextPtr cr(cairo_create(surface.get()), cairo_destroy);
      draw_figure(cr.get(), figure, size, true);
    }
    cairo_surface_finish(surface.get());
    check_status(surface.get(), "SVG plot");
  }
  return svg;
}

void save(const Figure& figure, const std::filesystem::path& path, Size size) {
  const std::string name = path.string();
  const std::optional<Format> format = format_for(path);
  if (!format) throw Error(name + ": unknown picture format (expected a .png, .svg or .pdf file name)");
  check_figure(figure);
  check_size(size);
  switch (*format) {
    case Format::png:
      write_png(render(figure, size), path);
      return;
    case Format::svg: {
      const std::string svg = render_svg(figure, size);
      std::ofstream out(path, std::ios::binary);
      if (!out) throw Error(name + ": cannot open for writing");
      out.write(svg.data(), static_cast<std::streamsize>(svg.size()));
      out.close();
      if (!out) throw Error(name + ": write failed");
      return;
    }
    case Format::pdf: {
      // Points are pixels here: a 800 x 500 figure is a 800 x 500 pt page.
      SurfacePtr surface(cairo_pdf_surface_create(name.c_str(), size.width, size.height),
                         cairo_surface_destroy);
      check_status(surface.get(), name);
      {
        ContextPtr cr(cairo_create(surface.get()), cairo_destroy);
        draw_figure(cr.get(), figure, size, true);
      }
      cairo_surface_finish(surface.get());
      check_status(surface.get(), name);
      return;
    }
  }
}

Layout layout(const Figure& figure, Size size, std::size_t panel) {
  check_figure(figure);
  check_size(size);
  if (panel >= figure.panels.size()) {
    throw Error("panel " + std::to_string(panel) + " of a figure of " + std::to_string(figure.panels.size()));
  }
  SurfacePtr surface(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1), cairo_surface_destroy);
  ContextPtr cr(cairo_create(surface.get()), cairo_destroy);
  return draw_figure(cr.get(), figure, size, false, panel);
}

void save(const Plot& plot, const std::filesystem::path& path, Size size) {
  save(one_panel(plot), path, size);
}
Image render(const Plot& plot, Size size) {
  return render(one_panel(plot), size);
}
std::string render_svg(const Plot& plot, Size size) {
  return render_svg(one_panel(plot), size);
}
Layout layout(const Plot& plot, Size size) {
  return layout(one_panel(plot), size, 0);
}

}  // namespace tfdebug::viz
