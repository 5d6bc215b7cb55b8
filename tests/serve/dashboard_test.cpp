// The live dashboard over real sockets: snapshot then stream, resume by Last-Event-ID, a stalled
// client dropped while a fast one gets every event in order, heartbeats, and the access rules
// (loopback Host, token, methods, request limits, no CORS, no paths beyond the three routes).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <optional>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "http_client.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/serve/dashboard.hpp"

namespace tfdebug::serve {
namespace {

using nlohmann::json;
using testing::EventReader;
using testing::get;
using testing::request;

StepMetrics step_metrics(std::int64_t step, double loss, const std::string& module = "blocks.0.mlp") {
  StepMetrics m;
  m.step = step;
  m.loss = loss;
  ModuleMetrics mm;
  mm.module = module;
  mm.grad_norm = 0.5 + double(step);
  mm.update_ratio = 1e-3;
  m.modules.push_back(mm);
  return m;
}

Finding nan_finding(std::int64_t step) {
  Finding f;
  f.rule = "nonfinite";
  f.severity = Severity::error;
  f.step = step;
  f.last_step = step;
  f.phase = Phase::forward;
  f.module = "blocks.0.attn";
  f.op = "aten::log";
  f.message = "first NaN <script>";
  f.suggestion = "clamp the input of log";
  return f;
}

DashboardOptions quiet(DashboardOptions o = {}) {
  o.port = 0;
  o.log = [](const std::string&) {};
  return o;
}

TEST(Dashboard, NewClientGetsSnapshotThenTheStreamInOrder) {
  auto dash = Dashboard::start(quiet());
  dash->on_step(step_metrics(0, 2.5));
  dash->on_step(step_metrics(1, 2.25));
  dash->on_finding(nan_finding(1));

  EventReader reader(dash->port());
  ASSERT_EQ(reader.status(), 200);
  EXPECT_EQ(reader.head().header("content-type"), "text/event-stream");
  auto first = reader.next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->id, 3u);  // the snapshot carries the id of the last event it holds
  const json snap = json::parse(first->data);
  EXPECT_EQ(snap["kind"], "snapshot");
  EXPECT_EQ(snap["data"]["kind"], "run");
  EXPECT_EQ(snap["data"]["metrics"]["steps"], json::array({0, 1}));
  EXPECT_EQ(snap["data"]["metrics"]["loss"], json::array({2.5, 2.25}));
  EXPECT_EQ(snap["data"]["metrics"]["modules"], json::array({"blocks.0.mlp"}));
  EXPECT_EQ(snap["data"]["metrics"]["grad_norm"], json::parse("[[0.5, 1.5]]"));
  ASSERT_EQ(snap["data"]["findings"].size(), 1u);
  EXPECT_EQ(snap["data"]["findings"][0]["op"], "aten::log");
  EXPECT_EQ(snap["data"]["findings"][0]["message"], "first NaN <script>");
  EXPECT_EQ(snap["data"]["run"]["steps"], 2);

  dash->on_step(step_metrics(2, std::nan("")));
  dash->on_finding(nan_finding(2));
  auto step = reader.next();
  ASSERT_TRUE(step);
  EXPECT_EQ(step->id, 4u);
  const json s = json::parse(step->data);
  EXPECT_EQ(s["kind"], "step");
  EXPECT_EQ(s["step"], 2);
  EXPECT_EQ(s["loss"], "NaN");
  EXPECT_EQ(s["modules"], json::parse(R"([["blocks.0.mlp", 2.5, 0.001, null, null, null, null]])"));
  auto finding = reader.next();
  ASSERT_TRUE(finding);
  EXPECT_EQ(finding->id, 5u);
  EXPECT_EQ(json::parse(finding->data)["finding"]["severity"], "error");

