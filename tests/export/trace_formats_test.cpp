#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

#include "tfdebug/core/error.hpp"
#include "tfdebug/export/chrome_trace.hpp"
#include "tfdebug/export/flame_graph.hpp"

namespace tfdebug {
namespace {

using profile::EventKind;
using profile::Trace;

// Two threads; "main" runs step [1000, 9000) { fwd [2000, 5001) { mm;x [3000, 4000) } } with a
// counter and an instant; "io" runs load [500, 700).
Trace sample() {
  Trace trace;
  trace.pid = 42;
  trace.process_name = "train \"x\"";
  profile::ThreadTrace main;
  main.tid = 7;
  main.name = "main";
  main.dropped = 3;
  auto ev = [&](profile::ThreadTrace& t, std::int64_t ts, const char* name, EventKind kind, double v = 0) {
    t.events.push_back(profile::TraceEvent{ts, trace.intern(name), kind, v});
  };
  ev(main, 1000, "step", EventKind::kBegin);
  ev(main, 1500, "loss", EventKind::kCounter, 2.5);
  ev(main, 2000, "fwd", EventKind::kBegin);
  ev(main, 3000, "mm;x", EventKind::kBegin);
  ev(main, 4000, "mm;x", EventKind::kEnd);
  ev(main, 5001, "fwd", EventKind::kEnd);
  ev(main, 6000, "saved", EventKind::kInstant);
  ev(main, 9000, "step", EventKind::kEnd);
  profile::ThreadTrace io;
  io.tid = 8;
  io.name = "io";
  ev(io, 500, "load", EventKind::kBegin);
  ev(io, 700, "load", EventKind::kEnd);
  trace.threads.push_back(main);
  trace.threads.push_back(io);
  return trace;
}

std::string chrome(const Trace& trace) {
  std::ostringstream out;
  write_chrome_trace(trace, out);
  return out.str();
}

TEST(ChromeTrace, FieldsAreWhatViewersNeed) {
  const nlohmann::json doc = nlohmann::json::parse(chrome(sample()));
  int complete = 0;
  for (const auto& e : doc["traceEvents"]) {
    ASSERT_TRUE(e["pid"].is_number_integer());
    ASSERT_TRUE(e["tid"].is_number_integer());
    if (e["ph"] == "X") {
      ++complete;
      if (e["name"] == "fwd") {
        EXPECT_EQ(e["ts"].get<double>(), 2.0);
        EXPECT_EQ(e["dur"].get<double>(), 3.001);
        EXPECT_EQ(e["tid"], 7);
      }
    }
    if (e["ph"] == "C") {
      EXPECT_EQ(e["args"]["value"].get<double>(), 2.5);
    }
    if (e["ph"] == "i") {
      EXPECT_EQ(e["s"], "t");
    }
    if (e["ph"] == "M" && e["name"] == "process_name") {
      EXPECT_EQ(e["args"]["name"], "train \"x\"");
    }
  }
  EXPECT_EQ(complete, 4);
  EXPECT_EQ(doc["otherData"]["threads"][0]["dropped"], 3);
}

TEST(ChromeTrace, RoundTripKeepsEveryEvent) {
  const Trace original = sample();
  std::istringstream in(chrome(original));
  const Trace back = read_chrome_trace(in, "mem.json");
  EXPECT_EQ(back.pid, 42u);
  EXPECT_EQ(back.process_name, original.process_name);
  ASSERT_EQ(back.threads.size(), 2u);
  // Threads come back ordered by tid: 7 then 8.
  for (std::size_t t = 0; t < 2; ++t) {
    const auto& a = original.threads[t];
    const auto& b = back.threads[t];
    EXPECT_EQ(a.tid, b.tid);
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.dropped, b.dropped);
    ASSERT_EQ(a.events.size(), b.events.size());
    for (std::size_t i = 0; i < a.events.size(); ++i) {
      EXPECT_EQ(a.events[i].ts_ns, b.events[i].ts_ns) << i;
      EXPECT_EQ(a.events[i].kind, b.events[i].kind) << i;
      EXPECT_EQ(original.names[a.events[i].name], back.names[b.events[i].name]) << i;
      EXPECT_EQ(a.events[i].value, b.events[i].value) << i;
    }
  }
  // And writing it again gives the same bytes.
  EXPECT_EQ(chrome(back), chrome(original));
}

// Names from a program may hold any bytes: the writers keep the JSON valid UTF-8, each invalid
// sequence as U+FFFD (Python's decode(errors="replace") of "w\x80x\xe2\x82y\xff" is "w�x�y�"),
// and control characters JSON-escaped.
TEST(ChromeTrace, InvalidUtf8NamesBecomeReplacementCharacters) {
  Trace trace;
  trace.process_name = "p\xff";
  profile::ThreadTrace t;
  t.tid = 1;
  t.name = "t\xc3(";
  t.events.push_back({0, trace.intern("w\x80x\xe2\x82y\xff"), EventKind::kBegin, 0});
  t.events.push_back({10, trace.intern("w\x80x\xe2\x82y\xff"), EventKind::kEnd, 0});
  t.events.push_back({20, trace.intern("a\nb\x1b]0;x\x07"), EventKind::kInstant, 0});
  trace.threads.push_back(t);
  const nlohmann::json doc = nlohmann::json::parse(chrome(trace));  // throws on invalid UTF-8
  std::set<std::string> names;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "M") {
      names.insert(e["args"]["name"].get<std::string>());
    } else {
      names.insert(e["name"].get<std::string>());
    }
  }
  const std::set<std::string> want = {"p\uFFFD", "t\uFFFD(", "w\uFFFDx\uFFFDy\uFFFD", "a\nb\x1b]0;x\x07"};
  EXPECT_EQ(names, want);
  std::ostringstream speedscope;
  write_speedscope(trace, speedscope);
  const nlohmann::json s = nlohmann::json::parse(speedscope.str());
  EXPECT_EQ(s["shared"]["frames"][0]["name"], "w\uFFFDx\uFFFDy\uFFFD");
}

