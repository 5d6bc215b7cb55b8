// `tfdebug demo --profile`: profiles the demo's training steps after a warm-up with
// tfdebug::torch::Profiler, prints the per-layer table, the top ops with recommendations and the
// memory peak, and writes the trace and profile files (docs/profiling.md). `tfdebug demo
// --trace-window K` runs the Session and a step-windowed Profiler together.
#pragma once

#include <cstdint>
#include <string>

#include "demo_model.hpp"
#include "tfdebug/session/session.hpp"

namespace tfdebug::cli {

// A loss as the demo prints it: "0.1234", and "nan" / "inf" / "-inf" (printf's "%.4f" spells a
// NaN "-nan" on glibc). Defined in cmd_demo.cpp.
std::string loss_text(double loss);

// Ops listed per layer in profile.json and the printed table.
inline constexpr std::size_t kTopOps = 8;

struct DemoProfileOptions {
  std::int64_t warmup = 3;
  std::int64_t steps = 5;
  std::size_t top = kTopOps;
  std::string out;  // directory for trace.json, trace.perfetto-trace, profile.speedscope.json, flame.svg,
                    // profile.json
};

struct DemoTraceWindowOptions {
  std::int64_t before = 3;  // steps kept before the first error's step
  std::int64_t after = 1;   // and after it
  std::int64_t every = 20;  // print the loss every N steps (0: never)
  std::string out;          // directory for trace.json, trace.perfetto-trace, profile.speedscope.json,
                            // profile.json
};

// `tfdebug demo --trace-window K`: trains with the adapter attached to `session` and a step-windowed
// Profiler whose AnomalyWindowSink marks the session's first error-level finding; writes the trace of
// the steps around it (or of the last K steps when there was none).
void train_with_trace_window(const demo::DemoConfig& config, demo::DemoTrainer& trainer, Session& session,
                             const DemoTraceWindowOptions& options);

void run_demo_profile(const demo::DemoConfig& config, demo::DemoTrainer& trainer,
                      const DemoProfileOptions& options);

}  // namespace tfdebug::cli
