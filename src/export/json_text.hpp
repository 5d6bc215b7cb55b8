// Private: small helpers for writing JSON text by hand (trace writers stream large arrays).
#pragma once

#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string_view>

namespace tfdebug::detail {

// A JSON string literal, quotes included.
inline void write_json_string(std::ostream& out, std::string_view text) {
  out << '"';
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out << '\\' << c;
    } else if (u < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", u);
      out << buf;
    } else {
      out << c;
    }
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
