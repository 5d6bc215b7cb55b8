// An RGBA raster in memory: what plots render to before they are written as PNG, and the frames
// of GIFs and videos.
//
//   tfdebug::viz::Image frame(320, 200);           // transparent black
//   frame.set(10, 20, {255, 0, 0});                // opaque red pixel at x = 10, y = 20
//   tfdebug::viz::Rgb c = frame.at(10, 20);
//   tfdebug::viz::write_png(frame, "frame.png");
//
// Pixels are stored row by row from the top, 4 bytes each (r, g, b, a), not premultiplied.
#pragma once

#include <cstdint>
#include <filesystem>
#include <vector>

#include "tfdebug/viz/color.hpp"

namespace tfdebug::viz {

class Image {
 public:
  Image() = default;
  Image(int width, int height);  // throws tfdebug::Error past 16384 x 16384 or for negatives

  int width() const noexcept { return width_; }
  int height() const noexcept { return height_; }
  bool empty() const noexcept { return width_ == 0 || height_ == 0; }

  Rgb at(int x, int y) const;  // TFDEBUG_ASSERT inside the image
  std::uint8_t alpha(int x, int y) const;
  void set(int x, int y, Rgb color, std::uint8_t alpha = 255);
  void fill(Rgb color, std::uint8_t alpha = 255);

  std::uint8_t* data() noexcept { return pixels_.data(); }
  const std::uint8_t* data() const noexcept { return pixels_.data(); }
  std::size_t stride() const noexcept { return static_cast<std::size_t>(width_) * 4; }

 private:
  int width_ = 0, height_ = 0;
  std::vector<std::uint8_t> pixels_;
};

// PNG through libpng; throws tfdebug::Error naming the file when it cannot be written.
void write_png(const Image& image, const std::filesystem::path& path);
// Reads an 8-bit PNG (any colour type libpng can expand to RGBA); throws tfdebug::Error naming
// the file and what is wrong.
Image read_png(const std::filesystem::path& path);

}  // namespace tfdebug::viz
