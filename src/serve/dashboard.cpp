// The live dashboard (tfdebug/serve/dashboard.hpp): cpp-httplib's server, the run's state and the
// event fan-out.
#include "tfdebug/serve/dashboard.hpp"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include <nlohmann/json.hpp>

#include "access.hpp"
#include "event_stream.hpp"
#include "live_run.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/export/html_report.hpp"

namespace tfdebug::serve {
namespace {

using nlohmann::json;

// Request limits: the dashboard is read with GETs; nothing it serves needs more.
constexpr std::size_t kMaxHeaders = 64;
constexpr std::size_t kMaxHeaderBytes = 16 * 1024;
constexpr std::size_t kMaxBodyBytes = 1024;
// Pool threads beyond the event streams, for pages and snapshots.
constexpr std::size_t kSpareThreads = 8;

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

void refuse(httplib::Response& res, int status, const std::string& why) {
  res.status = status;
  res.set_content(why + "\n", "text/plain; charset=utf-8");
}

}  // namespace

struct Dashboard::State {
  DashboardOptions options;
  httplib::Server server;
  std::thread listener;
  int port = 0;
  std::string page;  // the live page: the same for every client

  mutable std::mutex mutex;  // orders publish and subscribe; guards run, stream, parts
  detail::LiveRun run;
  detail::EventStream stream;
  std::map<std::string, std::filesystem::file_time_type> part_times;  // side files sent
  bool error_files_pending = false;

  std::atomic<std::uint64_t> clients_served{0}, dropped_clients{0}, resumed_clients{0}, refused{0};

  explicit State(DashboardOptions o)
      : options(std::move(o)),
        run({options.max_steps, options.max_modules, options.max_findings}, options.title, options.config),
        stream(options.client_queue, options.backlog) {}

  void log(const std::string& line) const {
    if (options.log) {
      options.log(line);
    } else {
      std::fprintf(stderr, "tfdebug serve: %s\n", line.c_str());
    }
  }

  // With `mutex` held.
  void publish(const json& event) {
    std::vector<std::shared_ptr<detail::StreamClient>> dropped;
    stream.publish(dump(event), dropped);
    for (std::size_t i = 0; i < dropped.size(); ++i) {
      dropped_clients.fetch_add(1, std::memory_order_relaxed);
      log("a client fell " + std::to_string(options.client_queue) +
          " events behind and was dropped (it may reconnect and resume)");
    }
  }

  // Note [Dashboard access] in access.cpp.
  bool admitted(const httplib::Request& req, httplib::Response& res) {
    const auto refused_with = [&](int status, const std::string& why) {
      refused.fetch_add(1, std::memory_order_relaxed);
      refuse(res, status, why);
      return false;
    };
    if (req.method != "GET" && req.method != "HEAD") return refused_with(405, "only GET and HEAD are served");
    std::size_t header_bytes = 0;
    for (const auto& [key, value] : req.headers) header_bytes += key.size() + value.size() + 4;
    if (req.headers.size() > kMaxHeaders || header_bytes > kMaxHeaderBytes)
      return refused_with(431, "request headers too large");
    // cpp-httplib leaves a GET's body unread: a request that sends one is refused, not served.
    if (req.has_header("Transfer-Encoding") ||
        (req.has_header("Content-Length") && req.get_header_value("Content-Length") != "0"))
      return refused_with(413, "a GET carries no body");
    if (!options.token.empty()) {
      std::string given = req.get_param_value("token");
      const std::string auth = req.get_header_value("Authorization");
      if (given.empty() && auth.rfind("Bearer ", 0) == 0) given = auth.substr(7);
      if (!detail::same_token(given, options.token)) return refused_with(401, "access token required");
    } else if (!detail::loopback_host_header(req.get_header_value("Host"), port)) {
      return refused_with(403, "this server answers requests for localhost only");
    }
    return true;
  }