  RunSummary summary;
  summary.complete = true;
  summary.steps = 3;
  summary.last_step = 2;
  summary.findings = {nan_finding(1)};
  summary.findings[0].count = 2;
  dash->on_run_end(summary);
  auto end = reader.next();
  ASSERT_TRUE(end);
  const json e = json::parse(end->data);
  EXPECT_EQ(e["kind"], "end");
  EXPECT_EQ(e["run"]["complete"], true);
  EXPECT_EQ(e["findings"][0]["count"], 2);
  EXPECT_EQ(dash->stats().events, 6u);
}

TEST(Dashboard, SnapshotRouteIsThePagesDataObject) {
  auto dash = Dashboard::start(quiet({.title = "exp1", .config = {{"tier", "diagnose"}}}));
  dash->on_step(step_metrics(7, 1.0));
  const auto res = get(dash->port(), "/snapshot");
  ASSERT_EQ(res.status, 200);
  EXPECT_EQ(res.header("content-type"), "application/json");
  const json d = json::parse(res.body);
  EXPECT_EQ(d["last_event_id"], 1);
  EXPECT_EQ(d["run"]["dir"], "exp1");
  EXPECT_EQ(d["run"]["first_step"], 7);
  EXPECT_EQ(d["config"], json::parse(R"([["tier", "diagnose"]])"));
  EXPECT_EQ(d["metrics"]["loss"], json::array({1.0}));
  EXPECT_TRUE(d["flight"].is_null());
}

TEST(Dashboard, PageIsTheReportPageFedLive) {
  auto dash = Dashboard::start(quiet({.title = "exp <1>"}));
  const auto res = get(dash->port(), "/");
  ASSERT_EQ(res.status, 200);
  EXPECT_EQ(res.header("content-type"), "text/html; charset=utf-8");
  EXPECT_NE(res.body.find("<body data-kind=\"live\">"), std::string::npos);
  EXPECT_NE(res.body.find("connect-src 'self'"), std::string::npos);
  EXPECT_NE(res.body.find("exp &lt;1&gt;"), std::string::npos);
  EXPECT_NE(res.body.find("TF.runPage = function"), std::string::npos);  // the report's own script
  EXPECT_NE(res.body.find("new EventSource(url)"), std::string::npos);
  EXPECT_FALSE(res.has("access-control-allow-origin"));
  EXPECT_EQ(res.header("x-content-type-options"), "nosniff");
}

TEST(Dashboard, LastEventIdResumesFromTheBacklogElseSnapshot) {
  auto dash = Dashboard::start(quiet({.backlog = 4}));
  for (int i = 0; i < 3; ++i) dash->on_step(step_metrics(i, 1.0 + i));
  {
    EventReader reader(dash->port(), "Last-Event-ID: 1\r\n");
    auto a = reader.next();
    auto b = reader.next();
    ASSERT_TRUE(a && b);
    EXPECT_EQ(a->id, 2u);
    EXPECT_EQ(json::parse(a->data)["kind"], "step");
    EXPECT_EQ(json::parse(a->data)["step"], 1);
    EXPECT_EQ(b->id, 3u);
  }
  EXPECT_EQ(dash->stats().resumed_clients, 1u);
  for (int i = 3; i < 10; ++i) dash->on_step(step_metrics(i, 1.0));
  // Event 2 fell out of a backlog of 4: a fresh snapshot instead.
  EventReader late(dash->port(), "Last-Event-ID: 2\r\n");
  auto s = late.next();
  ASSERT_TRUE(s);
  EXPECT_EQ(s->id, 10u);
  EXPECT_EQ(json::parse(s->data)["kind"], "snapshot");
  EXPECT_EQ(json::parse(s->data)["data"]["metrics"]["steps"].size(), 10u);
  // An id this server never sent (it restarted): a snapshot too; garbage is a new client.
  EventReader other(dash->port(), "Last-Event-ID: 99\r\n");
  EXPECT_EQ(json::parse(other.next()->data)["kind"], "snapshot");
  EventReader garbage(dash->port(), "Last-Event-ID: -1x\r\n");
  EXPECT_EQ(json::parse(garbage.next()->data)["kind"], "snapshot");
  EXPECT_EQ(dash->stats().resumed_clients, 1u);
}

TEST(Dashboard, StalledClientIsDroppedAndFastClientGetsEveryEventInOrder) {
  std::atomic<int> logged{0};
  DashboardOptions o = quiet({.client_queue = 64});
  o.log = [&](const std::string&) { ++logged; };
  auto dash = Dashboard::start(o);
  // A client that asks for the stream and never reads, with a tiny receive buffer.
  testing::Socket stalled(dash->port(), 4096);
  stalled.send_all("GET /events HTTP/1.1\r\nHost: localhost:" + std::to_string(dash->port()) + "\r\n\r\n");
  EventReader fast(dash->port());
  ASSERT_TRUE(fast.next());  // its snapshot
  while (dash->stats().clients < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));

  // Events of 8 KB (a long module name), in batches the fast client keeps up with.
  const std::string module(8000, 'm');
  constexpr int kEvents = 1200;
  std::uint64_t expected_id = dash->stats().events;
  int received = 0;
  bool in_order = true;
  for (int batch = 0; batch < kEvents / 40; ++batch) {
    for (int i = 0; i < 40; ++i) dash->on_step(step_metrics(batch * 40 + i, 1.0, module));
    for (int i = 0; i < 40; ++i) {
      auto e = fast.next();
      ASSERT_TRUE(e) << "the fast client stopped getting events at " << received;
      in_order = in_order && e->id == ++expected_id && json::parse(e->data)["step"] == received;
      ++received;
    }
  }
  EXPECT_TRUE(in_order);
  EXPECT_EQ(received, kEvents);
  const DashboardStats stats = dash->stats();
  EXPECT_EQ(stats.dropped_clients, 1u);
  EXPECT_EQ(stats.clients, 1u);
  EXPECT_EQ(logged.load(), 1);
}

