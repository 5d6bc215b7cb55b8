// Chrome Trace Event JSON writer and reader (docs/profiling.md, reference formats.md §3).
#include "tfdebug/export/chrome_trace.hpp"

#include <algorithm>
#include <cmath>
#include <istream>
#include <map>
#include <ostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_text.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug {
namespace {

using profile::EventKind;
using profile::Trace;
using profile::TraceEvent;

void write_head(std::ostream& out, const char* ph, std::string_view name, std::uint32_t pid,
                std::uint32_t tid, bool& first) {
  out << (first ? "\n" : ",\n") << "{\"ph\":\"" << ph << "\",\"name\":";
  first = false;
  detail::write_json_string(out, name);
  out << ",\"pid\":" << pid << ",\"tid\":" << tid;
}

struct Interval {
  std::int64_t start = 0;
  std::int64_t end = 0;
  std::uint32_t name = 0;
  std::size_t order = 0;
};

struct PendingThread {
  std::string name;
  std::vector<Interval> intervals;
  std::vector<TraceEvent> points;
  std::vector<Interval> open;  // B without E yet
  std::uint64_t dropped = 0;
  std::uint64_t evicted = 0;
  std::int64_t last_ts = 0;
};

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw Error(source + ": not a Chrome trace we can read: " + what);
}

std::int64_t micros_to_ns(const nlohmann::json& value, const std::string& source, const char* field) {
  if (!value.is_number()) fail(source, std::string("'") + field + "' is not a number");
  const double us = value.get<double>();
  if (!std::isfinite(us) || std::fabs(us) > 9.0e12)
    fail(source, std::string("'") + field + "' is out of range");
  return std::llround(us * 1000.0);
}

// Re-creates properly nested begin/end events from intervals (X events and matched B/E), then
// merges the instants and counters in by time.
std::vector<TraceEvent> events_of(PendingThread& thread) {
  std::sort(thread.intervals.begin(), thread.intervals.end(), [](const Interval& a, const Interval& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.order < b.order;
  });
  std::vector<TraceEvent> nested;
  std::vector<Interval> stack;
  auto close_until = [&](std::int64_t t) {
    while (!stack.empty() && stack.back().end <= t) {
      nested.push_back(TraceEvent{stack.back().end, stack.back().name, EventKind::kEnd, 0.0});
      stack.pop_back();
    }
  };
  for (Interval interval : thread.intervals) {
    close_until(interval.start);
    // A slice that overlaps its parent without nesting is cut at the parent's end.
    if (!stack.empty()) interval.end = std::min(interval.end, stack.back().end);
    nested.push_back(TraceEvent{interval.start, interval.name, EventKind::kBegin, 0.0});
    stack.push_back(interval);
  }
  close_until(INT64_MAX);
  std::stable_sort(thread.points.begin(), thread.points.end(),
                   [](const TraceEvent& a, const TraceEvent& b) { return a.ts_ns < b.ts_ns; });
  std::vector<TraceEvent> merged;
  merged.reserve(nested.size() + thread.points.size());
  std::merge(nested.begin(), nested.end(), thread.points.begin(), thread.points.end(),
             std::back_inserter(merged),
             [](const TraceEvent& a, const TraceEvent& b) { return a.ts_ns < b.ts_ns; });
  return merged;
}

}  // namespace

void write_chrome_trace(const Trace& trace, std::ostream& out) {
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  write_head(out, "M", "process_name", trace.pid, 0, first);
  out << ",\"args\":{\"name\":";
  detail::write_json_string(out, trace.process_name);
  out << "}}";
  for (const profile::ThreadTrace& thread : trace.threads) {
    write_head(out, "M", "thread_name", trace.pid, thread.tid, first);
    out << ",\"args\":{\"name\":";
    detail::write_json_string(out, thread.name);
    out << "}}";
    for (const profile::Slice& slice : profile::slices(thread)) {
      write_head(out, "X", trace.names[slice.name], trace.pid, thread.tid, first);
      out << ",\"ts\":";
      detail::write_us(out, slice.start_ns);
      out << ",\"dur\":";
      detail::write_us(out, slice.end_ns - slice.start_ns);
      out << '}';
    }
    for (const TraceEvent& event : thread.events) {
      if (event.kind == EventKind::kInstant) {
        write_head(out, "i", trace.names[event.name], trace.pid, thread.tid, first);
        out << ",\"s\":\"t\",\"ts\":";
        detail::write_us(out, event.ts_ns);
        out << '}';
      } else if (event.kind == EventKind::kCounter && std::isfinite(event.value)) {
        write_head(out, "C", trace.names[event.name], trace.pid, thread.tid, first);
        out << ",\"ts\":";
        detail::write_us(out, event.ts_ns);
        out << ",\"args\":{\"value\":";
        detail::write_json_number(out, event.value);
        out << "}}";
      }
    }
  }
  out << "\n],\"otherData\":{\"producer\":\"tfdebug\",\"threads\":[";
  for (std::size_t i = 0; i < trace.threads.size(); ++i) {
    const auto& thread = trace.threads[i];
    out << (i == 0 ? "" : ",") << "{\"tid\":" << thread.tid << ",\"dropped\":" << thread.dropped
        << ",\"evicted\":" << thread.evicted << '}';
  }
  out << "]}}\n";
}

