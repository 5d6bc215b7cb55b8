// Animations of frames: an animated GIF (giflib) or a video (WebM or MP4, through libavformat and
// libavcodec), from `Image`s that all have the same size.
//
//   std::vector<tfdebug::viz::Image> frames = ...;
//   tfdebug::viz::write_gif(frames, "flow.gif", std::chrono::milliseconds(100));  // loops forever
//   tfdebug::viz::write_video(frames, "flow.webm", 10.0);                         // or "flow.mp4"
//
//   // A long animation need not sit in memory: frames made on demand, one at a time.
//   tfdebug::viz::FrameSource source{.count = 500, .frame = [&](std::size_t i) { return draw(i); }};
//   tfdebug::viz::write_video(source, "flow.mp4", 25.0);
//
// Pixels that are not opaque are drawn over white first: neither a GIF with a palette nor a
// 4:2:0 video keeps partial transparency.
//
// GIF colours (Note [GIF palettes] in src/viz/gif.cpp): when all frames together have at most 256
// colours the file has one global palette and every pixel is exact; otherwise each frame gets its
// own palette, exact when that frame's changed part has at most 256 colours, else exact for the
// colours of flat areas (background, cells, bars: up to 128 of them) and chosen by median cut for
// the rest, the antialiased edges of text and lines. No dithering: plots are flat areas, not
// photographs. Each frame stores only the rectangle that changed since the previous one.
//
// Video: .webm is VP9 (VP8 when libavcodec has no VP9 encoder), .mp4 is H.264 through libx264
// (MPEG-4 part 2 without it; VideoOptions::encoder chooses); 4:2:0 chroma, BT.709 colours, an odd width or
// height padded by one row or column repeating the edge. Colours come back within the codec's error (a few
// levels per channel in flat areas, more at sharp edges).
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <span>
#include <string>

#include "tfdebug/viz/image.hpp"

namespace tfdebug::viz {

// `count` frames; `frame(i)` makes frame i (0 <= i < count). write_gif calls it twice per frame
// (once to choose palettes, once to encode), so it must give the same image for the same i.
struct FrameSource {
  std::size_t count = 0;
  std::function<Image(std::size_t)> frame;
};

// Called after each frame is written, with the frames done and the total: a progress line.
using AnimationProgress = std::function<void(std::size_t done, std::size_t total)>;

struct GifInfo {
  std::size_t frames = 0;
  int width = 0, height = 0;
  bool global_palette = false;       // one palette for all frames: every colour exact
  std::size_t quantized_frames = 0;  // frames past 256 colours: flat areas exact, edges near
};

// Writes an animated GIF that loops forever (the NETSCAPE2.0 application extension). `delay` is
// each frame's time on screen, in GIF's unit of 10 ms, at least 20 ms (browsers show shorter
// delays as 100 ms). Throws tfdebug::Error naming the file for no frames, frames of different
// sizes, or a file that cannot be written (a partly written file is removed).
GifInfo write_gif(std::span<const Image> frames, const std::filesystem::path& path,
                  std::chrono::milliseconds delay = std::chrono::milliseconds(100),
                  const AnimationProgress& progress = {});
GifInfo write_gif(const FrameSource& frames, const std::filesystem::path& path,
                  std::chrono::milliseconds delay = std::chrono::milliseconds(100),
                  const AnimationProgress& progress = {});

struct VideoInfo {
  std::size_t frames = 0;
  int width = 0, height = 0;  // as encoded: the frames' size rounded up to even
  std::string codec;          // the encoder used: "libvpx-vp9", "libvpx", "libx264" or "mpeg4"
};

// Whether write_video knows the extension: .webm or .mp4, any case.
bool is_video_path(const std::filesystem::path& path);

struct VideoOptions {
  // The libavcodec encoder: "libvpx-vp9" or "libvpx" (VP8) for .webm, "libx264" or "mpeg4" for
  // .mp4; empty: the first of these that this libavcodec has.
  std::string encoder = {};
  AnimationProgress progress = {};
};

// Writes the frames as a video at `fps` frames a second (0 < fps <= 1000). Throws tfdebug::Error
// naming the file for an extension other than .webm or .mp4, no frames, frames of different
// sizes, an encoder that is missing or does not fit the format, or a file that cannot be written
// (a partly written file is removed).
VideoInfo write_video(std::span<const Image> frames, const std::filesystem::path& path, double fps = 10.0,
                      const VideoOptions& options = {});
VideoInfo write_video(const FrameSource& frames, const std::filesystem::path& path, double fps = 10.0,
                      const VideoOptions& options = {});

}  // namespace tfdebug::viz
