// ConsoleSink: each new finding as one line, and a summary table at the end of the run.
//
//   session.add_sink(std::make_shared<tfdebug::ConsoleSink>());          // on stderr
//   session.add_sink(std::make_shared<tfdebug::ConsoleSink>(stdout, false));  // no colour
//
//   tfdebug: error [nonfinite] aten::log in blocks.1.mlp.fc1 produced 12 NaN of 4,096 values
//       from finite inputs (forward, step 73)
//   ...
//   tfdebug: 100 steps, 1,234,567 observations: 1 error, 2 warnings, 0 info
//     error   nonfinite     step 73    forward   blocks.1.mlp.fc1 / aten::log  (1 step)
//             try: look at the inputs of aten::log ...
//
// Lines fit the terminal (tfdebug/core/terminal_text.hpp): messages wrap at spaces, a long
// module name is elided in the middle. Written to a file or a pipe, lines are kept whole.
#pragma once

#include <cstddef>
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
  // `columns`: the width lines fit in, 0 for no limit; by default terminal_columns(out).
  explicit ConsoleSink(std::FILE* out = stderr, std::optional<bool> colour = std::nullopt,
                       std::optional<std::size_t> columns = std::nullopt);
  void on_finding(const Finding& finding) override;
  void on_run_end(const RunSummary& summary) override;

 private:
  std::FILE* out_;
  bool colour_;
  std::size_t columns_;
};

}  // namespace tfdebug
