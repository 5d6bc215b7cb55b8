// Starting and stopping a recording of zones (tfdebug/profile/zone.hpp). A background thread
// drains every thread's ring buffer while the recording runs; stop() returns the trace.
//
//   tfdebug::profile::RecordingOptions options;
//   options.keep_last = 100'000;  // per thread; 0 keeps everything
//   tfdebug::profile::start(options);
//   tfdebug::profile::set_thread_name("main");
//   run_training();               // TFDEBUG_ZONE(...) everywhere
//   tfdebug::profile::Trace trace = tfdebug::profile::stop();
//   std::ofstream out("trace.json");
//   tfdebug::write_chrome_trace(trace, out);  // tfdebug/export/chrome_trace.hpp
//
// One recording at a time per process.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tfdebug/profile/trace.hpp"

namespace tfdebug::profile {

struct RecordingOptions {
  // Records per thread ring buffer (rounded up to a power of two; 32 bytes each). A thread
  // registered by an earlier recording keeps its buffer.
  std::size_t buffer_records = std::size_t{1} << 16;
  // Keep only the last N events of each thread (a ring); 0 keeps every event.
  std::size_t keep_last = 0;
  // How long the collector sleeps between passes over the buffers.
  std::chrono::microseconds drain_interval{200};
};

struct RecordingStats {
  std::uint64_t collected = 0;  // events drained from the buffers
  std::uint64_t dropped = 0;    // lost on full buffers
  std::uint64_t evicted = 0;    // discarded by keep_last
  std::uint64_t threads = 0;
};

// Starts a recording. Throws tfdebug::Error if one is already running.
void start(const RecordingOptions& options = {});

// Stops the recording, drains what is left and returns the trace. Throws tfdebug::Error if none
// is running.
Trace stop();

// Counts so far (while recording) or of the last recording.
RecordingStats stats();

// Names the calling thread in traces (copied; call it off the hot path). Registers the thread's
// buffer if needed, so a worker can call it first and never allocate while recording.
void set_thread_name(std::string_view name);

}  // namespace tfdebug::profile
