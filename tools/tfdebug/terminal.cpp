#include "terminal.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "tfdebug/core/error.hpp"

namespace tfdebug::cli {
namespace {

ColourChoice g_colour_choice = ColourChoice::automatic;

bool dumb_terminal() {
  const char* term = std::getenv("TERM");
  return term != nullptr && std::strcmp(term, "dumb") == 0;
}

std::string padded(const std::string& text, std::size_t width, Table::Align align) {
  const std::size_t used = display_width(text);
  if (used >= width) return text;
  const std::string pad(width - used, ' ');
  return align == Table::Align::left ? text + pad : pad + text;
}

}  // namespace

ColourChoice parse_colour_choice(std::string_view word) {
  if (word == "auto") return ColourChoice::automatic;
  if (word == "always") return ColourChoice::always;
  if (word == "never") return ColourChoice::never;
  throw Error("--color must be auto, always or never, not '" + std::string(word) + "'");
}

void set_colour_choice(ColourChoice choice) {
  g_colour_choice = choice;
}

bool use_colour(std::FILE* stream) {
  if (g_colour_choice != ColourChoice::automatic) return g_colour_choice == ColourChoice::always;
  const char* no_colour = std::getenv("NO_COLOR");
  if (no_colour != nullptr && no_colour[0] != '\0') return false;
  return interactive(stream);
}

bool interactive(std::FILE* stream) {
  return isatty(fileno(stream)) != 0 && !dumb_terminal();
}

std::string plural(std::int64_t n, std::string_view one, std::string_view many) {
  std::string noun(n == 1 ? one : many.empty() ? std::string(one) + "s" : many);
  return format_count(n) + " " + noun;
}

Table::Table(std::vector<Column> columns, std::string indent)
    : columns_(std::move(columns)), indent_(std::move(indent)) {}

void Table::add(std::vector<std::string> cells, Tone tone) {
  cells.resize(columns_.size());
  rows_.emplace_back(std::move(cells), tone);
}

void Table::print(std::FILE* out, std::size_t columns, bool colour) const {
  std::vector<std::size_t> widths(columns_.size());
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    widths[c] = display_width(columns_[c].header);
    for (const auto& [cells, tone] : rows_) widths[c] = std::max(widths[c], display_width(cells[c]));
  }
  std::vector<bool> shown(columns_.size(), true);
  const auto total = [&] {
    std::size_t sum = display_width(indent_);
    bool first = true;
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      if (!shown[c]) continue;
      sum += widths[c] + (first ? 0 : 2);
      first = false;
    }
    return sum;
  };
  std::vector<std::string> dropped;
  if (columns > 0 && total() > columns) {
    // The elidable column at its narrowest, then the droppable columns out until the rest fits,
    // then the elidable column given back what is left.
    const auto elidable =
        std::find_if(columns_.begin(), columns_.end(), [](const Column& c) { return c.elidable; });
    const std::size_t e = static_cast<std::size_t>(elidable - columns_.begin());
    const std::size_t natural = e < widths.size() ? widths[e] : 0;
    if (e < widths.size())
      widths[e] = std::min(natural, std::max(columns_[e].minimum, display_width(columns_[e].header)));
    for (std::size_t c = columns_.size(); c-- > 0 && total() > columns;) {
      if (!columns_[c].droppable) continue;
      shown[c] = false;
      dropped.insert(dropped.begin(), columns_[c].header);
    }
    if (e < widths.size() && total() < columns)
      widths[e] = std::min(natural, widths[e] + (columns - total()));
  }
  const auto line = [&](const std::vector<std::string>& cells) {
    std::string text = indent_;
    bool first = true;
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      if (!shown[c]) continue;
      if (!first) text += "  ";
      first = false;
      std::string cell = columns_[c].elidable ? elide_middle(cells[c], widths[c]) : cells[c];
      // The last column is not padded on the left-aligned side: no trailing spaces.
      const bool last = std::none_of(shown.begin() + static_cast<std::ptrdiff_t>(c) + 1, shown.end(),
                                     [](bool s) { return s; });
      text += last && columns_[c].align == Align::left ? cell : padded(cell, widths[c], columns_[c].align);
    }
    return text;
  };
  std::vector<std::string> header;
  header.reserve(columns_.size());
  for (const Column& c : columns_) header.push_back(c.header);
  std::fprintf(out, "%s\n", line(header).c_str());
  for (const auto& [cells, tone] : rows_) std::fprintf(out, "%s\n", paint(line(cells), tone, colour).c_str());
  if (!dropped.empty()) {
    std::string names;
    for (const std::string& d : dropped) names += (names.empty() ? "" : ", ") + d;
    const std::string note = "(" + names + " left out to fit " + std::to_string(columns) +
                             " columns; a wider terminal or --json shows them)";
    const std::size_t indent = display_width(indent_);
    for (const std::string& l : wrap_words(note, columns > indent + 20 ? columns - indent : 0, 1))
      std::fprintf(out, "%s%s\n", indent_.c_str(), l.c_str());
  }
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

void KeyValueTable::add(std::string key, std::string value) {
  rows_.emplace_back(std::move(key), std::move(value));
}

void KeyValueTable::print(std::FILE* out) const {
  std::size_t width = 0;
  for (const auto& [key, value] : rows_) width = std::max(width, display_width(key));
  const std::size_t columns = terminal_columns(out);
  const std::size_t indent = 2 + width + 2;
  for (const auto& [key, value] : rows_) {
    const std::string padding(width - display_width(key), ' ');
    // A painted value keeps its line: wrapping would split its escape codes.
    const bool painted = value.find('\033') != std::string::npos;
    const std::vector<std::string> lines = painted || columns <= indent + 16
                                               ? std::vector<std::string>{value}
                                               : wrap_words(value, columns - indent, 0);
    std::fprintf(out, "  %s%s  %s\n", key.c_str(), padding.c_str(), lines.front().c_str());
    for (std::size_t i = 1; i < lines.size(); ++i)
      std::fprintf(out, "%s%s\n", std::string(indent, ' ').c_str(), lines[i].c_str());
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
