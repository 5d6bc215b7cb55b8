// Folded stacks and speedscope JSON (docs/profiling.md, reference formats.md §4).
#include "tfdebug/export/flame_graph.hpp"

#include <algorithm>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "json_text.hpp"

namespace tfdebug {
namespace {

// Frames may hold spaces but not ';' (the separator) or line breaks.
std::string folded_frame(std::string_view name) {
  std::string frame(name);
  std::replace(frame.begin(), frame.end(), ';', ':');
  std::replace(frame.begin(), frame.end(), '\n', ' ');
  std::replace(frame.begin(), frame.end(), '\r', ' ');
  return frame.empty() ? std::string("?") : frame;
}

}  // namespace

void write_folded_stacks(const profile::Trace& trace, std::ostream& out) {
  std::map<std::string, std::int64_t> self_by_stack;
  for (const profile::ThreadTrace& thread : trace.threads) {
    const std::vector<profile::Slice> all = profile::slices(thread);
    std::vector<std::string> stacks(all.size());
    const std::string root = folded_frame(thread.name);
    for (std::size_t i = 0; i < all.size(); ++i) {
      const profile::Slice& slice = all[i];
      // Parents come before children, so the parent's stack is already built.
      const std::string& parent = slice.parent < 0 ? root : stacks[static_cast<std::size_t>(slice.parent)];
      stacks[i] = parent + ";" + folded_frame(trace.names[slice.name]);
      self_by_stack[stacks[i]] += slice.self_ns;
    }
  }
  for (const auto& [stack, self_ns] : self_by_stack)
    if (self_ns > 0) out << stack << ' ' << self_ns << '\n';
}

void write_speedscope(const profile::Trace& trace, std::ostream& out) {
  // Frames are the names that zones use, in first-use order.
  std::vector<std::int64_t> frame_of(trace.names.size(), -1);
  std::vector<std::uint32_t> frames;
  std::vector<std::vector<profile::Slice>> per_thread;
  for (const profile::ThreadTrace& thread : trace.threads) {
    per_thread.push_back(profile::slices(thread));
    for (const profile::Slice& slice : per_thread.back()) {
      if (frame_of[slice.name] < 0) {
        frame_of[slice.name] = static_cast<std::int64_t>(frames.size());
        frames.push_back(slice.name);
      }
    }
  }
  out << "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"version\":\"0.0.1\","
         "\"name\":";
  detail::write_json_string(out, trace.process_name.empty() ? "tfdebug trace" : trace.process_name);
  out << ",\"exporter\":\"tfdebug\",\"activeProfileIndex\":0,\"shared\":{\"frames\":[";
  for (std::size_t i = 0; i < frames.size(); ++i) {
    out << (i == 0 ? "" : ",") << "{\"name\":";
    detail::write_json_string(out, trace.names[frames[i]]);
    out << '}';
  }
  out << "]},\"profiles\":[";
  for (std::size_t t = 0; t < trace.threads.size(); ++t) {
    const profile::ThreadTrace& thread = trace.threads[t];
    const std::vector<profile::Slice>& all = per_thread[t];
    const std::int64_t start = thread.events.empty() ? 0 : thread.events.front().ts_ns;
    const std::int64_t end = thread.events.empty() ? 0 : thread.events.back().ts_ns;
    out << (t == 0 ? "\n" : ",\n") << "{\"type\":\"evented\",\"name\":";
    detail::write_json_string(out, thread.name);
    out << ",\"unit\":\"nanoseconds\",\"startValue\":" << start << ",\"endValue\":" << end << ",\"events\":[";
    bool first = true;
    auto emit = [&](char type, const profile::Slice& slice, std::int64_t at) {
      out << (first ? "" : ",") << "{\"type\":\"" << type << "\",\"frame\":" << frame_of[slice.name]
          << ",\"at\":" << at << '}';
      first = false;
    };
    std::vector<std::int32_t> open;
    for (std::size_t i = 0; i < all.size(); ++i) {
      while (!open.empty() && open.back() != all[i].parent) {
        const profile::Slice& done = all[static_cast<std::size_t>(open.back())];
        emit('C', done, done.end_ns);
        open.pop_back();
      }
      emit('O', all[i], all[i].start_ns);
      open.push_back(static_cast<std::int32_t>(i));
    }
    while (!open.empty()) {
      const profile::Slice& done = all[static_cast<std::size_t>(open.back())];
      emit('C', done, done.end_ns);
      open.pop_back();
    }
    out << "]}";
  }
  out << "\n]}\n";
}

}  // namespace tfdebug