  void serve_events(const httplib::Request& req, httplib::Response& res) {
    std::optional<std::uint64_t> last_event_id;
    if (req.has_header("Last-Event-ID")) {
      const std::string text = req.get_header_value("Last-Event-ID");
      std::uint64_t id = 0;
      bool digits = !text.empty() && text.size() <= 19;
      for (const char c : text) {
        digits = digits && c >= '0' && c <= '9';
        if (digits) id = id * 10 + std::uint64_t(c - '0');
      }
      if (digits) last_event_id = id;
    }
    std::shared_ptr<detail::StreamClient> client;
    {
      std::lock_guard lock(mutex);
      if (stream.clients() >= options.max_clients) {
        refused.fetch_add(1, std::memory_order_relaxed);
        refuse(res, 503, "too many event streams open (DashboardOptions::max_clients)");
        return;
      }
      bool resumed = false;
      client = stream.subscribe(
          last_event_id,
          [&] {
            return dump(json{{"kind", "snapshot"}, {"data", run.snapshot()}});
          },
          resumed);
      if (resumed) resumed_clients.fetch_add(1, std::memory_order_relaxed);
    }
    clients_served.fetch_add(1, std::memory_order_relaxed);
    res.set_header("X-Accel-Buffering", "no");
    const auto heartbeat = options.heartbeat;
    const auto flush_interval = options.flush_interval;
    // Note [Streaming that cannot hurt training]: one write per flush interval at most.
    auto last_write = std::make_shared<std::chrono::steady_clock::time_point>();
    res.set_chunked_content_provider(
        "text/event-stream",
        [client, heartbeat, flush_interval, last_write](std::size_t, httplib::DataSink& sink) {
          if (flush_interval.count() > 0) std::this_thread::sleep_until(*last_write + flush_interval);
          std::vector<detail::Frame> frames;
          switch (client->take(frames, heartbeat)) {
            case detail::StreamClient::Wait::closed:
              return false;
            case detail::StreamClient::Wait::idle: {
              static constexpr char kHeartbeat[] = ": heartbeat\n\n";
              return sink.write(kHeartbeat, sizeof kHeartbeat - 1);
            }
            case detail::StreamClient::Wait::frames:
              break;
          }
          std::string block;
          detail::StreamClient::join(frames, block);
          *last_write = std::chrono::steady_clock::now();
          return sink.write(block.data(), block.size());
        },
        [this, client](bool) {
          std::lock_guard lock(mutex);
          stream.unsubscribe(client);
        });
  }

  // With `mutex` held. Sends the side files that are new or changed (Dashboard::load_run_files).
  void load_run_files_locked() {
    if (options.run_dir.empty()) return;
    for (const auto& [part, file] : {std::pair<const char*, const char*>{"flight", "flight_recorder.json"},
                                     {"profile", "profile.json"},
                                     {"graph", "model.onnx"}}) {
      std::error_code ec;
      const auto time = std::filesystem::last_write_time(options.run_dir / file, ec);
      if (ec) continue;
      const auto seen = part_times.find(part);
      if (seen != part_times.end() && seen->second == time) continue;
      try {
        json value = json::parse(run_report_part(options.run_dir, part));
        part_times[part] = time;
        publish(run.set_part(part, std::move(value)));
      } catch (const std::exception& e) {
        log(std::string(file) + ": not read yet: " + e.what());
      }
    }
  }
};

std::shared_ptr<Dashboard> Dashboard::start(DashboardOptions options) {
  if (options.host.empty()) options.host = "127.0.0.1";
  if (options.port < 0 || options.port > 65535)
    throw Error("port " + std::to_string(options.port) + ": expected 0-65535");
  if (!options.token.empty() && !detail::valid_token(options.token))
    throw Error("access token: expected 16-128 characters of A-Z a-z 0-9 . _ ~ -");
  if (options.token.empty() && !detail::is_loopback_host(options.host))
    options.token = detail::random_token();
  options.max_clients = std::max<std::size_t>(options.max_clients, 1);
  options.client_queue = std::max<std::size_t>(options.client_queue, 1);
  if (options.heartbeat.count() <= 0) options.heartbeat = std::chrono::milliseconds(15000);

  auto state = std::make_unique<State>(std::move(options));
  State* s = state.get();
  const DashboardOptions& o = s->options;
  s->page = html_live_page(o.title);

  httplib::Server& server = s->server;
  const std::size_t threads = o.max_clients + kSpareThreads;
  server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  server.set_payload_max_length(kMaxBodyBytes);
  server.set_write_timeout(o.write_timeout.count(), 0);
  server.set_read_timeout(5, 0);
  server.set_keep_alive_timeout(2);
  // SO_REUSEADDR only: cpp-httplib's default adds SO_REUSEPORT, which lets a second server bind
  // the same port and take half of its connections.
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server.set_default_headers({{"Cache-Control", "no-store"},
                              {"X-Content-Type-Options", "nosniff"},
                              {"Referrer-Policy", "no-referrer"},
                              {"X-Frame-Options", "DENY"}});
  server.set_pre_routing_handler([s](const httplib::Request& req, httplib::Response& res) {
    return s->admitted(req, res) ? httplib::Server::HandlerResponse::Unhandled
                                 : httplib::Server::HandlerResponse::Handled;
  });
  server.Get("/", [s](const httplib::Request&, httplib::Response& res) {
    res.set_content(s->page, "text/html; charset=utf-8");
  });
  server.Get("/snapshot", [s](const httplib::Request&, httplib::Response& res) {
    json snapshot;
    {
      std::lock_guard lock(s->mutex);
      snapshot = s->run.snapshot();
      snapshot["last_event_id"] = s->stream.last_id();
    }
    res.set_content(dump(snapshot), "application/json");
  });
  server.Get("/events",
             [s](const httplib::Request& req, httplib::Response& res) { s->serve_events(req, res); });
  server.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.body.empty()) {
      const std::string why = res.status == 404 ? "not found: the dashboard serves /, /events and /snapshot"
                                                : "request refused (" + std::to_string(res.status) + ")";
      res.set_content(why + "\n", "text/plain; charset=utf-8");
    }
  });

  const std::string where = o.host + ":" + std::to_string(o.port);
  if (o.port == 0) {
    s->port = server.bind_to_any_port(o.host);
    if (s->port < 0) throw Error(o.host + ": cannot listen there (not an address of this machine?)");
  } else {
    if (!server.bind_to_port(o.host, o.port))
      throw Error(where + ": cannot listen there (port in use, or not an address of this machine?)");
    s->port = o.port;
  }
  s->listener = std::thread([s] { s->server.listen_after_bind(); });
  // Until the server runs, stop() would not stop it (the destructor would wait forever).
  while (!server.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return std::shared_ptr<Dashboard>(new Dashboard(std::move(state)));
}

