// What the GIF and video writers share: frames as packed opaque colours, the checks every frame
// passes, a FrameSource over frames in memory, and a written file removed again on failure.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "tfdebug/viz/animation.hpp"

namespace tfdebug::viz::detail {

// 0xRRGGBB: a pixel drawn over white (Note [Over white] in animation_frames.cpp).
using PackedRgb = std::uint32_t;

constexpr PackedRgb pack(std::uint8_t r, std::uint8_t g, std::uint8_t b) noexcept {
  return (PackedRgb(r) << 16) | (PackedRgb(g) << 8) | PackedRgb(b);
}
constexpr Rgb unpack(PackedRgb c) noexcept {
  return {std::uint8_t(c >> 16), std::uint8_t(c >> 8), std::uint8_t(c)};
}

// Every pixel of `image`, row by row, drawn over white.
void pack_over_white(const Image& image, std::vector<PackedRgb>& out);

// Frame `index` of an animation in `path`: throws tfdebug::Error naming the file when it is empty
// or its size differs from frame 0's (width, height).
void check_frame(const std::filesystem::path& path, std::size_t index, const Image& frame, int width,
                 int height);

// Frames in memory as a source (each frame copied out when asked for).
FrameSource source_of(std::span<const Image> frames);

// Removes `path` when destroyed unless released: a writer that throws leaves no partial file.
class RemoveOnFailure {
 public:
  explicit RemoveOnFailure(std::filesystem::path path) : path_(std::move(path)) {}
  ~RemoveOnFailure();
  RemoveOnFailure(const RemoveOnFailure&) = delete;
  RemoveOnFailure& operator=(const RemoveOnFailure&) = delete;
  void release() noexcept { armed_ = false; }

 private:
  std::filesystem::path path_;
  bool armed_ = true;
};

}  // namespace tfdebug::viz::detail