// The body's next HTTP chunk, read from the raw stream (`at` past the response head); nullopt on
// the socket's timeout. The dashboard writes each take() of a client's queue as one chunk.
std::optional<std::string> next_chunk(testing::Socket& socket, std::string& raw, std::size_t& at) {
  while (true) {
    const std::size_t eol = raw.find("\r\n", at);
    if (eol != std::string::npos) {
      const std::size_t size = std::stoul(raw.substr(at, eol - at), nullptr, 16);
      if (raw.size() >= eol + 2 + size + 2) {
        at = eol + 2 + size + 2;
        return raw.substr(eol + 2, size);
      }
    }
    if (!socket.receive(raw)) return std::nullopt;
  }
}

int events_in(const std::string& chunk) {
  int n = 0;
  for (std::size_t at = chunk.find("id: "); at != std::string::npos; at = chunk.find("\nid: ", at + 1)) ++n;
  return n;
}

TEST(Dashboard, BurstOfEventsGoesOutAsOneWritePerFlushInterval) {
  auto dash = Dashboard::start(quiet({.flush_interval = std::chrono::milliseconds(1500)}));
  testing::Socket socket(dash->port());
  socket.send_all("GET /events HTTP/1.1\r\nHost: localhost:" + std::to_string(dash->port()) + "\r\n\r\n");
  std::string raw;
  while (raw.find("\r\n\r\n") == std::string::npos) ASSERT_TRUE(socket.receive(raw));
  std::size_t at = raw.find("\r\n\r\n") + 4;
  const auto snapshot = next_chunk(socket, raw, at);
  ASSERT_TRUE(snapshot);
  EXPECT_EQ(events_in(*snapshot), 1);
  EXPECT_NE(snapshot->find("\"kind\":\"snapshot\""), std::string::npos);
  // 30 events within the interval that follows the snapshot's write: one chunk holds them all,
  // whole and in order.
  for (int i = 0; i < 30; ++i) dash->on_step(step_metrics(i, 1.0));
  const auto burst = next_chunk(socket, raw, at);
  ASSERT_TRUE(burst);
  EXPECT_EQ(events_in(*burst), 30);
  EXPECT_EQ(burst->substr(0, 6), "id: 1\n");  // the snapshot was id 0
  EXPECT_NE(burst->find("id: 30\ndata: "), std::string::npos);
  EXPECT_EQ(burst->substr(burst->size() - 2), "\n\n");
  // After a quiet interval an event goes out alone.
  std::this_thread::sleep_for(std::chrono::milliseconds(1600));
  dash->on_finding(nan_finding(30));
  const auto alone = next_chunk(socket, raw, at);
  ASSERT_TRUE(alone);
  EXPECT_EQ(events_in(*alone), 1);
  EXPECT_NE(alone->find("\"kind\":\"finding\""), std::string::npos);
}

TEST(Dashboard, IdleStreamGetsHeartbeats) {
  auto dash = Dashboard::start(quiet({.heartbeat = std::chrono::milliseconds(50)}));
  EventReader reader(dash->port());
  ASSERT_TRUE(reader.next());  // the snapshot
  reader.socket().set_timeout(std::chrono::milliseconds(400));
  // Nothing but comments for 400 ms.
  EXPECT_FALSE(reader.next(std::chrono::steady_clock::now() + std::chrono::milliseconds(400)));
  EXPECT_GE(reader.comments(), 2);
}

TEST(Dashboard, TooManyStreamsAreRefused) {
  auto dash = Dashboard::start(quiet({.max_clients = 1}));
  EventReader one(dash->port());
  ASSERT_EQ(one.status(), 200);
  EventReader two(dash->port());
  EXPECT_EQ(two.status(), 503);
}

TEST(Dashboard, LoopbackAnswersOnlyLoopbackHostNames) {
  auto dash = Dashboard::start(quiet());
  const int port = dash->port();
  EXPECT_TRUE(dash->token().empty());
  EXPECT_EQ(dash->url(), "http://127.0.0.1:" + std::to_string(port) + "/");
  const auto host = [&](const std::string& h) {
    return request(port, "GET /snapshot HTTP/1.1\r\nHost: " + h + "\r\nConnection: close\r\n\r\n").status;
  };
  EXPECT_EQ(host("localhost:" + std::to_string(port)), 200);
  EXPECT_EQ(host("[::1]:" + std::to_string(port)), 200);
  EXPECT_EQ(host("127.0.0.1"), 200);
  EXPECT_EQ(host("attacker.example:" + std::to_string(port)), 403);  // DNS rebinding
  EXPECT_EQ(host("localhost.attacker.example"), 403);
  EXPECT_EQ(request(port, "GET / HTTP/1.1\r\nConnection: close\r\n\r\n").status, 403);
}

