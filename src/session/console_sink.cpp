#include "tfdebug/session/console_sink.hpp"

#include <unistd.h>

#include <cstdlib>
#include <string>

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

}  // namespace

ConsoleSink::ConsoleSink(std::FILE* out, std::optional<bool> colour) : out_(out) {
  if (colour) {
    colour_ = *colour;
  } else {
    const char* term = std::getenv("TERM");
    colour_ = isatty(fileno(out)) != 0 && std::getenv("NO_COLOR") == nullptr &&
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
  std::int64_t errors = 0;
  std::int64_t warnings = 0;
  for (const Finding& f : s.findings) {
    errors += f.severity == Severity::error ? 1 : 0;
    warnings += f.severity == Severity::warning ? 1 : 0;
  }
  std::fprintf(out_, "tfdebug: %lld steps, %lld observations: %lld errors, %lld warnings\n",
               static_cast<long long>(s.steps), static_cast<long long>(s.observations),
               static_cast<long long>(errors), static_cast<long long>(warnings));
  for (const Finding& f : s.findings) {
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