TEST(ChromeTrace, ReadsBeginEndArraysAndMultiSeriesCounters) {
  std::istringstream in(R"([
    {"ph":"B","name":"a","pid":1,"tid":3,"ts":1},
    {"ph":"B","name":"b","pid":1,"tid":3,"ts":2},
    {"ph":"E","pid":1,"tid":3,"ts":3},
    {"ph":"C","name":"mem","pid":1,"tid":3,"ts":2.5,"args":{"heap":10,"rss":20}},
    {"ph":"E","pid":1,"tid":3,"ts":4},
    {"ph":"B","name":"open","pid":1,"tid":3,"ts":5},
    {"ph":"i","name":"tick","pid":1,"tid":3,"ts":6}])");
  const Trace trace = read_chrome_trace(in, "arr.json");
  ASSERT_EQ(trace.threads.size(), 1u);
  const auto all = profile::slices(trace.threads[0]);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(trace.names[all[0].name], "a");
  EXPECT_EQ(all[0].end_ns, 4000);
  EXPECT_EQ(all[1].parent, 0);
  EXPECT_EQ(trace.names[all[2].name], "open");
  EXPECT_EQ(all[2].end_ns, 6000);  // closed at the thread's last timestamp
  int counters = 0;
  for (const auto& e : trace.threads[0].events) {
    if (e.kind != EventKind::kCounter) continue;
    ++counters;
    const std::string& name = trace.names[e.name];
    EXPECT_TRUE((name == "mem heap" && e.value == 10) || (name == "mem rss" && e.value == 20)) << name;
  }
  EXPECT_EQ(counters, 2);
}

TEST(ChromeTrace, BadInputNamesTheFile) {
  const char* bad[] = {"{", "{\"x\":1}", "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":1}]",
                       "[{\"ph\":\"X\",\"name\":\"a\",\"tid\":1,\"ts\":1}]",
                       "[{\"ph\":\"C\",\"name\":\"c\",\"tid\":1,\"ts\":1,\"args\":{\"v\":\"s\"}}]"};
  for (const char* text : bad) {
    std::istringstream in(text);
    try {
      read_chrome_trace(in, "bad.json");
      ADD_FAILURE() << text;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos) << e.what();
    }
  }
}

TEST(FoldedStacks, SelfTimePerStack) {
  std::ostringstream out;
  write_folded_stacks(sample(), out);
  EXPECT_EQ(out.str(),
            "io;load 200\n"
            "main;step 4999\n"
            "main;step;fwd 2001\n"
            "main;step;fwd;mm:x 1000\n");
}

TEST(Speedscope, EventedProfilesAreBalanced) {
  std::ostringstream out;
  write_speedscope(sample(), out);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  EXPECT_EQ(doc["$schema"], "https://www.speedscope.app/file-format-schema.json");
  const auto& frames = doc["shared"]["frames"];
  ASSERT_EQ(frames.size(), 4u);
  ASSERT_EQ(doc["profiles"].size(), 2u);
  const auto& main = doc["profiles"][0];
  EXPECT_EQ(main["type"], "evented");
  EXPECT_EQ(main["unit"], "nanoseconds");
  EXPECT_EQ(main["startValue"], 1000);
  EXPECT_EQ(main["endValue"], 9000);
  std::vector<std::int64_t> stack;
  std::int64_t last = 0;
  std::string sequence;
  for (const auto& e : main["events"]) {
    const std::int64_t at = e["at"];
    EXPECT_GE(at, last);
    last = at;
    const std::string name = frames[e["frame"].get<std::size_t>()]["name"];
    if (e["type"] == "O") {
      stack.push_back(e["frame"]);
    } else {
      ASSERT_FALSE(stack.empty());
      EXPECT_EQ(stack.back(), e["frame"].get<std::int64_t>());
      stack.pop_back();
    }
    sequence += e["type"].get<std::string>() + name + "@" + std::to_string(at) + " ";
  }
  EXPECT_TRUE(stack.empty());
  EXPECT_EQ(sequence, "Ostep@1000 Ofwd@2000 Omm;x@3000 Cmm;x@4000 Cfwd@5001 Cstep@9000 ");
}

}  // namespace
}  // namespace tfdebug