TEST(Dashboard, NonLoopbackHostNeedsTheTokenOnEveryRequest) {
  // Told to bind every interface: a token is made, and every route asks for it.
  auto dash = Dashboard::start(quiet({.host = "0.0.0.0"}));
  const int port = dash->port();
  ASSERT_EQ(dash->token().size(), 32u);
  EXPECT_EQ(dash->url(), "http://0.0.0.0:" + std::to_string(port) + "/?token=" + dash->token());
  for (const std::string route : {"/", "/snapshot", "/events"}) {
    EXPECT_EQ(get(port, route).status, 401) << route;
    EXPECT_EQ(get(port, route + "?token=wrong").status, 401) << route;
    EXPECT_EQ(get(port, route + "?token=" + dash->token().substr(0, 31)).status, 401) << route;
  }
  EXPECT_EQ(get(port, "/?token=" + dash->token()).status, 200);
  EXPECT_EQ(get(port, "/snapshot", "Authorization: Bearer " + dash->token() + "\r\n").status, 200);
  EventReader reader(port, "", "/events?token=" + dash->token());
  EXPECT_EQ(reader.status(), 200);
  EXPECT_GE(dash->stats().refused_requests, 9u);

  EXPECT_THROW(Dashboard::start(quiet({.token = "short"})), tfdebug::Error);
  EXPECT_THROW(Dashboard::start(quiet({.token = "has spaces in it, too many"})), tfdebug::Error);
}

TEST(Dashboard, OnlyGetAndBoundedRequests) {
  auto dash = Dashboard::start(quiet());
  const int port = dash->port();
  const std::string host = "Host: localhost:" + std::to_string(port) + "\r\n";
  EXPECT_EQ(
      request(port, "POST / HTTP/1.1\r\n" + host + "Content-Length: 2\r\nConnection: close\r\n\r\n{}").status,
      405);
  EXPECT_EQ(request(port, "DELETE /events HTTP/1.1\r\n" + host + "Connection: close\r\n\r\n").status, 405);
  // A CORS preflight gets no Access-Control header: cross-origin scripts cannot read the page.
  const auto preflight =
      request(port, "OPTIONS /snapshot HTTP/1.1\r\n" + host +
                        "Origin: http://attacker.example\r\nAccess-Control-Request-Method: GET\r\n"
                        "Connection: close\r\n\r\n");
  EXPECT_EQ(preflight.status, 405);
  EXPECT_FALSE(preflight.has("access-control-allow-origin"));
  const auto cross = get(port, "/snapshot", "Origin: http://attacker.example\r\n");
  EXPECT_EQ(cross.status, 200);
  EXPECT_FALSE(cross.has("access-control-allow-origin"));
  // Too many headers, one too long, a request line too long: refused, never served.
  std::string many;
  for (int i = 0; i < 100; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
  EXPECT_EQ(get(port, "/snapshot", many).status, 431);
  const int long_header = get(port, "/snapshot", "X-Long: " + std::string(20000, 'a') + "\r\n").status;
  EXPECT_TRUE(long_header == 0 || long_header >= 400) << long_header;
  const int long_target = get(port, "/snapshot?" + std::string(10000, 'a')).status;
  EXPECT_TRUE(long_target == 0 || long_target >= 400) << long_target;
  // A body past the limit.
  const auto big =
      request(port, "GET /snapshot HTTP/1.1\r\n" + host +
                        "Content-Length: 100000\r\nConnection: close\r\n\r\n" + std::string(100000, 'x'));
  EXPECT_TRUE(big.status == 0 || big.status == 413) << big.status;
}

TEST(Dashboard, NoPathLeadsAnywhereButTheThreeRoutes) {
  auto dash = Dashboard::start(quiet({.run_dir = "."}));
  for (const std::string target :
       {"/../../../../etc/passwd", "/%2e%2e/%2e%2e/%2e%2e/etc/passwd", "/snapshot/../../etc/passwd",
        "/report.json", "/..%2fCMakeCache.txt", "//etc/passwd", "/events/../../etc/passwd"}) {
    const auto res = get(dash->port(), target);
    EXPECT_EQ(res.status, 404) << target;
    EXPECT_EQ(res.body.find("root:"), std::string::npos) << target;
  }
}

TEST(Dashboard, PortInUseIsAOneLineError) {
  auto dash = Dashboard::start(quiet());
  DashboardOptions o = quiet();
  o.port = dash->port();
  try {
    Dashboard::start(o);
    FAIL() << "a second server on the same port started";
  } catch (const tfdebug::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot listen"), std::string::npos);
  }
}

}  // namespace
}  // namespace tfdebug::serve
