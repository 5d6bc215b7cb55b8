// Findings as the commands print them: errors first, then warnings, then info (each in the
// order found), under a line that counts them per severity with the right plurals.
//
//   const auto order = by_severity(inspection.findings);
//   std::printf("%s\n", findings_headline(count_severities(inspection.findings)).c_str());
//   for (const Finding* f : order) print_finding_line(stdout, f->severity, f->op + ": " + f->message,
//   colour);
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "terminal.hpp"
#include "tfdebug/session/finding.hpp"

namespace tfdebug::cli {

struct SeverityCounts {
  std::int64_t error = 0;
  std::int64_t warning = 0;
  std::int64_t info = 0;
  std::int64_t total() const noexcept { return error + warning + info; }
};

SeverityCounts count_severities(std::span<const Finding> findings);

// The findings, errors first, then warnings, then info; a stable order within each.
std::vector<const Finding*> by_severity(std::span<const Finding> findings);

// "1 error, 2 warnings, 0 info": every severity, counted ("info" names a severity and has no
// plural).
std::string severity_counts_text(const SeverityCounts& counts);
// "7 findings: 1 error, 2 warnings, 4 info", or "no findings".
std::string findings_headline(const SeverityCounts& counts);

Tone severity_tone(Severity severity);

// "  error    TEXT", the severity word padded to one width (and painted when `colour`), TEXT
// wrapped at spaces to the terminal's width (terminal_columns) under itself; then `detail`
// (a suggestion), when given, on lines of its own under TEXT.
void print_finding_line(std::FILE* out, Severity severity, const std::string& text, bool colour,
                        const std::string& detail = {});

}  // namespace tfdebug::cli
