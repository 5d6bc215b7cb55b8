// Video through libavformat (the WebM or MP4 container), libavcodec (the encoder) and libswscale
// (RGB to 4:2:0 YUV).
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/imgutils.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>
}

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "animation_frames.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/viz/animation.hpp"

namespace tfdebug::viz {
namespace {

enum class Container { webm, mp4 };

std::optional<Container> container_for(const std::filesystem::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (ext == ".webm") return Container::webm;
  if (ext == ".mp4") return Container::mp4;
  return std::nullopt;
}

std::string av_error_text(int error) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(error, text, sizeof text);
  return text;
}

// Note [Encoders]: Debian's libavcodec has libvpx (VP9 and VP8) and libx264; a build without
// them still has its own MPEG-4 part 2 encoder, so .mp4 always works and .webm needs libvpx.
// The settings aim at plots: flat colours and thin lines, where quality matters more than size.
// x264 at CRF 18 is visually lossless. VP9 in constant-quality mode (bit rate 0) at CRF 24, with
// libvpx's realtime mode at speed 6: on 151 frames of a gradient-flow heatmap (800 x 500) it
// encodes 7x faster than "good" at speed 5 (2.3 s against 16.5 s) for 0.3 dB less PSNR (51.2
// against 51.4 dB) and a file 10% larger.
struct EncoderChoice {
  const AVCodec* codec = nullptr;
  const char* muxer = nullptr;
};

std::span<const char* const> encoders_for(Container container) {
  static const char* const kWebm[] = {"libvpx-vp9", "libvpx"};
  static const char* const kMp4[] = {"libx264", "mpeg4"};
  return container == Container::webm ? std::span<const char* const>(kWebm)
                                      : std::span<const char* const>(kMp4);
}

std::string list_of(std::span<const char* const> names) {
  std::string out;
  for (const char* n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

EncoderChoice choose_encoder(Container container, const std::string& asked, const std::string& name) {
  const std::span<const char* const> known = encoders_for(container);
  EncoderChoice choice;
  choice.muxer = container == Container::webm ? "webm" : "mp4";
  if (!asked.empty()) {
    if (std::find(known.begin(), known.end(), asked) == known.end()) {
      throw Error(name + ": encoder '" + asked + "' does not write " +
                  (container == Container::webm ? ".webm" : ".mp4") + "; expected one of " + list_of(known));
    }
    choice.codec = avcodec_find_encoder_by_name(asked.c_str());
    if (choice.codec == nullptr) throw Error(name + ": this libavcodec has no encoder '" + asked + "'");
    return choice;
  }
  for (const char* encoder : known) {
    choice.codec = avcodec_find_encoder_by_name(encoder);
    if (choice.codec != nullptr) return choice;
  }
  throw Error(name + ": this libavcodec has none of the encoders for " +
              (container == Container::webm ? ".webm" : ".mp4") + " (" + list_of(known) + ")");
}

void set_encoder_options(AVCodecContext* context, const std::string& encoder) {
  void* priv = context->priv_data;
  if (encoder == "libx264") {
    av_opt_set(priv, "preset", "fast", 0);
    av_opt_set(priv, "crf", "18", 0);
  } else if (encoder == "libvpx-vp9" || encoder == "libvpx") {
    context->bit_rate = 0;
    av_opt_set(priv, "crf", encoder == "libvpx" ? "10" : "24", 0);
    av_opt_set(priv, "deadline", "realtime", 0);
    av_opt_set(priv, "cpu-used", "6", 0);
    if (encoder == "libvpx-vp9") av_opt_set(priv, "row-mt", "1", 0);
    // VP8's CRF is constrained quality: it needs a bit rate ceiling (here one plots never reach)
    // and drifts toward coarse quantisers on flat frames without a cap on them.
    if (encoder == "libvpx") {
      context->bit_rate = 20'000'000;
      context->qmax = 16;
    }
  } else {
    // MPEG-4 part 2 has no constant-quality mode of its own: a fixed quantiser, fine enough.
    context->flags |= AV_CODEC_FLAG_QSCALE;
    context->global_quality = FF_QP2LAMBDA * 3;
  }
}

// libav* objects, freed however the writer ends.
struct FormatDeleter {
  void operator()(AVFormatContext* f) const noexcept {
    if (f->pb != nullptr) avio_closep(&f->pb);
    avformat_free_context(f);
  }
};
struct CodecDeleter {
  void operator()(AVCodecContext* c) const noexcept { avcodec_free_context(&c); }
};
struct FrameDeleter {
  void operator()(AVFrame* f) const noexcept { av_frame_free(&f); }
};
struct PacketDeleter {
  void operator()(AVPacket* p) const noexcept { av_packet_free(&p); }
};
struct ScaleDeleter {
  void operator()(SwsContext* s) const noexcept { sws_freeContext(s); }
};

// Note [Quiet libav]: libav* report through av_log, at "info" by default, and libx264 prints its
// statistics there: lines a command-line user did not ask for. Errors still show; a program that
// chose a log level itself keeps it.
void quiet_libav_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (av_log_get_level() == AV_LOG_INFO) av_log_set_level(AV_LOG_ERROR);
  });
}

