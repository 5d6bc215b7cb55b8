#include "quote.hpp"

#include <algorithm>
#include <cstdint>

namespace tfdebug::io::detail {
namespace {

// The length of the valid UTF-8 sequence at text[i] (2 to 4 bytes) that is not a C1 control
// (U+0080..U+009F), or 0.
std::size_t utf8_sequence(std::string_view text, std::size_t i) {
  const auto c = static_cast<std::uint8_t>(text[i]);
  std::size_t n = 0;
  std::uint32_t cp = 0;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1FU;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0FU;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07U;
  } else {
    return 0;
  }
  if (text.size() - i < n) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto cc = static_cast<std::uint8_t>(text[i + k]);
    if ((cc & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (cc & 0x3FU);
  }
  static constexpr std::uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF) || (cp >= 0x80 && cp <= 0x9F)) return 0;
  return n;
}

}  // namespace

std::string escape_text(std::string_view text, std::size_t max) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(std::min(text.size(), max) + 8);
  std::size_t shown = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    if (shown == max) {
      out.append("... (");
      out.append(std::to_string(text.size()));
      out.append(" bytes)");
      break;
    }
    const auto c = static_cast<std::uint8_t>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\\' || c == '\'') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7F) {
      out += static_cast<char>(c);
    } else if (const std::size_t n = c >= 0x80 ? utf8_sequence(text, i) : 0; n > 0) {
      out.append(text.substr(i, n));
      i += n;
      ++shown;
      continue;
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xF];
    }
    ++i;
    ++shown;
  }
  return out;
}

std::string quote(std::string_view text, std::size_t max) {
  std::string out = "'";
  out.append(escape_text(text, max));
  out.push_back('\'');
  return out;
}

}  // namespace tfdebug::io::detail
