#include "tfdebug/core/terminal_text.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <cstring>

namespace tfdebug {
namespace {

// The byte offset of the code point `columns` code points into `text` (valid UTF-8).
std::size_t offset_of_column(const std::string& text, std::size_t columns) {
  std::size_t seen = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0u) == 0x80u) continue;
    if (seen == columns) return i;
    ++seen;
  }
  return text.size();
}

}  // namespace

std::size_t terminal_columns(std::FILE* stream) {
  if (const char* env = std::getenv("COLUMNS"); env != nullptr && env[0] != '\0') {
    std::size_t value = 0;
    const char* end = env + std::strlen(env);
    const auto [ptr, ec] = std::from_chars(env, end, value);
    if (ec == std::errc() && ptr == end && value > 0) return value;
  }
  if (isatty(fileno(stream)) == 0) return 0;
  winsize size{};
  if (ioctl(fileno(stream), TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  return 80;
}

std::string elide_middle(const std::string& text, std::size_t columns) {
  const std::size_t width = display_width(text);
  if (columns == 0 || width <= columns) return text;
  if (columns == 1) return "…";
  const std::size_t head = (columns - 1) / 2;
  const std::size_t tail = columns - 1 - head;
  return text.substr(0, offset_of_column(text, head)) + "…" +
         text.substr(offset_of_column(text, width - tail));
}

std::vector<std::string> wrap_words(const std::string& text, std::size_t columns, std::size_t indent) {
  if (columns == 0 || display_width(text) <= columns) return {text};
  std::vector<std::string> lines;
  std::string line;
  std::size_t used = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    const std::size_t width = display_width(word);
    const std::size_t lead = lines.empty() ? 0 : indent;
    if (!line.empty() && lead + used + 1 + width > columns) {
      lines.push_back((lines.empty() ? "" : std::string(indent, ' ')) + line);
      line.clear();
      used = 0;
    }
    if (!line.empty()) {
      line += ' ';
      ++used;
    }
    line += word;
    used += width;
    start = end + 1;
  }
  if (!line.empty()) lines.push_back((lines.empty() ? "" : std::string(indent, ' ')) + line);
  return lines;
}

std::size_t display_width(const std::string& text) {
  std::size_t width = 0;
  for (unsigned char c : text) width += (c & 0xC0u) != 0x80u;  // count UTF-8 lead bytes
  return width;
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

}  // namespace tfdebug
