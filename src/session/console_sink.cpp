#include "tfdebug/session/console_sink.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

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
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

ConsoleSink::ConsoleSink(std::FILE* out, std::optional<bool> colour) : out_(out) {
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
  std::fprintf(out_, "tfdebug: %s%s%s [%s] %s\n", colour_ ? colour_of(f.severity) : "", severity.c_str(),
               colour_ ? "\033[0m" : "", f.rule.c_str(), f.message.c_str());
  std::fflush(out_);
}

void ConsoleSink::on_run_end(const RunSummary& s) {
  long long counts[3] = {0, 0, 0};  // by Severity: info, warning, error
  for (const Finding& f : s.findings) ++counts[static_cast<int>(f.severity)];
  std::fprintf(out_, "tfdebug: %s, %s: %s, %s, %lld info\n", counted(s.steps, "step", "steps").c_str(),
               counted(s.observations, "observation", "observations").c_str(),
               counted(counts[2], "error", "errors").c_str(),
               counted(counts[1], "warning", "warnings").c_str(), counts[0]);
  // Errors first, then warnings, then info; in the order found within each.
  std::vector<const Finding*> order;
  for (const Finding& f : s.findings) order.push_back(&f);
  std::stable_sort(order.begin(), order.end(),
                   [](const Finding* a, const Finding* b) { return a->severity > b->severity; });
  for (const Finding* finding : order) {
    const Finding& f = *finding;
    const std::string severity(severity_name(f.severity));
    const std::string place = f.module.empty() ? f.op : f.op.empty() ? f.module : f.module + " / " + f.op;
    std::fprintf(out_, "  %s%-7s%s %-20s step %-6lld %-9s %s (x%lld)\n", colour_ ? colour_of(f.severity) : "",
                 severity.c_str(), colour_ ? "\033[0m" : "", f.rule.c_str(), static_cast<long long>(f.step),
                 std::string(phase_name(f.phase)).c_str(), place.c_str(), static_cast<long long>(f.count));
    if (f.worst && f.worst->step != f.step)
      std::fprintf(out_, "          worst, step %lld: %s\n", static_cast<long long>(f.worst->step),
                   f.worst->message.c_str());
    if (!f.suggestion.empty()) std::fprintf(out_, "          try: %s\n", f.suggestion.c_str());
  }
  if (s.flight_recorder) std::fprintf(out_, "  flight recorder: %s\n", s.flight_recorder->string().c_str());
  std::fflush(out_);
}

}  // namespace tfdebug
