// The live dashboard: an HTTP server that is also a Session sink. A browser that opens it sees the
// run's HTML report (docs/html-report.md: the same page), fed live by Server-Sent Events: the loss
// and per-module charts extend each step, findings appear as rules trip, the flight recorder's
// window after the first error, the model graph and the profile when their files appear.
// docs/dashboard.md is the user's page.
//
//   tfdebug::Session session(config);
//   auto dashboard = tfdebug::serve::Dashboard::start({.port = 8080, .run_dir = config.run_dir});
//   session.add_sink(dashboard);            // findings and step metrics flow to every browser
//   std::printf("open %s\n", dashboard->url().c_str());
//
// Routes: GET / (the page), GET /events (the stream: each event one JSON object with its "kind":
// "snapshot" first, then "step", "finding", "flight", "profile", "graph", "end"), GET /snapshot
// (the run so far: the page's data object, with "last_event_id").
//
// Note [Streaming that cannot hurt training] (src/serve/event_stream.cpp): the Session hands each
// event to this sink's own queue thread (Delivery::queued); that thread formats it once and copies
// a pointer into every client's bounded queue. A client whose queue is full (a slow or stalled
// browser) is dropped and counted, never waited for; it reconnects with Last-Event-ID and resumes
// from a bounded backlog, or gets a fresh snapshot when it fell out of it.
//
// Safe defaults (Note [Dashboard access] in src/serve/access.cpp): binds 127.0.0.1; a host that is
// not loopback requires an access token (generated when none is given; url() carries it), checked
// on every request; on loopback, requests naming another Host are refused (DNS rebinding); only
// GET and HEAD; bounded request line, headers and body; no CORS headers; nothing but the three
// routes is served (no files, so no path can leave the run directory).
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tfdebug/session/sink.hpp"

namespace tfdebug::serve {

struct DashboardOptions {
  std::string host = "127.0.0.1";  // a non-loopback address requires a token
  int port = 8080;                 // 0: any free port (port() says which)
  // The access token. Empty: none on loopback, a random one (128 bits) elsewhere.
  std::string token;
  std::string title = "live run";  // the page's title
  // The run's directory, when it has one: the page's flight recorder, profile and model graph come
  // from its side files (flight_recorder.json, profile.json, model.onnx) once they are written.
  std::filesystem::path run_dir;
  std::vector<std::pair<std::string, std::string>> config;  // RunConfig::entries(), shown on the page
  std::size_t max_clients = 128;                            // concurrent event streams; more get 503
  std::size_t client_queue = 4096;                          // events queued per client before it is dropped
  std::size_t backlog = 4096;                               // events kept for Last-Event-ID resumes
  std::size_t max_steps = 2000;                             // steps kept for the page (the latest ones)
  std::size_t max_modules = 100;               // modules in the per-module charts (first seen first)
  std::size_t max_findings = 10000;            // findings kept (a Session dedupes them: far fewer come)
  std::chrono::milliseconds heartbeat{15000};  // a comment line on an idle stream
  // A client's events are written at most once per interval, those that came meanwhile together
  // in one write: the cost of 100 open pages to the training stays small at hundreds of events a
  // second. An event after a quiet interval goes out at once. 0: every event is written alone.
  std::chrono::milliseconds flush_interval{100};
  std::chrono::seconds write_timeout{5};  // a socket write that blocks longer closes the client
  // Where "client dropped" and other one-line notices go; empty: standard error.
  std::function<void(const std::string&)> log;
};

// Counters, for tests, benchmarks and the page's footer.
struct DashboardStats {
  std::uint64_t events = 0;            // published (the last event id)
  std::size_t clients = 0;             // streams open now
  std::uint64_t clients_served = 0;    // streams opened since start
  std::uint64_t dropped_clients = 0;   // dropped because their queue was full
  std::uint64_t resumed_clients = 0;   // resumed from the backlog by Last-Event-ID
  std::uint64_t refused_requests = 0;  // 4xx/5xx answered by the access checks and limits
  std::uint64_t dropped_findings = 0;  // past max_findings
};

class Dashboard : public Sink {
 public:
  // Binds and starts serving. tfdebug::Error for a host that is not an address, a port in use, a
  // token that is not 16-128 URL-safe characters.
  static std::shared_ptr<Dashboard> start(DashboardOptions options);
  // Stops serving: every stream is closed, the server's threads are joined.
  ~Dashboard() override;
  Dashboard(const Dashboard&) = delete;
  Dashboard& operator=(const Dashboard&) = delete;

  int port() const noexcept;
  const std::string& host() const noexcept;
  const std::string& token() const noexcept;  // empty when none is needed
  // The page's address, with ?token=... when one is needed: what a user opens.
  std::string url() const;
  DashboardStats stats() const;

  // Sink: called by the Session's queue thread (or by tfdebug serve's run follower).
  void on_finding(const Finding& finding) override;
  void on_step(const StepMetrics& metrics) override;
  void on_run_end(const RunSummary& summary) override;
  bool wants_step_metrics() const noexcept override { return true; }

  // Reads the run directory's side files (flight_recorder.json, profile.json, model.onnx) and
  // sends those that are new or changed since the last call. on_step calls it after a step with
  // an error finding; call it when a file was written outside the Session (the demo's model.onnx).
  // A file that fails to read is logged and left for the next call.
  void load_run_files();

  // The page's data object (html_report.hpp's run data, fed live) as JSON text.
  std::string snapshot() const;

 private:
  struct State;
  explicit Dashboard(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace tfdebug::serve
