// Animated GIF through giflib: palettes chosen here (color_quantizer.hpp), LZW and the file
// format by giflib's encoder.
#include <fcntl.h>
#include <gif_lib.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "animation_frames.hpp"
#include "color_quantizer.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/viz/animation.hpp"

namespace tfdebug::viz {
namespace {

using detail::ExactPalette;
using detail::PackedRgb;

// Note [GIF palettes]: a GIF pixel is an index into a palette of at most 256 colours, either the
// file's global one or the frame's own. A first pass collects the colours of every frame: when
// they fit in 256 together, one global palette holds them and every frame is exact. Otherwise
// each frame gets a local palette for the rectangle it stores (Note [Changed rectangles]): exact
// when that rectangle has at most 256 colours, else its flat areas' colours and median cut's for the rest
// (Note [Flat areas first]). The first pass stops at the 257th colour, so an animation with many colours pays
// for it on few frames.
//
// Note [Changed rectangles]: every frame after the first stores only the bounding box of the
// pixels that differ from the previous frame, with disposal "do not dispose" so that the rest of
// the picture stays; inside the box, a pixel equal to the one before is the transparent index
// when the palette has a spare entry, which lets LZW code long runs. A decoder (a browser,
// ffmpeg) composes the same full frames. An animation of a plot where only the data moves is
// mostly a title and the data area per frame.

struct Rect {
  int left = 0, top = 0, width = 0, height = 0;
};

// The bounding box of the pixels that differ; 1 x 1 at the origin when none does (a GIF image
// has at least one pixel, and the frame still counts for its delay).
Rect changed_rect(const std::vector<PackedRgb>& before, const std::vector<PackedRgb>& after, int width,
                  int height) {
  int x0 = width, y0 = height, x1 = -1, y1 = -1;
  for (int y = 0; y < height; ++y) {
    const PackedRgb* a = before.data() + std::size_t(y) * std::size_t(width);
    const PackedRgb* b = after.data() + std::size_t(y) * std::size_t(width);
    int first = 0;
    while (first < width && a[first] == b[first]) ++first;
    if (first == width) continue;
    int last = width - 1;
    while (a[last] == b[last]) --last;
    x0 = std::min(x0, first);
    x1 = std::max(x1, last);
    y0 = std::min(y0, y);
    y1 = y;
  }
  if (x1 < 0) return {0, 0, 1, 1};
  return {x0, y0, x1 - x0 + 1, y1 - y0 + 1};
}

std::vector<PackedRgb> crop(const std::vector<PackedRgb>& pixels, int width, const Rect& r) {
  std::vector<PackedRgb> out;
  out.reserve(std::size_t(r.width) * std::size_t(r.height));
  for (int y = r.top; y < r.top + r.height; ++y) {
    const PackedRgb* row = pixels.data() + std::size_t(y) * std::size_t(width) + std::size_t(r.left);
    out.insert(out.end(), row, row + r.width);
  }
  return out;
}

struct MapDeleter {
  void operator()(ColorMapObject* map) const noexcept { GifFreeMapObject(map); }
};
using ColorMap = std::unique_ptr<ColorMapObject, MapDeleter>;

// A giflib colour map of the colours, padded to a power of two (GIF's rule) and, when asked,
// with one more entry for transparency.
ColorMap make_map(const std::vector<PackedRgb>& colors, bool with_spare) {
  const std::size_t spare = with_spare && colors.size() < 256 ? 1 : 0;
  const std::size_t wanted = std::max<std::size_t>(2, colors.size() + spare);
  const std::size_t size = std::bit_ceil(wanted);
  TFDEBUG_ASSERT(size <= 256, "GIF palette past 256 colours");
  std::vector<GifColorType> entries(size, GifColorType{0, 0, 0});
  for (std::size_t i = 0; i < colors.size(); ++i) {
    const Rgb c = detail::unpack(colors[i]);
    entries[i] = {c.r, c.g, c.b};
  }
  ColorMap map(GifMakeMapObject(int(size), entries.data()));
  if (!map) throw Error("GIF: out of memory for a colour map");
  return map;
}

class GifFile {
 public:
  GifFile(const std::filesystem::path& path) : name_(path.string()) {
    // Opened here rather than by EGifOpenFileName, which creates files readable by their owner
    // only: a GIF is made to be shared, so it gets the usual 0666 less the umask.
    const int fd = ::open(name_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) throw Error(name_ + ": cannot open for writing: " + std::strerror(errno));
    int error = 0;
    gif_ = EGifOpenFileHandle(fd, &error);
    if (gif_ == nullptr) {
      ::close(fd);
      throw Error(name_ + ": cannot open for writing: " + describe(error));
    }
    EGifSetGifVersion(gif_, true);  // graphics control and application extensions are GIF89a's
  }
  ~GifFile() {
    if (gif_ != nullptr) EGifCloseFile(gif_, nullptr);
  }
  GifFile(const GifFile&) = delete;
  GifFile& operator=(const GifFile&) = delete;

  GifFileType* get() const noexcept { return gif_; }
  // Throws naming the file when a giflib call failed.
  void check(int status, const char* what) const {
    if (status != GIF_OK)
      throw Error(name_ + ": cannot write the GIF's " + what + ": " + describe(gif_->Error));
  }
  void close() {
    int error = 0;
    const int status = EGifCloseFile(gif_, &error);
    gif_ = nullptr;
    if (status != GIF_OK) throw Error(name_ + ": cannot finish writing the GIF: " + describe(error));
  }

