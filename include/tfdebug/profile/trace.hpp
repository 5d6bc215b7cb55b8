// A collected trace: per-thread event lists with interned names, as the collector returns it
// (tfdebug/profile/collector.hpp) and as the trace readers produce it
// (tfdebug/export/chrome_trace.hpp). Exporters and `tfdebug trace` work on this model.
//
//   tfdebug::profile::Trace trace = tfdebug::profile::stop();
//   for (const auto& thread : trace.threads)
//     for (const auto& slice : tfdebug::profile::slices(thread))
//       std::printf("%s %lld ns\n", trace.names[slice.name].c_str(), slice.end_ns - slice.start_ns);
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tfdebug::profile {

enum class EventKind : std::uint8_t { kBegin, kEnd, kInstant, kCounter };

struct TraceEvent {
  std::int64_t ts_ns = 0;  // since the start of the recording
  std::uint32_t name = 0;  // index into Trace::names
  EventKind kind = EventKind::kInstant;
  double value = 0.0;  // counters only
};

struct ThreadTrace {
  std::uint32_t tid = 0;  // the OS thread id where known
  std::string name;
  std::vector<TraceEvent> events;  // in time order
  std::uint64_t dropped = 0;       // lost because the thread's buffer was full
  std::uint64_t evicted = 0;       // discarded by the keep-last window
};

struct Trace {
  std::uint32_t pid = 0;
  std::string process_name;
  std::vector<std::string> names;
  std::vector<ThreadTrace> threads;

  // The index of `name` in names, adding it when new.
  std::uint32_t intern(std::string_view name);

 private:
  std::unordered_map<std::string, std::uint32_t> index_;
};

// A begin/end pair. Slices come in begin order; parent is the index of the enclosing slice in
// the same vector, or -1.
struct Slice {
  std::uint32_t name = 0;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t self_ns = 0;  // duration minus the durations of direct children
  std::int32_t parent = -1;
  std::uint32_t depth = 0;
};

// Matches begins and ends as Chrome's B/E do: an end closes the innermost open slice. An end with
// nothing open (its begin fell out of a keep-last window) is skipped; slices still open at the
// end are closed at the thread's last timestamp.
std::vector<Slice> slices(const ThreadTrace& thread);

struct FrameTotal {
  std::string name;
  std::int64_t self_ns = 0;
  std::int64_t total_ns = 0;  // inclusive, counted once when the frame recurses
  std::uint64_t calls = 0;
};

struct ThreadTotal {
  std::uint32_t tid = 0;
  std::string name;
  std::uint64_t events = 0;
  std::uint64_t slices = 0;
  std::int64_t busy_ns = 0;  // the sum of top-level slice durations
  std::uint64_t dropped = 0;
  std::uint64_t evicted = 0;
};

struct TraceSummary {
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::vector<FrameTotal> frames;  // by self time, largest first
  std::vector<ThreadTotal> threads;
};

TraceSummary summarize(const Trace& trace);

}  // namespace tfdebug::profile
