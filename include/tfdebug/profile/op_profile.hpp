// The result of profiling a model's ops: per-op and per-module time, FLOPs and allocations, the
// memory timeline, and the bounded trace of the profiled steps. tfdebug::torch::Profiler fills
// it from LibTorch; everything here is free of LibTorch, so the analysis (bottlenecks(),
// module totals) and `tfdebug regress` work on a profile.json alone.
//
//   tfdebug::profile::OpProfile p = profiler.stop();
//   for (const auto& b : tfdebug::profile::bottlenecks(p, 5)) std::puts(b.text.c_str());
//   tfdebug::write_chrome_trace(p.trace, out);   // every trace exporter works on p.trace
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tfdebug/core/phase.hpp"
#include "tfdebug/profile/trace.hpp"

namespace tfdebug::profile {

// One row per (op, module, phase, input shapes).
struct OpStats {
  std::string op;      // "aten::addmm"
  std::string module;  // "blocks.0.mlp.fc1"; "" when no module was found
  Phase phase = Phase::forward;
  std::string shapes;  // the tensor inputs' shapes, "[512, 32], [32, 64]"
  std::uint64_t calls = 0;
  std::int64_t self_ns = 0;   // minus the time of the ops it called
  std::int64_t total_ns = 0;  // inclusive
  // FLOPs counted for this row (Note [Leaf FLOPs] in src/torch/profiler.cpp): the op's own formula
  // when none of the ops it called had one; 0 for ops with a formula whose callees counted theirs.
  double flops = 0;
  bool formula = false;           // the op has a formula (tfdebug/profile/flops.hpp)
  std::uint64_t alloc_bytes = 0;  // bytes allocated while it was the innermost op
  std::uint64_t allocations = 0;
};

struct ModuleStats {
  std::string module;         // "" is the model itself (ops with no module)
  std::int64_t self_ns = 0;   // self time of the ops attributed to exactly this module
  std::int64_t total_ns = 0;  // including its submodules ("blocks.0" includes "blocks.0.mlp")
  double self_flops = 0;
  double total_flops = 0;
  std::uint64_t calls = 0;  // op calls attributed to exactly this module
};

// An op (all modules, phases and shapes together) whose calls had no formula and no callee with
// one: its FLOPs are unknown, not 0.
struct UncountedOp {
  std::string op;
  std::uint64_t calls = 0;
  std::int64_t self_ns = 0;
};

// Self time per profiled step of one op (all modules, phases and shapes), for `tfdebug regress`.
struct OpSeries {
  std::string op;
  std::vector<double> step_self_ns;
};

struct MemoryPoint {
  std::int64_t ts_ns = 0;
  std::int64_t live_bytes = 0;
};

// Allocations made in a step and still alive at its end, grouped by where they were made.
struct AliveAllocation {
  std::int64_t step = 0;
  std::string op;
  std::string module;
  std::uint64_t count = 0;
  std::int64_t bytes = 0;
};

struct MemoryProfile {
  bool reported = false;  // the allocator reported to us (false: no allocation seen)
  std::uint64_t allocations = 0;
  std::uint64_t frees = 0;
  std::int64_t allocated_bytes = 0;  // the sum of all allocation sizes
  std::int64_t peak_bytes = 0;       // live bytes allocated since the profiler started
  std::int64_t peak_ts_ns = 0;
  std::int64_t peak_step = -1;
  std::string peak_op;
  std::string peak_module;
  Phase peak_phase = Phase::forward;
  std::int64_t end_bytes = 0;  // live at stop
  std::vector<MemoryPoint> timeline;
  std::vector<AliveAllocation> alive_at_step_end;  // of every profiled step, largest first
  // The process, from /proc/self/statm and mallinfo2 (-1 where unavailable), at each step's end.
  std::vector<std::int64_t> rss_bytes;
  std::int64_t malloc_in_use_bytes = -1;  // at stop
  std::int64_t malloc_mmap_bytes = -1;
};

// The steps a step-windowed trace holds (tfdebug::torch::ProfilerOptions::keep_steps_before).
struct TraceWindow {
  bool enabled = false;
  std::int64_t first_step = -1;  // the steps whose events the trace holds (-1: none)
  std::int64_t last_step = -1;
  std::int64_t anomaly_step = -1;  // the step given to mark_anomaly (-1: no anomaly was marked)
  std::string anomaly;             // its description, as in the trace's instant event
};

struct OpProfile {
  std::vector<std::int64_t> step_ns;   // wall time of each profiled step
  std::vector<OpStats> ops;            // by self time, largest first
  std::vector<ModuleStats> modules;    // by total time, largest first
  std::vector<UncountedOp> uncounted;  // by self time, largest first
  std::vector<OpSeries> series;
  MemoryProfile memory;
  std::uint64_t ops_seen = 0;
  std::uint64_t rows_overflowed = 0;  // calls folded into an "(other)" row once the tables were full
  std::uint64_t trace_evicted = 0;    // events dropped from the bounded trace ring
  std::uint64_t callback_failures =
      0;                        // callbacks that threw (out of memory): their op is missing or partial
  double samples_per_step = 0;  // given by the caller (0: unknown)
  double tokens_per_step = 0;
  Trace trace;
  TraceWindow window;

  std::int64_t total_step_ns() const;
  double total_flops() const;
};

// Sums op rows into per-module rows (self, and total over each module's subtree).
std::vector<ModuleStats> module_totals(const std::vector<OpStats>& ops);

struct Bottleneck {
  const OpStats* row = nullptr;
  double share = 0;        // of the profiled steps' wall time
  double flops_per_s = 0;  // 0 when the op has no FLOPs counted
  std::string text;        // one line with a concrete recommendation
};

// The k rows with the most self time, each with a recommendation drawn from what the row shows
// (matrix sizes, call counts, data movement, the optimizer's per-parameter ops, no formula).
std::vector<Bottleneck> bottlenecks(const OpProfile& profile, std::size_t k);

}  // namespace tfdebug::profile