class VideoEncoder {
 public:
  VideoEncoder(const std::filesystem::path& path, Container container, const std::string& encoder, int width,
               int height, double fps)
      : name_(path.string()) {
    const EncoderChoice choice = choose_encoder(container, encoder, name_);
    info_.codec = choice.codec->name;
    info_.width = width + (width % 2);
    info_.height = height + (height % 2);
    AVFormatContext* format = nullptr;
    int status = avformat_alloc_output_context2(&format, nullptr, choice.muxer, name_.c_str());
    if (status < 0 || format == nullptr) fail("cannot start the container", status);
    format_.reset(format);
    stream_ = avformat_new_stream(format, nullptr);
    context_.reset(avcodec_alloc_context3(choice.codec));
    if (stream_ == nullptr || !context_) fail("out of memory", AVERROR(ENOMEM));
    const AVRational rate = av_d2q(fps, 100000);
    AVCodecContext* c = context_.get();
    c->width = info_.width;
    c->height = info_.height;
    c->time_base = av_inv_q(rate);
    c->framerate = rate;
    c->pix_fmt = AV_PIX_FMT_YUV420P;
    c->gop_size = std::max(1, int(std::lround(fps * 2)));  // a key frame every 2 s, for seeking
    // Note [Colour matrix]: BT.709, limited range, written into the stream so that decoders
    // convert back alike. VP8's bitstream has no field for it and every decoder reads VP8 as
    // BT.601, so VP8 gets BT.601.
    const bool bt601 = info_.codec == "libvpx";
    c->color_range = AVCOL_RANGE_MPEG;
    c->colorspace = bt601 ? AVCOL_SPC_SMPTE170M : AVCOL_SPC_BT709;
    c->color_primaries = bt601 ? AVCOL_PRI_SMPTE170M : AVCOL_PRI_BT709;
    c->color_trc = bt601 ? AVCOL_TRC_SMPTE170M : AVCOL_TRC_BT709;
    c->thread_count = 0;  // as many as libavcodec sees fit
    if ((format->oformat->flags & AVFMT_GLOBALHEADER) != 0) c->flags |= AV_CODEC_FLAG_GLOBAL_HEADER;
    set_encoder_options(c, info_.codec);
    status = avcodec_open2(c, choice.codec, nullptr);
    if (status < 0) fail(std::string("cannot open the ") + choice.codec->name + " encoder", status);
    status = avcodec_parameters_from_context(stream_->codecpar, c);
    if (status < 0) fail("cannot describe the stream", status);
    stream_->time_base = c->time_base;
    stream_->avg_frame_rate = rate;

    status = avio_open(&format->pb, name_.c_str(), AVIO_FLAG_WRITE);
    if (status < 0) throw Error(name_ + ": cannot open for writing: " + av_error_text(status));
    remove_.emplace(path);
    AVDictionary* options = nullptr;
    // MP4: the index first, so that a browser plays while it downloads.
    if (container == Container::mp4) av_dict_set(&options, "movflags", "+faststart", 0);
    status = avformat_write_header(format, &options);
    av_dict_free(&options);
    if (status < 0) fail("cannot write the header", status);

    frame_.reset(av_frame_alloc());
    packet_.reset(av_packet_alloc());
    if (!frame_ || !packet_) fail("out of memory", AVERROR(ENOMEM));
    frame_->format = AV_PIX_FMT_YUV420P;
    frame_->width = info_.width;
    frame_->height = info_.height;
    frame_->color_range = c->color_range;
    frame_->colorspace = c->colorspace;
    status = av_frame_get_buffer(frame_.get(), 0);
    if (status < 0) fail("out of memory for a frame", status);
    scale_.reset(sws_getContext(info_.width, info_.height, AV_PIX_FMT_RGB24, info_.width, info_.height,
                                AV_PIX_FMT_YUV420P, SWS_BICUBIC | SWS_ACCURATE_RND | SWS_FULL_CHR_H_INT,
                                nullptr, nullptr, nullptr));
    if (!scale_) fail("cannot convert RGB to YUV", AVERROR(EINVAL));
    const int* matrix = sws_getCoefficients(bt601 ? SWS_CS_ITU601 : SWS_CS_ITU709);
    // Source full range RGB (1), destination limited-range YUV (0); brightness, contrast and
    // saturation neutral (16.16 fixed point).
    sws_setColorspaceDetails(scale_.get(), matrix, 1, matrix, 0, 0, 1 << 16, 1 << 16);
  }

  const VideoInfo& info() const noexcept { return info_; }