profile::Trace read_chrome_trace(std::istream& in, const std::string& source) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    fail(source, std::string("invalid JSON (") + e.what() + ")");
  }
  const nlohmann::json* events = &doc;
  if (doc.is_object()) {
    if (!doc.contains("traceEvents") || !doc["traceEvents"].is_array())
      fail(source, "an object without a \"traceEvents\" array");
    events = &doc["traceEvents"];
  } else if (!doc.is_array()) {
    fail(source, "neither an object nor an array");
  }
  Trace trace;
  std::map<std::uint32_t, PendingThread> threads;
  bool have_pid = false;
  std::size_t order = 0;
  for (const nlohmann::json& event : *events) {
    if (!event.is_object()) fail(source, "an event that is not an object");
    if (!event.contains("ph") || !event["ph"].is_string()) fail(source, "an event without \"ph\"");
    const std::string ph = event["ph"].get<std::string>();
    const std::string name = event.contains("name") && event["name"].is_string()
                                 ? event["name"].get<std::string>()
                                 : std::string();
    if (event.contains("pid") && event["pid"].is_number_integer() && !have_pid) {
      trace.pid = event["pid"].get<std::uint32_t>();
      have_pid = true;
    }
    if (ph == "M" && name == "process_name") {
      if (event.contains("args") && event["args"].contains("name") && event["args"]["name"].is_string())
        trace.process_name = event["args"]["name"].get<std::string>();
      continue;
    }
    if (ph != "X" && ph != "B" && ph != "E" && ph != "i" && ph != "I" && ph != "C" && ph != "M") continue;
    if (!event.contains("tid") || !event["tid"].is_number_integer())
      fail(source, "a \"" + ph + "\" event without an integer \"tid\"");
    const auto tid = event["tid"].get<std::uint32_t>();
    PendingThread& thread = threads[tid];
    if (ph == "M") {
      if (name == "thread_name" && event.contains("args") && event["args"].contains("name") &&
          event["args"]["name"].is_string())
        thread.name = event["args"]["name"].get<std::string>();
      continue;
    }
    if (!event.contains("ts")) fail(source, "a \"" + ph + "\" event without \"ts\"");
    const std::int64_t ts = micros_to_ns(event["ts"], source, "ts");
    thread.last_ts = std::max(thread.last_ts, ts);
    if (ph == "X") {
      if (!event.contains("dur")) fail(source, "an \"X\" event without \"dur\"");
      const std::int64_t dur = micros_to_ns(event["dur"], source, "dur");
      if (dur < 0) fail(source, "an \"X\" event with a negative \"dur\"");
      thread.intervals.push_back(Interval{ts, ts + dur, trace.intern(name), order++});
      thread.last_ts = std::max(thread.last_ts, ts + dur);
    } else if (ph == "B") {
      thread.open.push_back(Interval{ts, ts, trace.intern(name), order++});
    } else if (ph == "E") {
      if (thread.open.empty()) continue;  // its begin is not in the file
      Interval interval = thread.open.back();
      thread.open.pop_back();
      interval.end = std::max(ts, interval.start);
      thread.intervals.push_back(interval);
    } else if (ph == "i" || ph == "I") {
      thread.points.push_back(TraceEvent{ts, trace.intern(name), EventKind::kInstant, 0.0});
    } else {  // C
      if (!event.contains("args") || !event["args"].is_object())
        fail(source, "a \"C\" event without an \"args\" object");
      const nlohmann::json& args = event["args"];
      for (auto it = args.begin(); it != args.end(); ++it) {
        if (!it.value().is_number()) fail(source, "counter \"" + name + "\" has a non-numeric value");
        const std::string series = args.size() == 1 && it.key() == "value" ? name : name + " " + it.key();
        thread.points.push_back(
            TraceEvent{ts, trace.intern(series), EventKind::kCounter, it.value().get<double>()});
      }
    }
  }
  if (doc.is_object() && doc.contains("otherData") && doc["otherData"].is_object() &&
      doc["otherData"].contains("threads") && doc["otherData"]["threads"].is_array()) {
    for (const nlohmann::json& entry : doc["otherData"]["threads"]) {
      if (!entry.is_object() || !entry.contains("tid") || !entry["tid"].is_number_integer()) continue;
      auto it = threads.find(entry["tid"].get<std::uint32_t>());
      if (it == threads.end()) continue;
      if (entry.contains("dropped") && entry["dropped"].is_number_unsigned())
        it->second.dropped = entry["dropped"].get<std::uint64_t>();
      if (entry.contains("evicted") && entry["evicted"].is_number_unsigned())
        it->second.evicted = entry["evicted"].get<std::uint64_t>();
    }
  }
  for (auto& [tid, pending] : threads) {
    for (Interval interval : pending.open) {  // never ended: close at the thread's last time
      interval.end = pending.last_ts;
      pending.intervals.push_back(interval);
    }
    profile::ThreadTrace thread;
    thread.tid = tid;
    thread.name = pending.name.empty() ? "thread " + std::to_string(tid) : pending.name;
    thread.dropped = pending.dropped;
    thread.evicted = pending.evicted;
    thread.events = events_of(pending);
    trace.threads.push_back(std::move(thread));
  }
  return trace;
}

}  // namespace tfdebug
