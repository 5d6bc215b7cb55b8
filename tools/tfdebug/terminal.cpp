#include "terminal.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>

namespace tfdebug::cli {

bool use_colour(std::FILE* stream) {
  const char* no_colour = std::getenv("NO_COLOR");
  if (no_colour != nullptr && no_colour[0] != '\0') return false;
  return isatty(fileno(stream)) != 0;
}

std::string paint(const std::string& text, Tone tone, bool colour) {
  if (!colour || tone == Tone::plain) return text;
  const char* code = "";
  switch (tone) {
    case Tone::good:
      code = "\033[32m";
      break;
    case Tone::warn:
      code = "\033[33m";
      break;
    case Tone::bad:
      code = "\033[1;31m";
      break;
    case Tone::dim:
      code = "\033[2m";
      break;
    case Tone::bold:
      code = "\033[1m";
      break;
    case Tone::plain:
      break;
  }
  return code + text + "\033[0m";
}

std::string sparkline(std::span<const std::int64_t> counts) {
  static const char* const kBlocks[] = {" ", "▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"};
  std::int64_t peak = 0;
  for (std::int64_t c : counts) peak = std::max(peak, c);
  std::string out;
  for (std::int64_t c : counts) {
    int level = 0;
    if (c > 0 && peak > 0) level = 1 + static_cast<int>(7 * c / peak);  // any non-zero shows
    out += kBlocks[std::min(level, 8)];
  }
  return out;
}

std::string format_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  // Seven significant digits read well; the JSON output carries full precision.
  const int n = std::snprintf(buffer, sizeof buffer, "%.7g", value);
  return std::string(buffer, static_cast<std::size_t>(n));
}

std::string format_count(std::int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

void KeyValueTable::add(std::string key, std::string value) {
  rows_.emplace_back(std::move(key), std::move(value));
}

std::size_t display_width(const std::string& text) {
  std::size_t width = 0;
  for (unsigned char c : text) width += (c & 0xC0u) != 0x80u;  // count UTF-8 lead bytes
  return width;
}

void KeyValueTable::print(std::FILE* out) const {
  std::size_t width = 0;
  for (const auto& [key, value] : rows_) width = std::max(width, display_width(key));
  for (const auto& [key, value] : rows_) {
    const std::string padding(width - display_width(key), ' ');
    std::fprintf(out, "  %s%s  %s\n", key.c_str(), padding.c_str(), value.c_str());
  }
}

std::string progress_bar(std::int64_t done, std::int64_t total) {
  constexpr int kWidth = 24;
  const double fraction =
      total > 0 ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total)) : 1.0;
  const int eighths = static_cast<int>(fraction * kWidth * 8);
  static const char* const kParts[] = {"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"};
  std::string bar = "[";
  for (int i = 0; i < eighths / 8; ++i) bar += "█";
  if (eighths / 8 < kWidth) bar += kParts[eighths % 8];
  for (int i = eighths / 8 + (eighths % 8 ? 1 : 0); i < kWidth; ++i) bar += " ";
  char tail[64];
  std::snprintf(tail, sizeof tail, "] %3d%%  %.1f / %.1f GiB", static_cast<int>(fraction * 100),
                static_cast<double>(done) / (1 << 30), static_cast<double>(total) / (1 << 30));
  return bar + tail;
}

std::string format_duration(double ns) {
  char buf[32];
  if (ns == 0) return "0";  // e.g. the self time of a module whose time is all in submodules
  if (ns >= 1e9) {
    std::snprintf(buf, sizeof buf, "%.3f s", ns / 1e9);
  } else if (ns >= 1e6) {
    std::snprintf(buf, sizeof buf, "%.3f ms", ns / 1e6);
  } else if (ns >= 1e3) {
    std::snprintf(buf, sizeof buf, "%.3f us", ns / 1e3);
  } else {
    std::snprintf(buf, sizeof buf, "%.2f ns", ns);
  }
  return buf;
}

}  // namespace tfdebug::cli