 private:
  static std::string describe(int error) {
    const char* text = GifErrorString(error);
    return text != nullptr ? text : "giflib error " + std::to_string(error);
  }
  std::string name_;
  GifFileType* gif_ = nullptr;
};

// Forever: the application extension every browser reads as the loop count.
void write_loop_extension(const GifFile& gif) {
  static const char kApplication[] = "NETSCAPE2.0";
  const unsigned char loop[3] = {1, 0, 0};  // sub-block 1: loop count 0, i.e. forever
  gif.check(EGifPutExtensionLeader(gif.get(), APPLICATION_EXT_FUNC_CODE), "loop extension");
  gif.check(EGifPutExtensionBlock(gif.get(), 11, kApplication), "loop extension");
  gif.check(EGifPutExtensionBlock(gif.get(), 3, loop), "loop extension");
  gif.check(EGifPutExtensionTrailer(gif.get()), "loop extension");
}

int delay_centiseconds(std::chrono::milliseconds delay) {
  const long long cs = (delay.count() + 5) / 10;
  return int(std::clamp<long long>(cs, 2, 65535));
}

}  // namespace

GifInfo write_gif(std::span<const Image> frames, const std::filesystem::path& path,
                  std::chrono::milliseconds delay, const AnimationProgress& progress) {
  return write_gif(detail::source_of(frames), path, delay, progress);
}

GifInfo write_gif(const FrameSource& frames, const std::filesystem::path& path,
                  std::chrono::milliseconds delay, const AnimationProgress& progress) {
  if (frames.count == 0 || !frames.frame) throw Error(path.string() + ": no frames to write");
  GifInfo info;
  std::vector<PackedRgb> current, previous;

  // Pass 1 (Note [GIF palettes]): do all frames' colours fit in one palette?
  ExactPalette global;
  bool fits = true;
  for (std::size_t i = 0; i < frames.count && fits; ++i) {
    const Image frame = frames.frame(i);
    if (i == 0) {
      info.width = frame.width();
      info.height = frame.height();
    }
    detail::check_frame(path, i, frame, info.width, info.height);
    detail::pack_over_white(frame, current);
    fits = global.add_all(current);
  }
  info.global_palette = fits;

  GifFile gif(path);
  detail::RemoveOnFailure remove(path);
  {
    const ColorMap map = fits ? make_map(global.colors(), frames.count > 1) : nullptr;
    gif.check(EGifPutScreenDesc(gif.get(), info.width, info.height, 8, 0, map.get()), "screen descriptor");
  }
  write_loop_extension(gif);

  const int delay_cs = delay_centiseconds(delay);
  std::vector<GifPixelType> row;
  for (std::size_t i = 0; i < frames.count; ++i) {
    const Image frame = frames.frame(i);
    detail::check_frame(path, i, frame, info.width, info.height);
    detail::pack_over_white(frame, current);
    const Rect rect = i == 0 ? Rect{0, 0, info.width, info.height}
                             : changed_rect(previous, current, info.width, info.height);
    const std::vector<PackedRgb> pixels = crop(current, info.width, rect);
    const std::vector<PackedRgb> before =
        i == 0 ? std::vector<PackedRgb>() : crop(previous, info.width, rect);

    // The rectangle's palette and indices.
    std::vector<std::uint8_t> indices(pixels.size());
    ColorMap local;
    std::size_t palette_size = 0;
    if (fits) {
      for (std::size_t p = 0; p < pixels.size(); ++p) {
        const std::optional<std::uint8_t> index = global.find(pixels[p]);
        if (!index) {
          throw Error(path.string() + ": frame " + std::to_string(i) +
                      " has a colour it did not have when asked for the first time (a FrameSource gives the "
                      "same image every time)");
        }
        indices[p] = *index;
      }
      palette_size = global.size();
    } else {
      ExactPalette exact;
      if (exact.add_all(pixels)) {
        for (std::size_t p = 0; p < pixels.size(); ++p) indices[p] = exact.index_of(pixels[p]);
        palette_size = exact.size();
        local = make_map(exact.colors(), i > 0);
      } else {
        detail::QuantizedRegion q = detail::median_cut(pixels, i > 0 ? 255 : 256);
        indices = std::move(q.indices);
        palette_size = q.palette.size();
        local = make_map(q.palette, i > 0);
        ++info.quantized_frames;
      }
    }
    // Unchanged pixels inside the rectangle: transparent, the previous frame shows through.
    int transparent = NO_TRANSPARENT_COLOR;
    if (i > 0 && palette_size < 256) {
      transparent = int(palette_size);
      for (std::size_t p = 0; p < pixels.size(); ++p) {
        if (pixels[p] == before[p]) indices[p] = std::uint8_t(transparent);
      }
    }

    GraphicsControlBlock control{};
    control.DisposalMode = DISPOSE_DO_NOT;
    control.UserInputFlag = false;
    control.DelayTime = delay_cs;
    control.TransparentColor = transparent;
    GifByteType extension[4];
    const std::size_t length = EGifGCBToExtension(&control, extension);
    gif.check(EGifPutExtension(gif.get(), GRAPHICS_EXT_FUNC_CODE, int(length), extension), "frame delay");
    gif.check(EGifPutImageDesc(gif.get(), rect.left, rect.top, rect.width, rect.height, false, local.get()),
              "image descriptor");
    row.resize(std::size_t(rect.width));
    for (int y = 0; y < rect.height; ++y) {
      std::copy_n(indices.begin() + std::ptrdiff_t(y) * rect.width, rect.width, row.begin());
      gif.check(EGifPutLine(gif.get(), row.data(), rect.width), "pixels");
    }
    std::swap(previous, current);
    ++info.frames;
    if (progress) progress(info.frames, frames.count);
  }
  gif.close();
  remove.release();
  return info;
}

}  // namespace tfdebug::viz
