// Breakpoints of a training run: where a Debugger (debugger.hpp) stops the producer's thread.
// A breakpoint names a place (an op, a module's entry or exit, a phase, a step, the first
// non-finite output, a rule's finding, or any observation) and may add a condition on the
// observed tensor's statistics, an ignore count and a one-shot flag.
//
//   auto log = tfdebug::ide::parse_breakpoint("op aten::log* if nan > 0");
//   auto mlp = tfdebug::ide::parse_breakpoint("module blocks.1.mlp backward once");
//   auto big = tfdebug::ide::parse_breakpoint("if abs_max > 1e4");   // any op
//   auto bad = tfdebug::ide::parse_breakpoint("nan");                  // the first NaN's producer
//
// The text forms are those of `tfdebug console`'s `break` command (docs/debugger.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tfdebug/core/phase.hpp"
#include "tfdebug/core/stats.hpp"

namespace tfdebug::ide {

// One comparison of a statistic of the observed tensor with a number: "abs_max > 1e4",
// "nan > 0", "std < 1e-6". Statistics: min, max, mean, std, abs_max, l1, l2, count, nan, inf
// (+-Inf), nonfinite, zero, negative, positive.
struct Comparison {
  std::string statistic;
  std::string relation;  // <, <=, >, >=, ==, !=
  double value = 0;
};

// Comparisons joined by "and": all must hold.
struct Condition {
  std::vector<Comparison> all;

  bool holds(const Stats& stats) const;
  // Whether a statistic beyond the counts of NaN and Inf is read (the Debugger then measures the
  // tensor itself; the counts come with every observation).
  bool needs_moments() const;
  std::string text() const;  // "abs_max > 10000 and nan == 0"
};

// Throws tfdebug::Error naming what is wrong ("unknown statistic 'absmax'; expected ...").
Condition parse_condition(std::string_view text);

enum class BreakKind : std::uint8_t {
  op,         // an op whose name matches `pattern` (glob: * and ?), e.g. "aten::log*"
  module,     // entering (or, with at_exit, leaving) the module `pattern` (glob over module paths)
  phase,      // the first op of a phase (pattern empty; `phase` says which)
  step,       // the first op of step `step`
  nonfinite,  // an op whose output holds NaN (or Inf, per `nan`/`inf`) while its inputs held none
  finding,    // an observation that raised a finding of a rule matching `pattern` ("" or "*": any)
  any,        // every observation (with a condition: "if abs_max > 1e4")
};
std::string_view break_kind_name(BreakKind kind) noexcept;

struct Breakpoint {
  static constexpr int kAnyThread = -1;
  int id = 0;  // given by Debugger::add
  BreakKind kind = BreakKind::any;
  std::string pattern;                 // op glob, module path glob or rule glob
  bool at_exit = false;                // module: stop on leaving it instead of entering
  std::optional<Phase> phase;          // only ops of this phase (module, op, any, nonfinite, phase)
  std::int64_t step = 0;               // step: which one
  bool nan = true, inf = false;        // nonfinite: which values count
  std::optional<Condition> condition;  // also needs this to hold of the observed tensor
  std::int64_t ignore = 0;             // hits that do not stop (then it stops)
  bool once = false;                   // deleted after it stopped once
  // Which threads it stops (threads are numbered 1, 2, ... in the order they first observed,
  // Debugger::thread_number): 0, the default: any thread, except that while a thread steps
  // (next, step, finish) only that thread; kAnyThread: any thread, also while another steps;
  // N > 0: only thread N.
  int thread = 0;
  bool enabled = true;
  std::int64_t hits = 0;  // times place and condition matched (including the ignored ones)

  // "op aten::log* if nan > 0 once": the place and the options, as parse_breakpoint reads them.
  std::string text() const;
};

// A breakpoint from the console's text: `op GLOB`, `module GLOB [exit] [forward|backward]`,
// `phase forward|backward|optimizer`, `step N`, `nan`, `inf`, `nonfinite`, `finding [RULE]`,
// or a bare glob (an op when it holds "::", a module otherwise), each optionally followed by
// `if CONDITION`, `ignore N`, `thread N|any` and `once`; or only `if CONDITION` (any op). Throws
// tfdebug::Error.
Breakpoint parse_breakpoint(std::string_view text);

// Shell-style glob: '*' any run of characters, '?' one character; everything else literal.
bool glob_match(std::string_view pattern, std::string_view text) noexcept;

}  // namespace tfdebug::ide
