// The trace model: interning, begin/end matching and the summary behind `tfdebug trace`.
#include "tfdebug/profile/trace.hpp"

#include <algorithm>
#include <map>

namespace tfdebug::profile {

std::uint32_t Trace::intern(std::string_view name) {
  if (index_.size() != names.size()) {  // names was filled directly: index it first
    index_.clear();
    for (std::uint32_t i = 0; i < names.size(); ++i) index_.try_emplace(names[i], i);
  }
  auto [it, inserted] = index_.try_emplace(std::string(name), static_cast<std::uint32_t>(names.size()));
  if (inserted) names.emplace_back(name);
  return it->second;
}

std::vector<Slice> slices(const ThreadTrace& thread) {
  std::vector<Slice> out;
  std::vector<std::int32_t> open;
  for (const TraceEvent& event : thread.events) {
    if (event.kind == EventKind::kBegin) {
      Slice slice;
      slice.name = event.name;
      slice.start_ns = event.ts_ns;
      slice.parent = open.empty() ? -1 : open.back();
      slice.depth = static_cast<std::uint32_t>(open.size());
      open.push_back(static_cast<std::int32_t>(out.size()));
      out.push_back(slice);
    } else if (event.kind == EventKind::kEnd && !open.empty()) {
      out[static_cast<std::size_t>(open.back())].end_ns = event.ts_ns;
      open.pop_back();
    }
  }
  const std::int64_t last = thread.events.empty() ? 0 : thread.events.back().ts_ns;
  for (const std::int32_t index : open) out[static_cast<std::size_t>(index)].end_ns = last;
  for (Slice& slice : out) slice.self_ns = slice.end_ns - slice.start_ns;
  for (const Slice& slice : out) {
    if (slice.parent >= 0)
      out[static_cast<std::size_t>(slice.parent)].self_ns -= slice.end_ns - slice.start_ns;
  }
  return out;
}

TraceSummary summarize(const Trace& trace) {
  TraceSummary summary;
  bool any = false;
  std::map<std::uint32_t, FrameTotal> frames;
  for (const ThreadTrace& thread : trace.threads) {
    ThreadTotal total;
    total.tid = thread.tid;
    total.name = thread.name;
    total.events = thread.events.size();
    total.dropped = thread.dropped;
    total.evicted = thread.evicted;
    if (!thread.events.empty()) {
      summary.start_ns =
          any ? std::min(summary.start_ns, thread.events.front().ts_ns) : thread.events.front().ts_ns;
      summary.end_ns =
          any ? std::max(summary.end_ns, thread.events.back().ts_ns) : thread.events.back().ts_ns;
      any = true;
    }
    const std::vector<Slice> all = slices(thread);
    total.slices = all.size();
    for (std::size_t i = 0; i < all.size(); ++i) {
      const Slice& slice = all[i];
      if (slice.parent < 0) total.busy_ns += slice.end_ns - slice.start_ns;
      FrameTotal& frame = frames[slice.name];
      frame.self_ns += slice.self_ns;
      ++frame.calls;
      bool recursive = false;
      for (std::int32_t p = slice.parent; p >= 0 && !recursive; p = all[static_cast<std::size_t>(p)].parent)
        recursive = all[static_cast<std::size_t>(p)].name == slice.name;
      if (!recursive) frame.total_ns += slice.end_ns - slice.start_ns;
    }
    summary.threads.push_back(std::move(total));
  }
  for (auto& [name, frame] : frames) {
    frame.name = trace.names.at(name);
    summary.frames.push_back(std::move(frame));
  }
  std::stable_sort(summary.frames.begin(), summary.frames.end(),
                   [](const FrameTotal& a, const FrameTotal& b) { return a.self_ns > b.self_ns; });
  return summary;
}

}  // namespace tfdebug::profile
