// Text that fits a terminal: how wide the terminal is, how many columns a string takes, and
// names elided in the middle or messages wrapped at spaces to fit. The CLI's tables and the
// Session's ConsoleSink lay their lines out with these, so COLUMNS and a pipe mean the same to
// both (docs/cli.md, "Terminal output").
//
//   const std::size_t columns = tfdebug::terminal_columns(stderr);  // 0: a pipe, no limit
//   std::string place = tfdebug::elide_middle(module, 40);          // "blocks.0…attn.q"
//   for (const std::string& line : tfdebug::wrap_words(message, columns, 4)) puts(line);
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace tfdebug {

// Note [Terminal width]: the columns text written to `stream` may take. COLUMNS, when set to a
// positive number, wins (a script or test asks for a width); otherwise a terminal's own width
// (TIOCGWINSZ), 80 when it reports none; otherwise 0, meaning unlimited: output that goes to a
// file or a pipe keeps every name whole, for grep and awk.
std::size_t terminal_columns(std::FILE* stream);

// Columns a string takes on a terminal (UTF-8 code points; no wide characters are used).
std::size_t display_width(const std::string& text);

// `text` in at most `columns` columns: when longer, its start and its end with "…" between
// ("blocks.0…attn.q.weight"), the end getting the odd column (a tensor's name ends in what it
// is). columns 0 leaves the text whole.
std::string elide_middle(const std::string& text, std::size_t columns);

// `text` cut into lines of at most `columns` columns at spaces (a word longer than a line stays
// whole); columns 0 gives one line. Each line after the first starts with `indent` spaces.
std::vector<std::string> wrap_words(const std::string& text, std::size_t columns, std::size_t indent);

// Integer with thousands separators: 1,234,567.
std::string format_count(std::int64_t value);

}  // namespace tfdebug