  // One frame, already checked to be of the source size (width, height before padding).
  void add(const Image& image) {
    // Note [Even sizes]: 4:2:0 needs an even width and height; an odd one is padded by repeating
    // the last column or row, so that the edge's chroma is the edge's colour, not a blend.
    rgb_.resize(std::size_t(info_.width) * std::size_t(info_.height) * 3);
    detail::pack_over_white(image, packed_);
    for (int y = 0; y < info_.height; ++y) {
      const int sy = std::min(y, image.height() - 1);
      std::uint8_t* out = rgb_.data() + std::size_t(y) * std::size_t(info_.width) * 3;
      for (int x = 0; x < info_.width; ++x) {
        const int sx = std::min(x, image.width() - 1);
        const Rgb c = detail::unpack(packed_[std::size_t(sy) * std::size_t(image.width()) + std::size_t(sx)]);
        *out++ = c.r;
        *out++ = c.g;
        *out++ = c.b;
      }
    }
    int status = av_frame_make_writable(frame_.get());
    if (status < 0) fail("out of memory for a frame", status);
    const std::uint8_t* source[1] = {rgb_.data()};
    const int source_stride[1] = {info_.width * 3};
    sws_scale(scale_.get(), source, source_stride, 0, info_.height, frame_->data, frame_->linesize);
    frame_->pts = std::int64_t(info_.frames);
    encode(frame_.get());
    ++info_.frames;
  }

  void finish() {
    encode(nullptr);  // flush the frames the encoder holds back
    const int status = av_write_trailer(format_.get());
    if (status < 0) fail("cannot finish the file", status);
    const int closed = avio_closep(&format_->pb);
    if (closed < 0) fail("cannot finish the file", closed);
    remove_->release();
  }

 private:
  [[noreturn]] void fail(const std::string& what, int status) const {
    throw Error(name_ + ": " + what + ": " + av_error_text(status));
  }

  void encode(AVFrame* frame) {
    int status = avcodec_send_frame(context_.get(), frame);
    if (status < 0) fail("cannot encode a frame", status);
    for (;;) {
      status = avcodec_receive_packet(context_.get(), packet_.get());
      if (status == AVERROR(EAGAIN) || status == AVERROR_EOF) return;
      if (status < 0) fail("cannot encode a frame", status);
      av_packet_rescale_ts(packet_.get(), context_->time_base, stream_->time_base);
      packet_->stream_index = stream_->index;
      status = av_interleaved_write_frame(format_.get(), packet_.get());
      if (status < 0) fail("cannot write a frame", status);
    }
  }

  // First, so that it is destroyed last: the file is closed (format_) before it is removed, when
  // the constructor or a frame throws.
  std::optional<detail::RemoveOnFailure> remove_;
  std::string name_;
  VideoInfo info_;
  std::unique_ptr<AVFormatContext, FormatDeleter> format_;
  AVStream* stream_ = nullptr;
  std::unique_ptr<AVCodecContext, CodecDeleter> context_;
  std::unique_ptr<AVFrame, FrameDeleter> frame_;
  std::unique_ptr<AVPacket, PacketDeleter> packet_;
  std::unique_ptr<SwsContext, ScaleDeleter> scale_;
  std::vector<detail::PackedRgb> packed_;
  std::vector<std::uint8_t> rgb_;
};

}  // namespace

bool is_video_path(const std::filesystem::path& path) {
  return container_for(path).has_value();
}

VideoInfo write_video(std::span<const Image> frames, const std::filesystem::path& path, double fps,
                      const VideoOptions& options) {
  return write_video(detail::source_of(frames), path, fps, options);
}

VideoInfo write_video(const FrameSource& frames, const std::filesystem::path& path, double fps,
                      const VideoOptions& options) {
  const std::string name = path.string();
  const std::optional<Container> container = container_for(path);
  if (!container) {
    throw Error(name + ": unknown video extension '" + path.extension().string() +
                "'; expected .webm (VP9) or .mp4 (H.264)");
  }
  if (!(fps > 0 && fps <= 1000)) {
    throw Error(name + ": frame rate " + std::to_string(fps) + " is outside 0 < fps <= 1000");
  }
  if (frames.count == 0 || !frames.frame) throw Error(name + ": no frames to write");
  quiet_libav_once();
  const Image first = frames.frame(0);
  detail::check_frame(path, 0, first, first.width(), first.height());
  VideoEncoder encoder(path, *container, options.encoder, first.width(), first.height(), fps);
  encoder.add(first);
  if (options.progress) options.progress(1, frames.count);
  for (std::size_t i = 1; i < frames.count; ++i) {
    const Image frame = frames.frame(i);
    detail::check_frame(path, i, frame, first.width(), first.height());
    encoder.add(frame);
    if (options.progress) options.progress(i + 1, frames.count);
  }
  encoder.finish();
  return encoder.info();
}

}  // namespace tfdebug::viz
