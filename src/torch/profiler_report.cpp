// Profiler::stop: what the callbacks gathered, as a profile::OpProfile (rows, modules, series,
// memory, the trace).
//
// Note [Step window]
// With ProfilerOptions::keep_steps_before > 0, each thread's ring also remembers where each step
// began in it (the ring's write count when step_begin ran; a thread first seen inside a step
// begins there at 0). step_begin runs on the training thread while no op runs elsewhere, so it
// sets every thread's boundary and recording flag itself. stop() keeps, per thread, the events
// from the first window step whose beginning is still in the ring up to the beginning of the
// first step after the window; everything else counts as evicted (discarded by the window, as
// with the zones' keep_last). After mark_anomaly(S), the first step_begin past S + keep_steps_after
// turns recording off on every thread, so the window's steps stay in the ring however long the run
// goes on. The anomaly's instant event is written to the ring of the thread that marked it, so it
// sits in time order among that thread's events.
#include <ATen/record_function.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "profiler_state.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::torch {

namespace {

using detail::ProfilerState;
using detail::ThreadData;

// Note [Step window]: the part [begin, end) of a thread's written events that the window keeps,
// and the first and last step in it (-1 when none).
struct Kept {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::int64_t first_step = -1;
  std::int64_t last_step = -1;
};

Kept window_part(const ThreadData& t, std::int64_t first, std::int64_t last) {
  Kept k;
  const std::uint64_t oldest = t.written - std::min<std::uint64_t>(t.written, t.ring.size());
  for (std::size_t i = 0; i < t.boundaries.size(); ++i) {
    const auto [step, index] = t.boundaries[i];
    const std::uint64_t next = i + 1 < t.boundaries.size() ? t.boundaries[i + 1].second : t.written;
    if (step < first || step > last || index < oldest) continue;  // outside, or no longer whole
    if (k.first_step < 0) {
      k.first_step = step;
      k.begin = index;
    }
    k.last_step = step;
    k.end = next;
  }
  return k;
}

// Every thread's rows, series and uncounted ops, merged (the same key across threads: one row).
struct Merged {
  std::unordered_map<detail::RowKey, detail::Row, detail::RowKeyHash> rows;
  std::map<std::uint64_t, std::int64_t> series;  // (step << 20 | op) -> self ns
  std::unordered_map<std::uint32_t, detail::Uncounted> uncounted;
  std::int64_t min_step = -1;
};

Merged merge_threads(const ProfilerState& s, profile::OpProfile& out) {
  Merged m;
  for (const auto& t : s.threads) {
    out.ops_seen += t->ops_seen;
    out.rows_overflowed += t->rows_overflowed;
    for (const auto& [key, row] : t->rows) {
      detail::Row& r = m.rows[key];
      r.calls += row.calls;
      r.self_ns += row.self_ns;
      r.total_ns += row.total_ns;
      r.flops += row.flops;
      r.formula = r.formula || row.formula;
      r.alloc_bytes += row.alloc_bytes;
      r.allocations += row.allocations;
    }
    for (const auto& [key, ns] : t->series) {
      m.series[key] += ns;
      const auto step = std::int64_t(key >> 20);
      m.min_step = m.min_step < 0 ? step : std::min(m.min_step, step);
    }
    for (const auto& [op, u] : t->uncounted) {
      auto& merged = m.uncounted[op];
      merged.calls += u.calls;
      merged.self_ns += u.self_ns;
    }
  }
  return m;
}

// The rows, slowest first; the modules' totals; the uncounted ops.
void add_rows(const ProfilerState& s, const Merged& m, profile::OpProfile& out) {
  for (const auto& [key, row] : m.rows) {
    profile::OpStats o;
    o.op = s.name(key.op);
    o.module = s.name(key.module);
    o.phase = key.phase;
    o.shapes = s.name(key.shapes);
    o.calls = row.calls;
    o.self_ns = row.self_ns;
    o.total_ns = row.total_ns;
    o.flops = row.flops;
    o.formula = row.formula;
    o.alloc_bytes = row.alloc_bytes;
    o.allocations = row.allocations;
    out.ops.push_back(std::move(o));
  }
  std::sort(out.ops.begin(), out.ops.end(), [](const profile::OpStats& a, const profile::OpStats& b) {
    return a.self_ns != b.self_ns
               ? a.self_ns > b.self_ns
               : std::tie(a.op, a.module, a.phase, a.shapes) < std::tie(b.op, b.module, b.phase, b.shapes);
  });
  out.modules = profile::module_totals(out.ops);
  for (const auto& [op, u] : m.uncounted) out.uncounted.push_back({s.name(op), u.calls, u.self_ns});
  std::sort(
      out.uncounted.begin(), out.uncounted.end(),
      [](const profile::UncountedOp& a, const profile::UncountedOp& b) { return a.self_ns > b.self_ns; });
}

// Per-op self time per step: every op gets a value for every profiled step (0 where absent).
void add_series(const ProfilerState& s, const Merged& m, profile::OpProfile& out) {
  std::map<std::uint32_t, std::size_t> series_index;
  const std::size_t steps = out.step_ns.size();
  for (const auto& [key, ns] : m.series) {
    const auto op = std::uint32_t(key & 0xFFFFFU);
    auto [it, added] = series_index.emplace(op, out.series.size());
    if (added) out.series.push_back({s.name(op), std::vector<double>(steps, 0.0)});
    const auto index = std::size_t(std::int64_t(key >> 20) - m.min_step);
    if (index < steps) out.series[it->second].step_self_ns[index] += double(ns);
  }
}

void add_memory(ProfilerState& s, profile::OpProfile& out) {
  {
    std::lock_guard<std::mutex> lock(s.memory_mutex);
    out.memory = std::move(s.memory);
    out.memory.end_bytes = s.live;
    out.memory.peak_op = s.name(s.peak_op);
    out.memory.peak_module = s.name(s.peak_module);
    out.memory.peak_phase = s.peak_phase;
    std::stable_sort(out.memory.alive_at_step_end.begin(), out.memory.alive_at_step_end.end(),
                     [](const profile::AliveAllocation& a, const profile::AliveAllocation& b) {
                       return a.bytes > b.bytes;
                     });
  }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  if (s.options.memory) {
    const struct mallinfo2 info = ::mallinfo2();
    out.memory.malloc_in_use_bytes = std::int64_t(info.uordblks);
    out.memory.malloc_mmap_bytes = std::int64_t(info.hblkhd);
  }
#endif
}

// The trace: each thread's ring, oldest first (Note [Step window]: the window's part of it).
void add_trace(const ProfilerState& s, profile::OpProfile& out) {
  auto& trace = out.trace;
  trace.pid = std::uint32_t(::getpid());
  trace.process_name = "tfdebug torch profile";
  std::int64_t first = 0;
  std::int64_t last = -1;
  if (s.window) {
    out.window.enabled = true;
    out.window.anomaly_step = s.anomaly_step;
    out.window.anomaly = s.anomaly;
    if (s.anomaly_step >= 0) {
      first = s.anomaly_step - s.options.keep_steps_before;
      last = s.anomaly_step + s.options.keep_steps_after;
    } else {
      first = s.last_begun - s.options.keep_steps_before + 1;
      last = s.last_begun;
    }
  }
  std::vector<std::uint32_t> trace_name(std::size_t(s.names.size()) + 1, ~0U);
  for (const auto& t : s.threads) {
    profile::ThreadTrace thread;
    thread.tid = t->tid;
    thread.name = t->name;
    const std::size_t capacity = t->ring.size();
    std::uint64_t begin = t->written - std::min<std::uint64_t>(t->written, capacity);
    std::uint64_t end = t->written;
    if (s.window) {
      const Kept kept = window_part(*t, first, last);
      begin = kept.begin;
      end = kept.end;
      if (t.get() == s.owner) {
        out.window.first_step = kept.first_step;
        out.window.last_step = kept.last_step;
      }
    }
    thread.evicted = t->written - (end - begin);
    out.trace_evicted += thread.evicted;
    thread.events.reserve(end - begin);
    for (std::uint64_t i = begin; i < end; ++i) {
      const detail::Event& e = t->ring[i % capacity];
      if (e.name >= trace_name.size()) trace_name.resize(std::size_t(e.name) + 1, ~0U);
      if (trace_name[e.name] == ~0U) trace_name[e.name] = trace.intern(s.name(e.name));
      thread.events.push_back({e.ts, trace_name[e.name], e.kind, e.value});
    }
    if (!thread.events.empty()) trace.threads.push_back(std::move(thread));
  }
  if (out.window.enabled && out.window.first_step >= 0) {
    trace.process_name +=
        ": steps " + std::to_string(out.window.first_step) + "-" + std::to_string(out.window.last_step);
    if (out.window.anomaly_step >= 0)
      trace.process_name +=
          " around step " + std::to_string(out.window.anomaly_step) + " (" + out.window.anomaly + ")";
  }
}

}  // namespace

profile::OpProfile Profiler::stop() {
  if (!state_) throw Error("tfdebug::torch::Profiler: stop called twice");
  auto& s = *state_;
  at::removeCallback(*s.callback);
  if (s.reporter) {
    try {
      c10::ThreadLocalDebugInfo::_pop(c10::DebugInfoKind::PROFILER_STATE);
    } catch (const std::exception&) {
      // Another PROFILER_STATE was pushed after ours and is still there: leave it.
    }
  }
  detail::live_profiler().store(nullptr, std::memory_order_release);
  profile::OpProfile out;
  out.step_ns = s.step_ns;
  out.samples_per_step = s.options.samples_per_step;
  out.tokens_per_step = s.options.tokens_per_step;
  out.callback_failures = s.failures.load();
  const Merged merged = merge_threads(s, out);
  add_rows(s, merged, out);
  add_series(s, merged, out);
  add_memory(s, out);
  add_trace(s, out);
  state_.reset();
  return out;
}

}  // namespace tfdebug::torch
