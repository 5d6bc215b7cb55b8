// Perfetto protobuf writer (reference formats.md §2), through the hand-written encoder.
#include "tfdebug/export/perfetto_trace.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <ostream>
#include <utility>
#include <vector>

#include "protobuf.hpp"

namespace tfdebug {
namespace {

using detail::ProtoWriter;

// Field numbers from Perfetto's protos (trace_packet.proto, track_descriptor.proto,
// track_event.proto, interned_data.proto).
constexpr std::uint32_t kTracePacket = 1;
constexpr std::uint32_t kPacketTimestamp = 8;
constexpr std::uint32_t kPacketSequenceId = 10;
constexpr std::uint32_t kPacketTrackEvent = 11;
constexpr std::uint32_t kPacketInternedData = 12;
constexpr std::uint32_t kPacketSequenceFlags = 13;
constexpr std::uint32_t kPacketTrackDescriptor = 60;
constexpr std::uint32_t kTrackUuid = 1;
constexpr std::uint32_t kTrackName = 2;
constexpr std::uint32_t kTrackProcess = 3;
constexpr std::uint32_t kTrackThread = 4;
constexpr std::uint32_t kTrackParentUuid = 5;
constexpr std::uint32_t kTrackCounter = 8;
constexpr std::uint32_t kProcessPid = 1;
constexpr std::uint32_t kProcessName = 6;
constexpr std::uint32_t kThreadPid = 1;
constexpr std::uint32_t kThreadTid = 2;
constexpr std::uint32_t kThreadName = 5;
constexpr std::uint32_t kEventType = 9;
constexpr std::uint32_t kEventNameIid = 10;
constexpr std::uint32_t kEventTrackUuid = 11;
constexpr std::uint32_t kEventDoubleCounterValue = 44;
constexpr std::uint32_t kInternedEventNames = 2;
constexpr std::uint32_t kInternedIid = 1;
constexpr std::uint32_t kInternedName = 2;

constexpr std::int64_t kSliceBegin = 1;
constexpr std::int64_t kSliceEnd = 2;
constexpr std::int64_t kInstant = 3;
constexpr std::int64_t kCounter = 4;
constexpr std::int64_t kIncrementalStateCleared = 1;
constexpr std::int64_t kNeedsIncrementalState = 2;
constexpr std::int64_t kSequenceId = 1;
constexpr std::uint64_t kProcessUuid = 1;

void write_packet(std::ostream& out, ProtoWriter& packet) {
  packet.integer(kPacketSequenceId, kSequenceId);
  ProtoWriter framed;
  framed.message(kTracePacket, packet);
  out << framed.str();
  packet.clear();
}

}  // namespace

void write_perfetto_trace(const profile::Trace& trace, std::ostream& out) {
  ProtoWriter packet;
  ProtoWriter body;
  ProtoWriter inner;
  // The process track, with every event name interned; this packet starts the sequence.
  inner.integer(kProcessPid, trace.pid);
  inner.bytes(kProcessName, trace.process_name);
  body.integer(kTrackUuid, static_cast<std::int64_t>(kProcessUuid));
  body.message(kTrackProcess, inner);
  packet.message(kPacketTrackDescriptor, body);
  body.clear();
  for (std::size_t i = 0; i < trace.names.size(); ++i) {
    inner.clear();
    inner.integer(kInternedIid, static_cast<std::int64_t>(i + 1));  // iids start at 1
    inner.bytes(kInternedName, trace.names[i]);
    body.message(kInternedEventNames, inner);
  }
  packet.message(kPacketInternedData, body);
  packet.integer(kPacketSequenceFlags, kIncrementalStateCleared | kNeedsIncrementalState);
  write_packet(out, packet);

  std::uint64_t next_uuid = kProcessUuid + 1;
  for (const profile::ThreadTrace& thread : trace.threads) {
    const std::uint64_t thread_uuid = next_uuid++;
    body.clear();
    inner.clear();
    inner.integer(kThreadPid, trace.pid);
    inner.integer(kThreadTid, thread.tid);
    inner.bytes(kThreadName, thread.name);
    body.integer(kTrackUuid, static_cast<std::int64_t>(thread_uuid));
    body.integer(kTrackParentUuid, static_cast<std::int64_t>(kProcessUuid));
    body.message(kTrackThread, inner);
    packet.message(kPacketTrackDescriptor, body);
    write_packet(out, packet);
    std::map<std::uint32_t, std::uint64_t> counter_tracks;
    // Slices on a track must nest: an end whose begin fell out of a keep-last window is
    // skipped, and slices still open at the end are closed at the thread's last timestamp.
    std::vector<profile::TraceEvent> events;
    events.reserve(thread.events.size());
    std::size_t open = 0;
    for (const profile::TraceEvent& event : thread.events) {
      if (event.kind == profile::EventKind::kEnd && open == 0) continue;
      if (event.kind == profile::EventKind::kBegin) ++open;
      if (event.kind == profile::EventKind::kEnd) --open;
      events.push_back(event);
    }
    for (; open > 0; --open)
      events.push_back(profile::TraceEvent{events.back().ts_ns, 0, profile::EventKind::kEnd, 0.0});
    for (const profile::TraceEvent& event : events) {
      std::uint64_t track = thread_uuid;
      if (event.kind == profile::EventKind::kCounter) {
        auto [it, added] = counter_tracks.try_emplace(event.name, 0);
        if (added) {
          it->second = next_uuid++;
          body.clear();
          body.integer(kTrackUuid, static_cast<std::int64_t>(it->second));
          body.integer(kTrackParentUuid, static_cast<std::int64_t>(kProcessUuid));
          body.bytes(kTrackName, trace.names[event.name]);
          body.message(kTrackCounter, ProtoWriter{});
          packet.message(kPacketTrackDescriptor, body);
          write_packet(out, packet);
        }
        track = it->second;
      }
      body.clear();
      switch (event.kind) {
        case profile::EventKind::kBegin:
          body.integer(kEventType, kSliceBegin);
          body.integer(kEventNameIid, event.name + 1);
          break;
        case profile::EventKind::kEnd:
          body.integer(kEventType, kSliceEnd);
          break;
        case profile::EventKind::kInstant:
          body.integer(kEventType, kInstant);
          body.integer(kEventNameIid, event.name + 1);
          break;
        case profile::EventKind::kCounter:
          body.integer(kEventType, kCounter);
          body.fixed64(kEventDoubleCounterValue, event.value);
          break;
      }
      body.integer(kEventTrackUuid, static_cast<std::int64_t>(track));
      packet.integer(kPacketTimestamp, std::max<std::int64_t>(event.ts_ns, 0));
      packet.message(kPacketTrackEvent, body);
      packet.integer(kPacketSequenceFlags, kNeedsIncrementalState);
      write_packet(out, packet);
    }
  }
}

}  // namespace tfdebug
