// ConsoleSink: each new finding as one line, and a summary table at the end of the run.
//
//   session.add_sink(std::make_shared<tfdebug::ConsoleSink>());          // on stderr
//   session.add_sink(std::make_shared<tfdebug::ConsoleSink>(stdout, false));  // no colour
#pragma once

#include <cstdio>
#include <optional>

#include "tfdebug/session/sink.hpp"

namespace tfdebug {

// Prints each new finding as one line and a summary table at the end. Colour only when `out`
// is a terminal (and NO_COLOR is unset), unless `colour` says otherwise.
class ConsoleSink : public Sink {
 public:
  // A line per finding: quick, and in order with what the program prints.
  Delivery delivery() const noexcept override { return Delivery::synchronous; }
  explicit ConsoleSink(std::FILE* out = stderr, std::optional<bool> colour = std::nullopt);
  void on_finding(const Finding& finding) override;
  void on_run_end(const RunSummary& summary) override;

 private:
  std::FILE* out_;
  bool colour_;
};

}  // namespace tfdebug
