#include "animation_frames.hpp"

#include <system_error>

#include "tfdebug/core/error.hpp"

namespace tfdebug::viz::detail {

// Note [Over white]: a GIF pixel is opaque or fully transparent, and a 4:2:0 video has no alpha
// at all, so a pixel that is not opaque is drawn over a white page first, as a browser would show
// the PNG of the same frame. Plots render opaque, so for them this changes nothing.
void pack_over_white(const Image& image, std::vector<PackedRgb>& out) {
  const std::size_t n = static_cast<std::size_t>(image.width()) * static_cast<std::size_t>(image.height());
  out.resize(n);
  const std::uint8_t* p = image.data();
  for (std::size_t i = 0; i < n; ++i, p += 4) {
    const unsigned a = p[3];
    if (a == 255) {
      out[i] = pack(p[0], p[1], p[2]);
      continue;
    }
    const auto over = [a](unsigned c) { return std::uint8_t((c * a + 255 * (255 - a) + 127) / 255); };
    out[i] = pack(over(p[0]), over(p[1]), over(p[2]));
  }
}

void check_frame(const std::filesystem::path& path, std::size_t index, const Image& frame, int width,
                 int height) {
  if (frame.empty()) {
    throw Error(path.string() + ": frame " + std::to_string(index) + " is empty (0 x 0 pixels)");
  }
  if (frame.width() != width || frame.height() != height) {
    throw Error(path.string() + ": frame " + std::to_string(index) + " is " + std::to_string(frame.width()) +
                " x " + std::to_string(frame.height()) + " pixels, frame 0 is " + std::to_string(width) +
                " x " + std::to_string(height) + ": every frame of an animation has the same size");
  }
}

FrameSource source_of(std::span<const Image> frames) {
  return {.count = frames.size(), .frame = [frames](std::size_t i) { return frames[i]; }};
}

RemoveOnFailure::~RemoveOnFailure() {
  if (!armed_) return;
  std::error_code ec;
  std::filesystem::remove(path_, ec);  // best effort: the error being thrown is the one to report
}

}  // namespace tfdebug::viz::detail
