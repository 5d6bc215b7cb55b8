// Flame-graph formats written from a trace:
//
//   folded stacks   `thread;step;forward;matmul 1234` per line: self time in nanoseconds of
//                   each distinct stack, rooted at the thread name. flamegraph.pl, inferno,
//                   speedscope and d3-flame-graph read it. A ';' inside a name becomes ':'.
//   speedscope      speedscope's JSON file format, one "evented" profile per thread in
//                   nanoseconds (https://www.speedscope.app/file-format-schema.json).
//   flame-graph SVG a self-contained SVG for any browser, offline: frames merged by stack under
//                   "all" and one node per thread, width = inclusive time, hover titles with
//                   time and share, click to zoom, "Search" (a regular expression) highlights
//                   frames and shows the matched share. Inline JavaScript, no network access.
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
void write_flame_graph_svg(const profile::Trace& trace, std::ostream& out);

}  // namespace tfdebug
