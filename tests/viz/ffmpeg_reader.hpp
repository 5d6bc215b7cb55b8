// Animations read back by an independent decoder: ffprobe counts the frames, ffmpeg extracts one
// as PNG (read with viz::read_png). For the animation tests of tests/viz and tests/export. ffmpeg
// is installed by scripts/install-deps.sh: without it these tests fail, they never skip.
#pragma once

#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "tfdebug/viz/image.hpp"

namespace tfdebug::testing {

// Standard output of a shell command; throws when it fails, with what it printed.
inline std::string run_command(const std::string& command) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
  std::string out;
  std::array<char, 65536> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  if (::pclose(pipe) != 0) {
    throw std::runtime_error(command + " failed (ffmpeg is installed by scripts/install-deps.sh): " + out);
  }
  return out;
}

// The path as one shell word.
inline std::string quoted(const std::filesystem::path& path) {
  std::string out(1, '\'');
  for (const char c : path.string()) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  out += '\'';
  return out;
}

// One field of the first video stream as ffprobe reports it after decoding every frame:
// nb_read_frames, codec_name, width, height, r_frame_rate.
inline std::string probe_stream(const std::filesystem::path& path, const std::string& field) {
  std::string out =
      run_command("ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=" + field +
                  " -of default=noprint_wrappers=1:nokey=1 " + quoted(path));
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

inline long probe_frame_count(const std::filesystem::path& path) {
  return std::stol(probe_stream(path, "nb_read_frames"));
}

// Frame `index` (from 0) as ffmpeg decodes it, through a PNG next to the animation.
inline viz::Image decode_frame(const std::filesystem::path& path, int index) {
  const std::filesystem::path png = path.string() + ".frame" + std::to_string(index) + ".png";
  run_command("ffmpeg -v error -y -i " + quoted(path) + " -vf 'select=eq(n\\," + std::to_string(index) +
              ")' -frames:v 1 " + quoted(png));
  viz::Image image = viz::read_png(png);
  std::filesystem::remove(png);
  return image;
}

// A fresh folder for a test's files, removed with it.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("tfdebug_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const noexcept { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

}  // namespace tfdebug::testing