Dashboard::Dashboard(std::unique_ptr<State> state) : state_(std::move(state)) {}

Dashboard::~Dashboard() {
  {
    std::lock_guard lock(state_->mutex);
    state_->stream.close_all();
  }
  state_->server.stop();
  if (state_->listener.joinable()) state_->listener.join();
}

int Dashboard::port() const noexcept {
  return state_->port;
}
const std::string& Dashboard::host() const noexcept {
  return state_->options.host;
}
const std::string& Dashboard::token() const noexcept {
  return state_->options.token;
}

std::string Dashboard::url() const {
  const std::string& host = state_->options.host;
  const bool v6 = host.find(':') != std::string::npos;
  std::string url = "http://" + (v6 ? "[" + host + "]" : host) + ":" + std::to_string(state_->port) + "/";
  if (!state_->options.token.empty()) url += "?token=" + state_->options.token;
  return url;
}

DashboardStats Dashboard::stats() const {
  DashboardStats out;
  {
    std::lock_guard lock(state_->mutex);
    out.events = state_->stream.last_id();
    out.clients = state_->stream.clients();
    out.dropped_findings = state_->run.dropped_findings();
  }
  out.clients_served = state_->clients_served.load();
  out.dropped_clients = state_->dropped_clients.load();
  out.resumed_clients = state_->resumed_clients.load();
  out.refused_requests = state_->refused.load();
  return out;
}

void Dashboard::on_finding(const Finding& finding) {
  std::lock_guard lock(state_->mutex);
  if (auto event = state_->run.add_finding(finding)) state_->publish(*event);
  if (finding.severity == Severity::error) state_->error_files_pending = true;
}

void Dashboard::on_step(const StepMetrics& metrics) {
  std::lock_guard lock(state_->mutex);
  state_->publish(state_->run.add_step(metrics));
  // The Session writes flight_recorder.json a few steps after the first error: look for it (a
  // stat per step, only after an error) until it came.
  if (state_->error_files_pending && state_->part_times.count("flight") == 0) state_->load_run_files_locked();
}

void Dashboard::on_run_end(const RunSummary& summary) {
  std::lock_guard lock(state_->mutex);
  state_->publish(state_->run.end(summary));
  state_->load_run_files_locked();
}

void Dashboard::load_run_files() {
  std::lock_guard lock(state_->mutex);
  state_->load_run_files_locked();
}

std::string Dashboard::snapshot() const {
  std::lock_guard lock(state_->mutex);
  return dump(state_->run.snapshot());
}

}  // namespace tfdebug::serve
