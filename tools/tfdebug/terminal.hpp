// Terminal output helpers for the CLI: colour only on a TTY, aligned tables, sparklines.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

namespace tfdebug::cli {

// Colour is used only when the stream is a terminal and NO_COLOR is not set.
bool use_colour(std::FILE* stream);

enum class Tone { plain, good, warn, bad, dim, bold };
std::string paint(const std::string& text, Tone tone, bool colour);

// Eight-level Unicode block sparkline of counts ("▁▂▃▅▇").
std::string sparkline(std::span<const std::int64_t> counts);

// "[██████▌        ]  43%  0.9 / 2.0 GiB": a bar for work measured in bytes.
std::string progress_bar(std::int64_t done, std::int64_t total);

// Seven significant digits (for reading; JSON and CSV carry full precision); "nan", "inf", "-inf".
std::string format_number(double value);
// Integer with thousands separators: 1,234,567.
std::string format_count(std::int64_t value);

// A duration given in nanoseconds with a unit that suits it: "12.35 ns", "1.197 ms", "2.000 s".
std::string format_duration(double ns);

// Columns a string takes on a terminal (UTF-8 code points; no wide characters are used).
std::size_t display_width(const std::string& text);

// A two-column table whose keys are padded to the widest key.
class KeyValueTable {
 public:
  void add(std::string key, std::string value);
  void print(std::FILE* out) const;

 private:
  std::vector<std::pair<std::string, std::string>> rows_;
};

}  // namespace tfdebug::cli
