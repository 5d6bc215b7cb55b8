#include "tfdebug/viz/image.hpp"

#include <png.h>

#include <cstdio>
#include <memory>
#include <string>

#include "tfdebug/core/error.hpp"

namespace tfdebug::viz {
namespace {

constexpr int kMaxSide = 16384;

struct FileCloser {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// libpng reports errors through longjmp by default; its error callback throws instead, which is
// safe here because nothing between png_* calls owns a resource that unwinding would skip.
[[noreturn]] void throw_png_error(png_structp png, png_const_charp message) {
  const auto* path = static_cast<const std::string*>(png_get_error_ptr(png));
  throw Error(*path + ": PNG: " + message);
}
void ignore_png_warning(png_structp, png_const_charp) {}

}  // namespace

Image::Image(int width, int height) : width_(width), height_(height) {
  if (width < 0 || height < 0 || width > kMaxSide || height > kMaxSide) {
    throw Error("image size " + std::to_string(width) + " x " + std::to_string(height) + " is outside 0 .. " +
                std::to_string(kMaxSide) + " pixels a side");
  }
  pixels_.assign(static_cast<std::size_t>(width) * static_cast<std::size_t>(height) * 4, 0);
}

Rgb Image::at(int x, int y) const {
  TFDEBUG_ASSERT(x >= 0 && y >= 0 && x < width_ && y < height_, "pixel outside the image");
  const std::uint8_t* p =
      pixels_.data() + static_cast<std::size_t>(y) * stride() + static_cast<std::size_t>(x) * 4;
  return {p[0], p[1], p[2]};
}

std::uint8_t Image::alpha(int x, int y) const {
  TFDEBUG_ASSERT(x >= 0 && y >= 0 && x < width_ && y < height_, "pixel outside the image");
  return pixels_[static_cast<std::size_t>(y) * stride() + static_cast<std::size_t>(x) * 4 + 3];
}

void Image::set(int x, int y, Rgb color, std::uint8_t alpha) {
  TFDEBUG_ASSERT(x >= 0 && y >= 0 && x < width_ && y < height_, "pixel outside the image");
  std::uint8_t* p = pixels_.data() + static_cast<std::size_t>(y) * stride() + static_cast<std::size_t>(x) * 4;
  p[0] = color.r;
  p[1] = color.g;
  p[2] = color.b;
  p[3] = alpha;
}

void Image::fill(Rgb color, std::uint8_t alpha) {
  for (std::size_t i = 0; i < pixels_.size(); i += 4) {
    pixels_[i] = color.r;
    pixels_[i + 1] = color.g;
    pixels_[i + 2] = color.b;
    pixels_[i + 3] = alpha;
  }
}

void write_png(const Image& image, const std::filesystem::path& path) {
  const std::string name = path.string();
  if (image.empty()) throw Error(name + ": cannot write an empty image");
  File file(std::fopen(name.c_str(), "wb"));
  if (!file) throw Error(name + ": cannot open for writing");
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, const_cast<std::string*>(&name),
                                            throw_png_error, ignore_png_warning);
  if (png == nullptr) throw Error(name + ": PNG: out of memory");
  png_infop info = png_create_info_struct(png);
  struct Cleanup {
    png_structp* png;
    png_infop* info;
    ~Cleanup() { png_destroy_write_struct(png, info); }
  } cleanup{&png, &info};
  png_init_io(png, file.get());
  png_set_IHDR(png, info, static_cast<png_uint_32>(image.width()), static_cast<png_uint_32>(image.height()),
               8, PNG_COLOR_TYPE_RGBA, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int y = 0; y < image.height(); ++y) {
    png_write_row(png, image.data() + static_cast<std::size_t>(y) * image.stride());
  }
  png_write_end(png, nullptr);
  if (std::fflush(file.get()) != 0) throw Error(name + ": write failed");
}

Image read_png(const std::filesystem::path& path) {
  const std::string name = path.string();
  File file(std::fopen(name.c_str(), "rb"));
  if (!file) throw Error(name + ": cannot open");
  png_byte signature[8];
  if (std::fread(signature, 1, 8, file.get()) != 8 || png_sig_cmp(signature, 0, 8) != 0) {
    throw Error(name + ": not a PNG file (no PNG signature)");
  }
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, const_cast<std::string*>(&name),
                                           throw_png_error, ignore_png_warning);
  if (png == nullptr) throw Error(name + ": PNG: out of memory");
  png_infop info = png_create_info_struct(png);
  struct Cleanup {
    png_structp* png;
    png_infop* info;
    ~Cleanup() { png_destroy_read_struct(png, info, nullptr); }
  } cleanup{&png, &info};
  png_init_io(png, file.get());
  png_set_sig_bytes(png, 8);
  png_set_user_limits(png, kMaxSide, kMaxSide);
  png_read_info(png, info);
  png_set_expand(png);
  png_set_strip_16(png);
  png_set_gray_to_rgb(png);
  png_set_add_alpha(png, 0xff, PNG_FILLER_AFTER);
  png_read_update_info(png, info);
  Image image(static_cast<int>(png_get_image_width(png, info)),
              static_cast<int>(png_get_image_height(png, info)));
  for (int y = 0; y < image.height(); ++y) {
    png_read_row(png, image.data() + static_cast<std::size_t>(y) * image.stride(), nullptr);
  }
  png_read_end(png, nullptr);
  return image;
}

}  // namespace tfdebug::viz
