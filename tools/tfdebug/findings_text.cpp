#include "findings_text.hpp"

#include <algorithm>

namespace tfdebug::cli {

SeverityCounts count_severities(std::span<const Finding> findings) {
  SeverityCounts counts;
  for (const Finding& f : findings) {
    switch (f.severity) {
      case Severity::error:
        ++counts.error;
        break;
      case Severity::warning:
        ++counts.warning;
        break;
      case Severity::info:
        ++counts.info;
        break;
    }
  }
  return counts;
}

std::vector<const Finding*> by_severity(std::span<const Finding> findings) {
  std::vector<const Finding*> order;
  order.reserve(findings.size());
  for (const Finding& f : findings) order.push_back(&f);
  std::stable_sort(order.begin(), order.end(),
                   [](const Finding* a, const Finding* b) { return a->severity > b->severity; });
  return order;
}

std::string severity_counts_text(const SeverityCounts& counts) {
  return plural(counts.error, "error") + ", " + plural(counts.warning, "warning") + ", " +
         plural(counts.info, "info", "info");
}

std::string findings_headline(const SeverityCounts& counts) {
  if (counts.total() == 0) return "no findings";
  return plural(counts.total(), "finding") + ": " + severity_counts_text(counts);
}

Tone severity_tone(Severity severity) {
  switch (severity) {
    case Severity::error:
      return Tone::bad;
    case Severity::warning:
      return Tone::warn;
    case Severity::info:
      return Tone::dim;
  }
  return Tone::plain;
}

void print_finding_line(std::FILE* out, Severity severity, const std::string& text, bool colour,
                        const std::string& detail) {
  constexpr std::size_t kWord = 7;  // "warning"
  constexpr std::size_t kIndent = 2 + kWord + 2;
  std::string word(severity_name(severity));
  word.resize(std::max(word.size(), kWord), ' ');
  const std::size_t columns = terminal_columns(out);
  // Wrapped in what is left after the severity column; a very narrow terminal gets one line.
  const auto wrapped = [&](const std::string& t, std::size_t indent) {
    return columns > kIndent + 20 ? wrap_words(t, columns - kIndent, indent) : std::vector<std::string>{t};
  };
  const std::string pad(kIndent, ' ');
  const std::vector<std::string> lines = wrapped(text, 0);
  std::fprintf(out, "  %s  %s\n", paint(word, severity_tone(severity), colour).c_str(),
               lines.front().c_str());
  for (std::size_t i = 1; i < lines.size(); ++i) std::fprintf(out, "%s%s\n", pad.c_str(), lines[i].c_str());
  if (detail.empty()) return;
  // The detail's own lines sit under its text, past its leading "→ ".
  for (const std::string& line : wrapped(detail, 2)) std::fprintf(out, "%s%s\n", pad.c_str(), line.c_str());
}

}  // namespace tfdebug::cli
