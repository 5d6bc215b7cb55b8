#include "tfdebug/session/console_sink.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "tfdebug/core/terminal_text.hpp"

namespace tfdebug {

namespace {

const char* colour_of(Severity severity) {
  switch (severity) {
    case Severity::error:
      return "\033[1;31m";
    case Severity::warning:
      return "\033[33m";
    case Severity::info:
      return "\033[36m";
  }
  return "";
}

std::string counted(long long n, const char* one, const char* many) {
  return format_count(n).append(" ").append(n == 1 ? one : many);
}

// `text` padded with spaces to `width` columns.
std::string padded(std::string text, std::size_t width) {
  const std::size_t used = display_width(text);
  if (used < width) text.append(width - used, ' ');
  return text;
}

}  // namespace

ConsoleSink::ConsoleSink(std::FILE* out, std::optional<bool> colour, std::optional<std::size_t> columns)
    : out_(out), columns_(columns ? *columns : terminal_columns(out)) {
  if (colour) {
    colour_ = *colour;
  } else {
    const char* term = std::getenv("TERM");
    const char* no_colour = std::getenv("NO_COLOR");  // set and not empty (no-color.org)
    colour_ = isatty(fileno(out)) != 0 && (no_colour == nullptr || no_colour[0] == '\0') &&
              (term == nullptr || std::string(term) != "dumb");
  }
}

void ConsoleSink::on_finding(const Finding& f) {
  const std::string severity(severity_name(f.severity));
  // Wrapped as plain text; the severity, always on the first line, is painted after.
  const std::string head = "tfdebug: ";
  std::vector<std::string> lines =
      wrap_words(head + severity + " [" + f.rule + "] " + f.message, columns_, 4);
  if (colour_) {
    lines.front().replace(head.size(), severity.size(), colour_of(f.severity) + severity + "\033[0m");
  }
  for (const std::string& line : lines) std::fprintf(out_, "%s\n", line.c_str());
  std::fflush(out_);
}

void ConsoleSink::on_run_end(const RunSummary& s) {
  long long counts[3] = {0, 0, 0};  // by Severity: info, warning, error
  for (const Finding& f : s.findings) ++counts[static_cast<int>(f.severity)];
  std::fprintf(out_, "tfdebug: %s, %s: %s, %s, %s info\n", counted(s.steps, "step", "steps").c_str(),
               counted(s.observations, "observation", "observations").c_str(),
               counted(counts[2], "error", "errors").c_str(),
               counted(counts[1], "warning", "warnings").c_str(), format_count(counts[0]).c_str());
  // Errors first, then warnings, then info; in the order found within each.
  std::vector<const Finding*> order;
  for (const Finding& f : s.findings) order.push_back(&f);
  std::stable_sort(order.begin(), order.end(),
                   [](const Finding* a, const Finding* b) { return a->severity > b->severity; });
  // The rule column is as wide as the widest rule; what follows the place is kept whole.
  std::size_t rule_width = 0;
  for (const Finding* f : order) rule_width = std::max(rule_width, display_width(f->rule));
  constexpr std::size_t kIndent = 10;    // where "try:" and "worst" lines start
  constexpr std::size_t kMinPlace = 16;  // a place is elided to no fewer columns
  for (const Finding* finding : order) {
    const Finding& f = *finding;
    const std::string severity(severity_name(f.severity));
    std::string row = "  " + padded(severity, 8);
    row += padded(f.rule, rule_width + 2);
    row += padded("step " + std::to_string(f.step), 12);
    row += padded(std::string(phase_name(f.phase)), 10);
    const std::string recurred = "  (" + counted(f.count, "step", "steps") + ")";
    std::string place = f.module.empty() ? f.op : f.op.empty() ? f.module : f.module + " / " + f.op;
    std::string second;  // the place on a line of its own when the row leaves it too little room
    if (columns_ > 0) {
      const std::size_t used = display_width(row) + display_width(recurred);
      if (used + kMinPlace <= columns_) {
        place = elide_middle(place, columns_ - used);
      } else {
        second = std::string(kIndent, ' ') +
                 elide_middle(place, columns_ > kIndent + display_width(recurred) + kMinPlace
                                         ? columns_ - kIndent - display_width(recurred)
                                         : kMinPlace) +
                 recurred;
      }
    }
    if (second.empty()) row += place + recurred;
    while (!row.empty() && row.back() == ' ') row.pop_back();
    if (colour_) row.replace(2, severity.size(), colour_of(f.severity) + severity + "\033[0m");
    std::fprintf(out_, "%s\n", row.c_str());
    if (!second.empty()) std::fprintf(out_, "%s\n", second.c_str());
    const std::string indent(kIndent, ' ');
    const auto wrapped = [&](const std::string& text) {
      for (const std::string& line : wrap_words(text, columns_ > kIndent ? columns_ - kIndent : 0, 2))
        std::fprintf(out_, "%s%s\n", indent.c_str(), line.c_str());
    };
    if (f.worst && f.worst->step != f.step)
      wrapped("worst, step " + std::to_string(f.worst->step) + ": " + f.worst->message);
    if (!f.suggestion.empty()) wrapped("try: " + f.suggestion);
  }
  if (s.flight_recorder) std::fprintf(out_, "  flight recorder: %s\n", s.flight_recorder->string().c_str());
  std::fflush(out_);
}

}  // namespace tfdebug
