#include "safe_text.hpp"

#include <cstdio>

#include "tfdebug/core/utf8.hpp"

namespace tfdebug::cli {
namespace {

bool reorders_or_breaks_lines(char32_t c) {
  return c == 0x2028 || c == 0x2029 || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

}  // namespace

std::string terminal_safe(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char buf[12];
  for (std::size_t i = 0; i < text.size();) {
    const Utf8Step step = next_utf8(text, i);
    if (!step.valid) {
      for (std::size_t k = 0; k < step.length; ++k) {
        std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(text[i + k]));
        out += buf;
      }
    } else if (step.code_point == '\n') {
      out += "\\n";
    } else if (step.code_point == '\r') {
      out += "\\r";
    } else if (step.code_point == '\t') {
      out += "\\t";
    } else if (step.code_point < 0x20 || step.code_point == 0x7F) {
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(step.code_point));
      out += buf;
    } else if ((step.code_point >= 0x80 && step.code_point <= 0x9F) ||
               reorders_or_breaks_lines(step.code_point)) {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(step.code_point));
      out += buf;
    } else {
      out.append(text.substr(i, step.length));
    }
    i += step.length;
  }
  return out;
}

}  // namespace tfdebug::cli
