// What the op profiler learns from LibTorch's CPU allocator.
//
// Note [Memory reports]
// c10's CPU allocator (ProfiledCPUMemoryReporter in LibTorch 1.13) reports an allocation to the
// MemoryReportingInfoBase found in the allocating thread's ThreadLocalDebugInfo under
// DebugInfoKind::PROFILER_STATE when its memoryProfilingEnabled() is true, and a free only when
// the allocation was made while reporting was on. So live bytes are those allocated since the
// profiler started and not yet freed; memory that existed before (the parameters) is not in it.
// The reporter is pushed on the constructing thread and popped by stop() on the same thread.
#include <c10/core/Allocator.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "profiler_state.hpp"

namespace tfdebug::torch::detail {

namespace {

class MemoryReporter : public c10::MemoryReportingInfoBase {
 public:
  explicit MemoryReporter(ProfilerState* state) : state_(state) {}
  void reportMemoryUsage(void* ptr, int64_t alloc_size, int64_t /*total_allocated*/,
                         int64_t /*total_reserved*/, c10::Device device) override {
    if (device.is_cpu() && live_profiler().load(std::memory_order_acquire) == state_)
      state_->on_memory(ptr, alloc_size);
  }
  bool memoryProfilingEnabled() const override { return true; }

 private:
  ProfilerState* state_;
};

}  // namespace

std::shared_ptr<c10::DebugInfoBase> make_memory_reporter(ProfilerState* state) {
  return std::make_shared<MemoryReporter>(state);
}

std::int64_t rss_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long long size = 0;
  long long resident = 0;
  const int got = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  if (got != 2) return -1;
  return resident * ::sysconf(_SC_PAGESIZE);
}

void ProfilerState::on_memory(void* ptr, std::int64_t bytes) {
  ThreadData& t = thread();
  std::uint32_t op = outside_id;
  std::uint32_t module = 0;
  Phase phase = Phase::forward;
  Frame* frame = nullptr;
  for (std::size_t i = t.depth; i > 0; --i) {
    if (!t.frames[i - 1].node) {
      frame = &t.frames[i - 1];
      break;
    }
  }
  if (frame != nullptr) {
    op = frame->op;
    module = frame->module;
    phase = frame->phase;
    if (bytes > 0) {
      frame->alloc_bytes += std::uint64_t(bytes);
      frame->allocations += 1;
    }
  }
  const auto ts_now = ts();
  std::int64_t live_now = 0;
  {
    std::lock_guard<std::mutex> lock(memory_mutex);
    if (bytes > 0) {
      memory.allocations += 1;
      memory.allocated_bytes += bytes;
      live_blocks[ptr] = LiveBlock{bytes, step.load(std::memory_order_relaxed), op, module};
    } else {
      memory.frees += 1;
      live_blocks.erase(ptr);
    }
    memory.reported = true;
    live += bytes;
    live_now = live;
    if (live > memory.peak_bytes) {
      memory.peak_bytes = live;
      memory.peak_ts_ns = ts_now;
      memory.peak_step = in_step.load(std::memory_order_relaxed) ? step.load(std::memory_order_relaxed) : -1;
      peak_op = op;
      peak_module = module;
      peak_phase = phase;
    }
    if (reports++ % timeline_stride == 0) {
      memory.timeline.push_back({ts_now, live});
      if (memory.timeline.size() >= std::max<std::size_t>(2, options.timeline_points)) {
        // Full: keep every other point and sample half as often from now on.
        std::size_t kept = 0;
        for (std::size_t i = 0; i < memory.timeline.size(); i += 2)
          memory.timeline[kept++] = memory.timeline[i];
        memory.timeline.resize(kept);
        timeline_stride *= 2;
      }
    }
  }
  t.emit(ts_now, live_id, profile::EventKind::kCounter, double(live_now));
}

}  // namespace tfdebug::torch::detail
