#include "tfdebug/viz/image.hpp"

#include <gtest/gtest.h>

#include <unistd.h>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "tfdebug/core/error.hpp"
#include "tfdebug/viz/color.hpp"

namespace tfdebug::viz {
namespace {

std::filesystem::path temp_path(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("tfdebug_viz_" + std::to_string(::getpid()) + "_" + name);
}

TEST(Image, PngRoundTripKeepsEveryPixel) {
  Image image(7, 5);
  image.fill({255, 255, 255});
  image.set(3, 2, {213, 94, 0});
  image.set(6, 4, {0, 114, 178}, 128);
  const auto path = temp_path("round.png");
  write_png(image, path);
  const Image back = read_png(path);
  ASSERT_EQ(back.width(), 7);
  ASSERT_EQ(back.height(), 5);
  EXPECT_EQ(back.at(3, 2), (Rgb{213, 94, 0}));
  EXPECT_EQ(back.at(6, 4), (Rgb{0, 114, 178}));
  EXPECT_EQ(back.alpha(6, 4), 128);
  EXPECT_EQ(back.at(0, 0), (Rgb{255, 255, 255}));
  std::filesystem::remove(path);
}

TEST(Image, BadFilesAndSizesAreErrorsNamingThem) {
  const auto path = temp_path("not.png");
  std::ofstream(path) << "GIF89a";
  try {
    read_png(path);
    FAIL() << "read a non-PNG";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not a PNG"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path.string()), std::string::npos) << e.what();
  }
  std::filesystem::remove(path);
  EXPECT_THROW(Image(20000, 10), Error);
  EXPECT_THROW(write_png(Image(2, 2), "/nonexistent-dir/x.png"), Error);
}

TEST(Color, PaletteAndMapsHitTheirAnchors) {
  EXPECT_EQ(to_hex(series_color(0)), "#0072b2");
  EXPECT_EQ(series_color(8), series_color(0));
  EXPECT_EQ(to_hex(map_color(Colormap::viridis, 0)), "#440154");
  EXPECT_EQ(to_hex(map_color(Colormap::viridis, 1)), "#fde725");
  EXPECT_EQ(to_hex(map_color(Colormap::viridis, 0.5)), "#26828e");
  EXPECT_EQ(to_hex(map_color(Colormap::diverging, 0.5)), "#f7f7f7");
  EXPECT_EQ(map_color(Colormap::viridis, NAN), missing_color());
  EXPECT_EQ(map_color(Colormap::viridis, 7.0), map_color(Colormap::viridis, 1.0));
}

}  // namespace
}  // namespace tfdebug::viz
