// `tfdebug demo --profile`: profiles the demo's training steps after a warm-up with
// tfdebug::torch::Profiler, prints the per-layer table, the top ops with recommendations and the
// memory peak, and writes the trace and profile files (docs/profiling.md).
#pragma once

#include <cstdint>
#include <string>

#include "demo_model.hpp"

namespace tfdebug::cli {

struct DemoProfileOptions {
  std::int64_t warmup = 3;
  std::int64_t steps = 5;
  std::size_t top = 8;
  std::string out;  // directory for trace.json, trace.perfetto-trace, profile.speedscope.json, flame.svg,
                    // profile.json
};

void run_demo_profile(const demo::DemoConfig& config, demo::DemoTrainer& trainer,
                      const DemoProfileOptions& options);

}  // namespace tfdebug::cli
