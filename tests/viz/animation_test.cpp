#include "tfdebug/viz/animation.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "ffmpeg_reader.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::viz {
namespace {

using testing::decode_frame;
using testing::probe_frame_count;
using testing::probe_stream;
using testing::TempDir;

std::string file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A small plot-like animation: white page, a grey ramp of 20 levels (text-like antialiasing), a
// bar whose colour steps with the frame and a square that moves.
std::vector<Image> plot_like_frames(int count) {
  std::vector<Image> frames;
  for (int k = 0; k < count; ++k) {
    Image f(60, 40);
    f.fill({255, 255, 255});
    for (int x = 0; x < 20; ++x)
      f.set(x, 0, {std::uint8_t(12 * x), std::uint8_t(12 * x), std::uint8_t(12 * x)});
    for (int y = 30; y < 36; ++y) {
      for (int x = 0; x < 60; ++x) f.set(x, y, {0, std::uint8_t(100 + 30 * k), 178});
    }
    for (int y = 10; y < 20; ++y) {
      for (int x = 5 + 15 * k; x < 15 + 15 * k; ++x) f.set(x, y, {213, 94, 0});
    }
    frames.push_back(std::move(f));
  }
  return frames;
}

// The number of pixels that differ between two images of the same size.
int differing_pixels(const Image& a, const Image& b) {
  EXPECT_EQ(a.width(), b.width());
  EXPECT_EQ(a.height(), b.height());
  int n = 0;
  for (int y = 0; y < std::min(a.height(), b.height()); ++y) {
    for (int x = 0; x < std::min(a.width(), b.width()); ++x) n += a.at(x, y) == b.at(x, y) ? 0 : 1;
  }
  return n;
}

TEST(Gif, PlotColoursComeBackExactlyFromFfmpeg) {
  TempDir dir("gif_exact");
  const std::vector<Image> frames = plot_like_frames(3);
  const auto path = dir / "plot.gif";
  const GifInfo info = write_gif(frames, path, std::chrono::milliseconds(100));
  EXPECT_EQ(info.frames, 3u);
  EXPECT_EQ(info.width, 60);
  EXPECT_EQ(info.height, 40);
  EXPECT_TRUE(info.global_palette);
  EXPECT_EQ(info.quantized_frames, 0u);

  EXPECT_EQ(probe_frame_count(path), 3);
  for (int k = 0; k < 3; ++k) {
    const Image back = decode_frame(path, k);
    EXPECT_EQ(differing_pixels(back, frames[std::size_t(k)]), 0) << "frame " << k;
  }
  const std::string bytes = file_bytes(path);
  EXPECT_EQ(bytes.substr(0, 6), "GIF89a");
  // Readable by others as any new file is (giflib alone would make it 0600).
  const mode_t mask = ::umask(022);
  ::umask(mask);
  EXPECT_EQ(std::filesystem::status(path).permissions(),
            std::filesystem::perms(0666 & ~mask) & std::filesystem::perms::all);
  // The application extension that makes it loop forever: NETSCAPE2.0, sub-block 1, count 0.
  EXPECT_NE(bytes.find(std::string("\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00", 19)), std::string::npos);
  // Each frame shows for 100 ms.
  const std::string durations = testing::run_command(
      "ffprobe -v error -select_streams v:0 -show_entries packet=duration_time -of csv=p=0 " +
      testing::quoted(path));
  EXPECT_EQ(durations, "0.100000\n0.100000\n0.100000\n");
}

TEST(Gif, FramesStoreOnlyWhatChanged) {
  TempDir dir("gif_small");
  // 40 frames of 400 x 300 where only a 10 x 10 square moves: each frame after the first costs
  // its changed rectangle, not the picture.
  std::vector<Image> frames;
  for (int k = 0; k < 40; ++k) {
    Image f(400, 300);
    f.fill({255, 255, 255});
    for (int y = 100; y < 110; ++y) {
      for (int x = 5 * k; x < 5 * k + 10; ++x) f.set(x, y, {0, 114, 178});
    }
    frames.push_back(std::move(f));
  }
  const auto path = dir / "moving.gif";
  write_gif(frames, path);
  EXPECT_LT(std::filesystem::file_size(path), 6000u);
  EXPECT_EQ(probe_frame_count(path), 40);
  EXPECT_EQ(differing_pixels(decode_frame(path, 27), frames[27]), 0);
}

TEST(Gif, LocalPalettesWhenAllFramesTogetherHaveTooManyColours) {
  TempDir dir("gif_local");
  // 200 colours a frame, none shared between frames: 600 together.
  std::vector<Image> frames;
  for (int k = 0; k < 3; ++k) {
    Image f(20, 10);
    for (int i = 0; i < 200; ++i)
      f.set(i % 20, i / 20, {std::uint8_t(k * 80), std::uint8_t(i), std::uint8_t(255 - i)});
    frames.push_back(std::move(f));
  }
  const auto path = dir / "local.gif";
  const GifInfo info = write_gif(frames, path);
  EXPECT_FALSE(info.global_palette);
  EXPECT_EQ(info.quantized_frames, 0u);
  EXPECT_EQ(probe_frame_count(path), 3);
  for (int k = 0; k < 3; ++k)
    EXPECT_EQ(differing_pixels(decode_frame(path, k), frames[std::size_t(k)]), 0) << k;
}

TEST(Gif, MedianCutKeepsAGradientClose) {
  TempDir dir("gif_quantized");
  // 4096 colours: a red-green plane at blue 100.
  Image f(64, 64);
  for (int y = 0; y < 64; ++y) {
    for (int x = 0; x < 64; ++x) f.set(x, y, {std::uint8_t(4 * x), std::uint8_t(4 * y), 100});
  }
  const auto path = dir / "gradient.gif";
  const GifInfo info = write_gif(std::span<const Image>(&f, 1), path);
  EXPECT_FALSE(info.global_palette);
  EXPECT_EQ(info.quantized_frames, 1u);
  const Image back = decode_frame(path, 0);
  int worst = 0;
  double total = 0;
  std::set<std::uint32_t> colours;
  for (int y = 0; y < 64; ++y) {
    for (int x = 0; x < 64; ++x) {
      const Rgb a = f.at(x, y), b = back.at(x, y);
      colours.insert((std::uint32_t(b.r) << 16) | (std::uint32_t(b.g) << 8) | b.b);
      for (const int d : {a.r - b.r, a.g - b.g, a.b - b.b}) {
        worst = std::max(worst, std::abs(d));
        total += std::abs(d);
      }
    }
  }
  // As good as the ideal cut of the 64 x 64 grid into 256 boxes of 4 x 4 colours (4 levels apart
  // on red and green): at most 6 levels off, 4 on average on red and green, 0 on blue.
  EXPECT_LE(worst, 6);
  EXPECT_LE(total / (64 * 64 * 3), 8.0 / 3 + 1e-9);
  EXPECT_EQ(colours.size(), 256u);
}

TEST(Gif, FlatAreasStayExactInAFrameOfManyColours) {
  TempDir dir("gif_flat");
  // Three flat blocks beside a strip of 1,000 colours (a colour bar, antialiased text).
  Image f(100, 60);
  const Rgb blocks[3] = {{68, 1, 84}, {33, 145, 140}, {253, 231, 37}};
  for (int y = 0; y < 60; ++y) {
    for (int x = 0; x < 100; ++x) {
      if (x < 90) {
        f.set(x, y, blocks[x / 30]);
      } else {
        const int i = y * 10 + (x - 90);
        f.set(x, y, {std::uint8_t(i % 256), std::uint8_t(i / 4), std::uint8_t(255 - i % 200)});
      }
    }
  }
  const auto path = dir / "flat.gif";
  const GifInfo info = write_gif(std::span<const Image>(&f, 1), path);
  EXPECT_EQ(info.quantized_frames, 1u);
  const Image back = decode_frame(path, 0);
  for (int y = 0; y < 60; ++y) {
    for (int x = 0; x < 90; ++x) ASSERT_EQ(back.at(x, y), blocks[x / 30]) << x << ", " << y;
  }
}

TEST(Gif, TranslucentPixelsAreDrawnOverWhite) {
  TempDir dir("gif_alpha");
  Image f(4, 1);
  f.set(0, 0, {200, 0, 0}, 0);
  f.set(1, 0, {200, 0, 0}, 128);
  f.set(2, 0, {200, 0, 0}, 255);
  f.set(3, 0, {0, 0, 0}, 0);
  const auto path = dir / "alpha.gif";
  write_gif(std::span<const Image>(&f, 1), path);
  const Image back = decode_frame(path, 0);
  EXPECT_EQ(back.at(0, 0), (Rgb{255, 255, 255}));
  EXPECT_EQ(back.at(1, 0), (Rgb{227, 127, 127}));  // (200 * 128 + 255 * 127) / 255, rounded
  EXPECT_EQ(back.at(2, 0), (Rgb{200, 0, 0}));
  EXPECT_EQ(back.at(3, 0), (Rgb{255, 255, 255}));
}

// The message of the Error that `write` throws ("" when it throws none).
template <typename Write>
std::string error_of(Write write) {
  try {
    write();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Gif, BadInputIsAnErrorNamingTheFile) {
  TempDir dir("gif_errors");
  const auto path = dir / "bad.gif";
  EXPECT_EQ(error_of([&] { write_gif(std::vector<Image>{}, path); }), path.string() + ": no frames to write");
  std::vector<Image> frames = plot_like_frames(2);
  frames.emplace_back(61, 40);
  EXPECT_EQ(
      error_of([&] { write_gif(frames, path); }),
      path.string() +
          ": frame 2 is 61 x 40 pixels, frame 0 is 60 x 40: every frame of an animation has the same size");
  EXPECT_FALSE(std::filesystem::exists(path));
  const std::string unwritable = error_of([&] { write_gif(plot_like_frames(1), "/nonexistent-dir/a.gif"); });
  EXPECT_EQ(unwritable.rfind("/nonexistent-dir/a.gif: cannot open for writing", 0), 0u) << unwritable;

  // A source that draws a different frame the second time: an error, and no file left behind.
  int calls = 0;
  const FrameSource fickle{.count = 1, .frame = [&](std::size_t) {
                             Image f(4, 4);
                             f.fill({std::uint8_t(calls++), 0, 0});
                             return f;
                           }};
  const std::string changed = error_of([&] { write_gif(fickle, path); });
  EXPECT_NE(changed.find("frame 0 has a colour it did not have"), std::string::npos) << changed;
  EXPECT_FALSE(std::filesystem::exists(path));
}

// 12 frames of an odd size (161 x 121) in four flat quadrants; frame k's top left is (20k, 0, 0).
std::vector<Image> quadrant_frames() {
  std::vector<Image> frames;
  for (int k = 0; k < 12; ++k) {
    Image f(161, 121);
    for (int y = 0; y < 121; ++y) {
      for (int x = 0; x < 161; ++x) {
        const bool left = x < 80, top = y < 60;
        const Rgb c = top && left ? Rgb{std::uint8_t(20 * k), 0, 0}
                      : top       ? Rgb{0, 114, 178}
                      : left      ? Rgb{240, 228, 66}
                                  : Rgb{255, 255, 255};
        f.set(x, y, c);
      }
    }
    frames.push_back(std::move(f));
  }
  return frames;
}

void expect_near(Rgb got, Rgb want, int tolerance, const std::string& where) {
  EXPECT_LE(std::abs(got.r - want.r), tolerance) << where << ": red " << int(got.r) << " vs " << int(want.r);
  EXPECT_LE(std::abs(got.g - want.g), tolerance)
      << where << ": green " << int(got.g) << " vs " << int(want.g);
  EXPECT_LE(std::abs(got.b - want.b), tolerance) << where << ": blue " << int(got.b) << " vs " << int(want.b);
}

struct VideoCase {
  std::string file;
  std::string encoder;  // VideoOptions::encoder
  std::string used;     // VideoInfo::codec
  std::string codec;    // as ffprobe names it
  int tolerance;
};

// gtest prints a parameter through a function of this name.
void PrintTo(const VideoCase& c, std::ostream* os) {  // NOLINT(readability-identifier-naming)
  *os << c.file;
}

class Video : public ::testing::TestWithParam<VideoCase> {};

TEST_P(Video, DecodesToTheFramesWithinCodecTolerance) {
  const VideoCase& c = GetParam();
  TempDir dir("video_" + c.codec);
  const std::vector<Image> frames = quadrant_frames();
  const auto path = dir / c.file;
  std::size_t progress_calls = 0;
  const VideoInfo info = write_video(
      frames, path, 10.0, {.encoder = c.encoder, .progress = [&](std::size_t done, std::size_t total) {
                             EXPECT_EQ(done, ++progress_calls);
                             EXPECT_EQ(total, 12u);
                           }});
  EXPECT_EQ(progress_calls, 12u);
  EXPECT_EQ(info.codec, c.used);
  EXPECT_EQ(info.frames, 12u);
  EXPECT_EQ(info.width, 162);  // padded to even
  EXPECT_EQ(info.height, 122);
  EXPECT_EQ(probe_stream(path, "codec_name"), c.codec);
  EXPECT_EQ(probe_stream(path, "width"), "162");
  EXPECT_EQ(probe_stream(path, "height"), "122");
  EXPECT_EQ(probe_stream(path, "r_frame_rate"), "10/1");
  EXPECT_EQ(probe_frame_count(path), 12);
  for (const int k : {0, 7, 11}) {
    const Image back = decode_frame(path, k);
    ASSERT_EQ(back.width(), 162);
    const std::string at = c.file + " frame " + std::to_string(k);
    expect_near(back.at(40, 30), {std::uint8_t(20 * k), 0, 0}, c.tolerance, at + " top left");
    expect_near(back.at(120, 30), {0, 114, 178}, c.tolerance, at + " top right");
    expect_near(back.at(40, 90), {240, 228, 66}, c.tolerance, at + " bottom left");
    expect_near(back.at(120, 90), {255, 255, 255}, c.tolerance, at + " bottom right");
    // The padding column and row repeat the edge.
    expect_near(back.at(161, 90), {255, 255, 255}, c.tolerance, at + " padding");
    expect_near(back.at(40, 121), {240, 228, 66}, c.tolerance, at + " padding");
  }
}

INSTANTIATE_TEST_SUITE_P(Encoders, Video,
                         ::testing::Values(VideoCase{"flow.webm", "", "libvpx-vp9", "vp9", 4},
                                           VideoCase{"flow_vp8.webm", "libvpx", "libvpx", "vp8", 6},
                                           VideoCase{"flow.mp4", "", "libx264", "h264", 4},
                                           VideoCase{"flow_mpeg4.MP4", "mpeg4", "mpeg4", "mpeg4", 8}),
                         [](const auto& param) { return param.param.codec; });

TEST(VideoErrors, BadInputIsAnErrorNamingTheFile) {
  TempDir dir("video_errors");
  const std::vector<Image> frames = quadrant_frames();
  const auto avi = dir / "flow.avi";
  EXPECT_EQ(error_of([&] { write_video(frames, avi); }),
            avi.string() + ": unknown video extension '.avi'; expected .webm (VP9) or .mp4 (H.264)");
  const auto webm = dir / "flow.webm";
  EXPECT_EQ(error_of([&] { write_video(std::vector<Image>{}, webm); }),
            webm.string() + ": no frames to write");
  EXPECT_EQ(error_of([&] { write_video(frames, webm, 0.0); }),
            webm.string() + ": frame rate 0.000000 is outside 0 < fps <= 1000");
  EXPECT_EQ(error_of([&] { write_video(frames, webm, 10.0, {.encoder = "libx264"}); }),
            webm.string() + ": encoder 'libx264' does not write .webm; expected one of libvpx-vp9, libvpx");
  const std::string unwritable = error_of([&] { write_video(frames, "/nonexistent-dir/a.mp4"); });
  EXPECT_EQ(unwritable.rfind("/nonexistent-dir/a.mp4: cannot open for writing", 0), 0u) << unwritable;
  // A frame of another size part way: an error, and the partly written file is gone.
  std::vector<Image> mixed = frames;
  mixed[5] = Image(160, 121);
  EXPECT_EQ(error_of([&] { write_video(mixed, webm); }),
            webm.string() +
                ": frame 5 is 160 x 121 pixels, frame 0 is 161 x 121: every frame of an animation has the "
                "same size");
  EXPECT_FALSE(std::filesystem::exists(webm));
  EXPECT_TRUE(is_video_path("a/B.WebM"));
  EXPECT_FALSE(is_video_path("a.gif"));
}

}  // namespace
}  // namespace tfdebug::viz
