// Flame-graph formats written from a trace:
//
//   folded stacks   `thread;step;forward;matmul 1234` per line: self time in nanoseconds of
//                   each distinct stack, rooted at the thread name. flamegraph.pl, inferno,
//                   speedscope and d3-flame-graph read it. A ';' inside a name becomes ':'.
//   speedscope      speedscope's JSON file format, one "evented" profile per thread in
//                   nanoseconds (https://www.speedscope.app/file-format-schema.json).
//
//   std::ofstream folded("step.folded");
//   tfdebug::write_folded_stacks(trace, folded);
//   std::ofstream speedscope("step.speedscope.json");
//   tfdebug::write_speedscope(trace, speedscope);
#pragma once

#include <iosfwd>

#include "tfdebug/profile/trace.hpp"

namespace tfdebug {

void write_folded_stacks(const profile::Trace& trace, std::ostream& out);
void write_speedscope(const profile::Trace& trace, std::ostream& out);

}  // namespace tfdebug
