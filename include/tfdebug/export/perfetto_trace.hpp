// Perfetto's native protobuf trace (a `Trace` of `TracePacket`s), which the Perfetto UI opens:
//
//   std::ofstream out("step.pftrace", std::ios::binary);
//   tfdebug::write_perfetto_trace(trace, out);
//
// One process track, one thread track per thread (pid, tid, name), one counter track per
// (thread, counter name); zones as SLICE_BEGIN/SLICE_END TrackEvents, instants as INSTANT,
// counters as COUNTER with double values. Event names are interned (InternedData.event_names)
// in the first packet of the one packet sequence. Timestamps are ns since the recording began.
#pragma once

#include <iosfwd>

#include "tfdebug/profile/trace.hpp"

namespace tfdebug {

void write_perfetto_trace(const profile::Trace& trace, std::ostream& out);

}  // namespace tfdebug
