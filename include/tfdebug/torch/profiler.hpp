// Profile a LibTorch model's ops: per op and per module wall time (self and inclusive), call
// counts, input shapes, phase (forward, backward, optimizer), FLOPs (tfdebug/profile/flops.hpp),
// bytes allocated and the live-bytes timeline from c10's allocator reports, and a bounded trace
// that every exporter in tfdebug/export writes (Chrome JSON, Perfetto, speedscope, flame graph).
//
//   tfdebug::torch::Profiler profiler(*model);       // starts: registers its op callback
//   for (int step = 0; step < 5; ++step) {
//     profiler.step_begin(step);
//     train_step();                                  // forward, backward, optimizer.step()
//     profiler.step_end(step);
//   }
//   tfdebug::profile::OpProfile profile = profiler.stop();   // also on destruction
//   tfdebug::write_chrome_trace(profile.trace, out);
//
// How ops are found (docs/profiling.md): one global at::RecordFunction callback (scopes FUNCTION
// and BACKWARD_FUNCTION, with inputs for the shapes), separate from tfdebug::torch::attach's.
// Module paths come from the parameters an op reads; an op that reads none takes the module of
// the op it runs inside, else the parent of the last module whose parameters were read (the code
// between layers runs in their parent's forward); backward ops take the module of the forward op
// that made their autograd node (the sequence number both share). Memory: while the profiler runs, the
// constructing thread carries a c10::MemoryReportingInfoBase in its ThreadLocalDebugInfo
// (DebugInfoKind::PROFILER_STATE, as LibTorch's own profiler does), so c10's CPU allocator
// reports every allocation and free made on it (and on autograd threads, which inherit it).
//
// Bounded memory: aggregate tables (ProfilerOptions::max_rows rows per thread, then an "(other)"
// row), a ring of the last trace_events trace events per thread, at most timeline_points points
// of the memory timeline. Only one Profiler may run at a time; construct and stop it on the
// training thread, with no step running on another thread.
//
// Step window (ProfilerOptions::keep_steps_before > 0): the trace keeps whole steps, not the last
// N events: the last keep_steps_before steps, or, once mark_anomaly(S, what) was called, steps
// S - keep_steps_before .. S + keep_steps_after with an instant event "tfdebug: <what>" where the
// anomaly was marked; after step S + keep_steps_after no more trace events are recorded (the
// aggregate tables go on). Step slices are then named "step <n>". The ring (trace_events per
// thread) still bounds memory: a window step whose events no longer fit is dropped whole and
// counted in OpProfile::trace_evicted. AnomalyWindowSink (tfdebug/torch/anomaly_window.hpp)
// marks the first error-level finding of a tfdebug::Session.
//
//   auto profiler = std::make_shared<tfdebug::torch::Profiler>(
//       *model, tfdebug::torch::ProfilerOptions{.keep_steps_before = 3, .keep_steps_after = 1});
//   session.add_sink(std::make_shared<tfdebug::torch::AnomalyWindowSink>(profiler));
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "tfdebug/profile/op_profile.hpp"

namespace torch::nn {
class Module;
}  // namespace torch::nn

namespace tfdebug::torch {

struct ProfilerOptions {
  std::size_t trace_events = std::size_t{1} << 18;  // per thread ring (the last N events are kept)
  std::size_t max_rows = 8192;                      // aggregate rows per thread
  std::size_t timeline_points = 4096;               // memory timeline (halved in resolution when full)
  bool memory = true;                               // allocator reports, RSS, mallinfo2
  double samples_per_step = 0;                      // for throughput (0: not reported)
  double tokens_per_step = 0;
  // Step window (see above); 0: off, the trace is the last trace_events events of each thread.
  std::int64_t keep_steps_before = 0;
  std::int64_t keep_steps_after = 0;
};

namespace detail {
struct ProfilerState;
}  // namespace detail

class Profiler {
 public:
  // Starts profiling `module`'s ops. Throws tfdebug::Error when another Profiler is running.
  explicit Profiler(::torch::nn::Module& module, const ProfilerOptions& options = {});
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // Step markers: times each step, resets the phase (forward until backward starts), closes the
  // step's trace slices, records RSS and the allocations still alive.
  void step_begin(std::int64_t step);
  void step_end(std::int64_t step);

  // Stops (removes the callback and the memory reporter) and returns what was recorded; only ops
  // inside step_begin/step_end count. Throws tfdebug::Error when already stopped.
  profile::OpProfile stop();

  // Step window: the anomaly that the trace keeps the steps around (the first call counts; later
  // ones, and calls without a window or after stop, return false). `what` names it in the trace
  // ("nonfinite in blocks.1.mlp aten::log"). Safe from any thread while the profiler runs (a
  // Session's sinks call it from observing threads), but not concurrently with stop().
  bool mark_anomaly(std::int64_t step, const std::string& what);

  bool running() const noexcept { return state_ != nullptr; }

 private:
  std::unique_ptr<detail::ProfilerState> state_;
};

}  // namespace tfdebug::torch
