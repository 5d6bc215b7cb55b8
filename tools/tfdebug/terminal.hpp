// Terminal output helpers for the CLI: colour only where it is wanted, text that fits the
// terminal's width (names elided in the middle, numbers right-aligned), plurals, sparklines.
// Every command prints through these, so that --color, NO_COLOR, TERM=dumb and COLUMNS mean the
// same everywhere (docs/cli.md, "Terminal output").
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tfdebug/core/terminal_text.hpp"

namespace tfdebug::cli {

// The global --color option: auto (the default), always, never.
enum class ColourChoice { automatic, always, never };
// Throws tfdebug::Error for a word other than auto, always, never.
ColourChoice parse_colour_choice(std::string_view word);
void set_colour_choice(ColourChoice choice);

// Whether to write escape codes to `stream`: --color always or never decide; auto means a
// terminal whose TERM is not "dumb", with NO_COLOR unset or empty (https://no-color.org).
bool use_colour(std::FILE* stream);
// Whether `stream` is a terminal that can redraw a line (\r and erase-line): a TTY whose TERM is
// not "dumb". Progress bars are drawn only there, whatever --color says.
bool interactive(std::FILE* stream);

// Text that fits the terminal (tfdebug/core/terminal_text.hpp), shared with the ConsoleSink.
using tfdebug::display_width;
using tfdebug::elide_middle;
using tfdebug::format_count;
using tfdebug::terminal_columns;
using tfdebug::wrap_words;

// "1 error", "2 errors", "1,024 tensors": the count with thousands separators and the noun
// that agrees with it. Pass `many` for irregular nouns; "info" (a severity's name) does not
// change: plural(3, "info", "info").
std::string plural(std::int64_t n, std::string_view one, std::string_view many = {});

enum class Tone { plain, good, warn, bad, dim, bold };
std::string paint(const std::string& text, Tone tone, bool colour);

// Eight-level Unicode block sparkline of counts ("▁▂▃▅▇").
std::string sparkline(std::span<const std::int64_t> counts);

// "[██████▌        ]  43%  0.9 / 2.0 GiB": a bar for work measured in bytes.
std::string progress_bar(std::int64_t done, std::int64_t total);

// Seven significant digits (for reading; JSON and CSV carry full precision); "nan", "inf", "-inf".
std::string format_number(double value);

// A duration given in nanoseconds with a unit that suits it: "12.35 ns", "1.197 ms", "2.000 s".
std::string format_duration(double ns);

// A table with a header: text columns left-aligned, number columns right-aligned, each as wide
// as its widest cell. When the rows are wider than `columns` (terminal_columns), the one
// elidable column (a name) gives up columns down to its minimum, its cells elided in the middle;
// then the droppable columns go, the last-listed first, and the table says which it left out.
class Table {
 public:
  enum class Align { left, right };
  struct Column {
    std::string header;
    Align align = Align::left;
    bool elidable = false;     // at most one: shrinks to fit, cells elided in the middle
    std::size_t minimum = 12;  // an elidable column's narrowest width
    bool droppable = false;    // may be left out when the table does not fit
  };
  explicit Table(std::vector<Column> columns, std::string indent = "  ");
  // One row, a cell per column; the row is painted in `tone` when colour is on.
  void add(std::vector<std::string> cells, Tone tone = Tone::plain);
  // Writes the header and the rows; `colour` paints the rows' tones (see Tone).
  void print(std::FILE* out, std::size_t columns, bool colour) const;

 private:
  std::vector<Column> columns_;
  std::string indent_;
  std::vector<std::pair<std::vector<std::string>, Tone>> rows_;
};

// A two-column table whose keys are padded to the widest key; a value longer than the terminal
// (terminal_columns) is wrapped at spaces under its column.
class KeyValueTable {
 public:
  void add(std::string key, std::string value);
  void print(std::FILE* out) const;
  bool empty() const noexcept { return rows_.empty(); }

 private:
  std::vector<std::pair<std::string, std::string>> rows_;
};

}  // namespace tfdebug::cli
