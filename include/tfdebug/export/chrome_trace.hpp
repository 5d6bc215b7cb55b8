// Chrome Trace Event JSON: the interchange format for traces. Perfetto UI, chrome://tracing and
// Tracy's import-chrome open what write_chrome_trace writes; read_chrome_trace reads it back
// (and the common subset other tools write) for `tfdebug trace`.
//
//   tfdebug::profile::Trace trace = tfdebug::profile::stop();
//   std::ofstream out("step.json");
//   tfdebug::write_chrome_trace(trace, out);
//   ...
//   std::ifstream in("step.json");
//   tfdebug::profile::Trace again = tfdebug::read_chrome_trace(in, "step.json");
//
// Written form (docs/profiling.md): {"traceEvents": [...], "displayTimeUnit": "ns"} with integer
// pid and tid everywhere, zones as "X" complete events (ts and dur in µs with ns precision),
// instants as "i" with s "t", counters as "C" with one numeric arg "value" (non-finite values
// cannot be JSON numbers and are left out), thread and process names as "M" metadata, and
// per-thread dropped/evicted counts under "otherData".
#pragma once

#include <iosfwd>
#include <string>

#include "tfdebug/profile/trace.hpp"

namespace tfdebug {

void write_chrome_trace(const profile::Trace& trace, std::ostream& out);

// Reads the object or the bare-array form: X, B/E, i/I, C and M (thread_name, process_name)
// events of one process; other phases are skipped. A counter with several args becomes one
// series per arg, named "<name> <arg>" as Perfetto names them. Throws tfdebug::Error naming
// `source` on malformed input.
profile::Trace read_chrome_trace(std::istream& in, const std::string& source);

}  // namespace tfdebug
