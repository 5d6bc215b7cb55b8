// Private: small helpers for writing JSON text by hand (trace writers stream large arrays).
#pragma once

#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string_view>

#include "tfdebug/core/utf8.hpp"

namespace tfdebug::detail {

// A JSON string literal, quotes included. Each invalid UTF-8 sequence (a name from a program or
// file may hold any bytes) is written as U+FFFD, as the CLI's JSON does (Note [JSON of invalid
// UTF-8] in tools/tfdebug/json_output.hpp), so the document stays valid JSON.
inline void write_json_string(std::ostream& out, std::string_view text) {
  out << '"';
  for (std::size_t i = 0; i < text.size();) {
    const Utf8Step step = next_utf8(text, i);
    const char c = text[i];
    const auto u = static_cast<unsigned char>(c);
    if (!step.valid) {
      out << "\xEF\xBF\xBD";
    } else if (c == '"' || c == '\\') {
      out << '\\' << c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out << buf;
    } else {
      out << text.substr(i, step.length);
    }
    i += step.length;
  }
  out << '"';
}

// Nanoseconds as microseconds with exactly three decimals (no rounding error).
inline void write_us(std::ostream& out, std::int64_t ns) {
  if (ns < 0) {
    out << '-';
    ns = -ns;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ns / 1000),
                static_cast<long long>(ns % 1000));
  out << buf;
}

// A finite double that reads back to the same value.
inline void write_json_number(std::ostream& out, double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  out << buf;
}

}  // namespace tfdebug::detail
