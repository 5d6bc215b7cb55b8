#include "tfdebug/ide/dap.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>
#include <vector>

#include "tfdebug/core/error.hpp"
#include "tfdebug/ide/commands.hpp"
#include "tfdebug/ide/tensor_tools.hpp"

namespace tfdebug::ide {

using nlohmann::json;

// Note [DAP threads]
// The client's requests are read and answered on the server's reader thread; the run's stops
// happen on the training thread, in the Debugger's handler, which sends `stopped` and waits until
// a request (continue, next, stepIn, stepOut, disconnect) says how to go on. While it waits, the
// reader thread answers stackTrace, scopes, variables and evaluate from the Stop: the pause
// channel keeps its tensors alive and readable from another thread until the handler returns.
// `mutex` guards the stop, the answer and the variable references; writes to the client are
// serialised by `write_mutex` (events come from the training thread and from sinks).
struct DapServer::State {
  int in_fd = -1, out_fd = -1;
  bool own_fds = false;
  std::shared_ptr<Debugger> debugger;
  std::thread reader;

  std::mutex write_mutex;
  std::int64_t seq = 1;

  std::mutex mutex;
  std::condition_variable changed;
  bool configured = false;
  bool disconnected = false;
  bool terminate_on_disconnect = false;
  std::string launch_arguments = "{}";
  const Stop* stop = nullptr;
  std::optional<Resume> resume;
  std::vector<int> function_breakpoints, exception_breakpoints;
  // Variable references: 1 output, 2 inputs, 3 parameters, 4 gradients; kTensorRef + i a tensor
  // (by name and index) to expand.
  static constexpr int kTensorRef = 1000;
  std::vector<std::string> tensor_refs;

  void send(json message) {
    const std::lock_guard lock(write_mutex);
    message["seq"] = seq++;
    const std::string body = message.dump(-1, ' ', false, json::error_handler_t::replace);
    const std::string header = "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n";
    write_all(header);
    write_all(body);
  }
  void write_all(const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(out_fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // the client went away; the reader sees the end of its input
      done += std::size_t(n);
    }
  }
  void event(const std::string& name, json body) {
    send({{"type", "event"}, {"event", name}, {"body", std::move(body)}});
  }
  void respond(const json& request, json body, bool success = true, const std::string& message = {}) {
    json r = {{"type", "response"},
              {"request_seq", request.value("seq", 0)},
              {"command", request.value("command", "")},
              {"success", success},
              {"body", std::move(body)}};
    if (!message.empty()) r["message"] = message;
    send(std::move(r));
  }

  // One message: headers up to an empty line, then Content-Length bytes. nullopt at the end of
  // the input or on a malformed frame.
  std::optional<std::string> read_message() {
    std::size_t length = 0;
    bool have_length = false;
    std::string line;
    while (true) {
      char c = 0;
      const ssize_t n = ::read(in_fd, &c, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      if (c != '\n') {
        if (line.size() > 1024) return std::nullopt;
        line.push_back(c);
        continue;
      }
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (line.empty()) {
        if (have_length) break;
        continue;
      }
      if (line.rfind("Content-Length:", 0) == 0) {
        try {
          const unsigned long long value = std::stoull(line.substr(15));
          if (value > (64ULL << 20)) return std::nullopt;  // no request is 64 MiB
          length = std::size_t(value);
          have_length = true;
        } catch (const std::exception&) {
          return std::nullopt;
        }
      }
      line.clear();
    }
    std::string body(length, '\0');
    std::size_t done = 0;
    while (done < length) {
      const ssize_t n = ::read(in_fd, body.data() + done, length - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return std::nullopt;
      done += std::size_t(n);
    }
    return body;
  }

  void read_loop() {
    while (true) {
      const std::optional<std::string> text = read_message();
      if (!text) break;
      json request = json::parse(*text, nullptr, /*allow_exceptions=*/false);
      if (!request.is_object() || request.value("type", "") != "request") continue;
      bool done = false;
      try {
        done = handle(request);
      } catch (const std::exception& e) {
        respond(request, json::object(), false, e.what());
      }
      if (done) break;
    }
    const std::lock_guard lock(mutex);
    disconnected = true;
    changed.notify_all();
  }

  // Stops of the run (on the training thread).
  Resume on_stop(const Stop& s) {
    std::unique_lock lock(mutex);
    if (disconnected) return Resume::detach;
    stop = &s;
    resume.reset();
    tensor_refs.clear();
    const bool exception = std::find(exception_breakpoints.begin(), exception_breakpoints.end(),
                                     s.reason().breakpoint) != exception_breakpoints.end();
    std::string reason = "breakpoint";
    if (s.reason().kind == "step") reason = "step";
    if (s.reason().kind == "pause") reason = "pause";
    if (exception) reason = "exception";
    json body = {
        {"reason", reason}, {"description", s.reason().text}, {"threadId", 1}, {"allThreadsStopped", true}};
    if (exception) body["text"] = s.reason().kind == "nan" ? "nan" : "finding";
    if (s.reason().breakpoint != 0) body["hitBreakpointIds"] = json::array({s.reason().breakpoint});
    event("stopped", std::move(body));
    changed.wait(lock, [&] { return resume.has_value() || disconnected; });
    stop = nullptr;
    tensor_refs.clear();
    if (disconnected) return terminate_on_disconnect ? Resume::abort : Resume::detach;
    return *resume;
  }

  json tensor_variable(const std::string& name, TensorView view) {
    tensor_refs.push_back(name);
    const Stats stats = compute_stats(view);
    std::string shape;
    for (int d = 0; d < view.rank(); ++d) shape += (d ? ", " : "") + std::to_string(view.shape(d));
    return {{"name", split_index(name).index.empty() ? name : split_index(name).index},
            {"value", stats_text(stats)},
            {"type", std::string(dtype_name(view.dtype())) + "[" + shape + "]"},
            {"evaluateName", name},
            {"variablesReference",
             view.rank() > 0 && view.numel() > 0 ? kTensorRef + int(tensor_refs.size()) - 1 : 0}};
  }

  json variables(int reference) {
    json list = json::array();
    if (stop == nullptr) return list;
    if (reference >= 1 && reference <= 4) {
      for (const std::string& name : stop->tensor_names()) {
        const bool input = name.rfind("input", 0) == 0 && name != "input";
        const bool gradient = name.size() > 5 && name.substr(name.size() - 5) == ".grad";
        const int scope = name == "output" ? 1 : input ? 2 : gradient ? 4 : 3;
        if (scope != reference) continue;
        if (const auto view = stop->tensor(name)) list.push_back(tensor_variable(name, *view));
      }
      return list;
    }
    const int index = reference - kTensorRef;
    if (index < 0 || index >= int(tensor_refs.size())) return list;
    const std::string name = tensor_refs[std::size_t(index)];
    const IndexedName split = split_index(name);
    const auto base = stop->tensor(split.name);
    if (!base) return list;
    const TensorView view = split.index.empty() ? *base : slice(*base, split.index);
    const std::string prefix =
        split.index.empty() ? "[" : split.index.substr(0, split.index.size() - 1) + ", ";
    const std::int64_t shown = std::min<std::int64_t>(view.shape(0), 16);
    for (std::int64_t i = 0; i < shown; ++i) {
      const std::string child = split.name + prefix + std::to_string(i) + "]";
      if (view.rank() == 1) {
        char value[32];
        std::snprintf(value, sizeof value, "%.6g", view.at({i}));
        list.push_back(
            {{"name", "[" + std::to_string(i) + "]"}, {"value", value}, {"variablesReference", 0}});
      } else {
        list.push_back(tensor_variable(child, slice(*base, child.substr(split.name.size()))));
        list.back()["name"] = "[" + std::to_string(i) + "]";
      }
    }
    if (view.shape(0) > shown)
      list.push_back({{"name", "..."},
                      {"value", std::to_string(view.shape(0) - shown) + " more"},
                      {"variablesReference", 0}});
    list.push_back({{"name", "values"}, {"value", values_text(view, 16)}, {"variablesReference", 0}});
    return list;
  }

  void set_resume(Resume r) {
    resume = r;
    changed.notify_all();
  }

  // Returns true after disconnect.
  bool handle(const json& request) {
    const std::string command = request.value("command", "");
    const json args = request.contains("arguments") ? request["arguments"] : json::object();
    if (command == "initialize") {
      respond(request,
              {{"supportsConfigurationDoneRequest", true},
               {"supportsFunctionBreakpoints", true},
               {"supportsConditionalBreakpoints", true},
               {"supportsEvaluateForHovers", true},
               {"supportsTerminateRequest", false},
               {"exceptionBreakpointFilters",
                json::array({{{"filter", "nan"}, {"label", "NaN / Inf produced"}, {"default", true}},
                             {{"filter", "finding"}, {"label", "Rule findings"}, {"default", false}}})}});
      event("initialized", json::object());
      return false;
    }
    const std::unique_lock lock(mutex);
    if (command == "launch" || command == "attach") {
      launch_arguments = args.dump();
      respond(request, json::object());
    } else if (command == "setFunctionBreakpoints") {
      for (const int id : function_breakpoints) debugger->remove(id);
      function_breakpoints.clear();
      json out = json::array();
      for (const json& b : args.value("breakpoints", json::array())) {
        std::string text = b.value("name", "");
        if (b.contains("condition") && !b["condition"].get<std::string>().empty())
          text += " if " + b["condition"].get<std::string>();
        try {
          const int id = debugger->add(parse_breakpoint(text));
          function_breakpoints.push_back(id);
          out.push_back({{"verified", true}, {"id", id}});
        } catch (const std::exception& e) {
          out.push_back({{"verified", false}, {"message", e.what()}});
        }
      }
      respond(request, {{"breakpoints", out}});
    } else if (command == "setExceptionBreakpoints") {
      for (const int id : exception_breakpoints) debugger->remove(id);
      exception_breakpoints.clear();
      json out = json::array();
      for (const json& f : args.value("filters", json::array())) {
        const std::string filter = f.is_string() ? f.get<std::string>() : "";
        if (filter == "nan" || filter == "finding") {
          const int id = debugger->add(parse_breakpoint(filter == "nan" ? "nonfinite" : "finding"));
          exception_breakpoints.push_back(id);
          out.push_back({{"verified", true}, {"id", id}});
        } else {
          out.push_back(
              {{"verified", false}, {"message", "unknown filter '" + filter + "': nan or finding"}});
        }
      }
      respond(request, {{"breakpoints", out}});
    } else if (command == "setBreakpoints") {
      json out = json::array();
      for (std::size_t i = 0; i < args.value("breakpoints", json::array()).size(); ++i)
        out.push_back(
            {{"verified", false}, {"message", "tfdebug stops at modules and ops: use function breakpoints"}});
      respond(request, {{"breakpoints", out}});
    } else if (command == "configurationDone") {
      configured = true;
      changed.notify_all();
      respond(request, json::object());
    } else if (command == "threads") {
      respond(request, {{"threads", json::array({{{"id", 1}, {"name", "training"}}})}});
    } else if (command == "stackTrace") {
      json frames = json::array();
      if (stop != nullptr) {
        frames.push_back({{"id", 0},
                          {"name", stop->op() + " (" + std::string(phase_name(stop->phase())) + ", step " +
                                       std::to_string(stop->step()) + ")"},
                          {"line", 0},
                          {"column", 0}});
        const std::vector<std::string> stack = stop->module_stack();
        int id = 1;
        for (auto it = stack.rbegin(); it != stack.rend(); ++it)
          frames.push_back({{"id", id++}, {"name", *it}, {"line", 0}, {"column", 0}});
      }
      respond(request, {{"stackFrames", frames}, {"totalFrames", frames.size()}});
    } else if (command == "scopes") {
      json scopes = json::array();
      if (stop != nullptr) {
        const char* names[] = {"Output", "Inputs", "Parameters", "Gradients"};
        for (int i = 0; i < 4; ++i)
          scopes.push_back({{"name", names[i]}, {"variablesReference", i + 1}, {"expensive", i >= 2}});
      }
      respond(request, {{"scopes", scopes}});
    } else if (command == "variables") {
      respond(request, {{"variables", variables(args.value("variablesReference", 0))}});
    } else if (command == "evaluate") {
      const std::string expression = args.value("expression", "");
      std::optional<TensorView> view;
      if (stop != nullptr) {
        const IndexedName split = split_index(expression);
        if (stop->tensor(split.name)) {
          try {
            view = split.index.empty() ? *stop->tensor(split.name)
                                       : slice(*stop->tensor(split.name), split.index);
          } catch (const std::exception&) {
            view.reset();
          }
        }
      }
      if (view) {
        json v = tensor_variable(expression, *view);
        respond(request, {{"result", v["type"].get<std::string>() + "  " + v["value"].get<std::string>()},
                          {"type", v["type"]},
                          {"variablesReference", v["variablesReference"]}});
      } else {
        const CommandResult r = run_command(*debugger, expression, stop);
        if (r.resume && stop != nullptr) set_resume(*r.resume);
        respond(request, {{"result", r.text}, {"variablesReference", 0}}, !r.error, r.error ? r.text : "");
      }
    } else if (command == "continue" || command == "next" || command == "stepIn" || command == "stepOut") {
      if (stop != nullptr) {
        set_resume(command == "continue" ? Resume::continue_run
                   : command == "next"   ? Resume::next_op
                   : command == "stepIn" ? Resume::next_module
                                         : Resume::finish_step);
      }
      respond(request, command == "continue" ? json{{"allThreadsContinued", true}} : json::object());
    } else if (command == "pause") {
      debugger->interrupt();
      respond(request, json::object());
    } else if (command == "disconnect") {
      terminate_on_disconnect = args.value("terminateDebuggee", false);
      disconnected = true;
      changed.notify_all();
      respond(request, json::object());
      return true;
    } else {
      respond(request, json::object(), false, "tfdebug does not support the request '" + command + "'");
    }
    return false;
  }
};

namespace {

// Findings as `output` events.
class FindingsOutput final : public Sink {
 public:
  explicit FindingsOutput(std::function<void(const Finding&)> send) : send_(std::move(send)) {}
  Delivery delivery() const noexcept override { return Delivery::synchronous; }
  void on_finding(const Finding& f) override { send_(f); }
  void on_run_end(const RunSummary&) override {}

 private:
  std::function<void(const Finding&)> send_;
};

}  // namespace

DapServer::DapServer(int in_fd, int out_fd) : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.in_fd = in_fd;
  s.out_fd = out_fd;
  s.debugger = std::make_shared<Debugger>([&s](const Stop& stop) { return s.on_stop(stop); });
  s.reader = std::thread([&s] { s.read_loop(); });
}

DapServer::~DapServer() {
  State& s = *state_;
  {
    const std::lock_guard lock(s.mutex);
    s.disconnected = true;
    s.changed.notify_all();
  }
  if (!s.own_fds) {
    // On standard input the reader waits in read() until the input ends, which may be never: it
    // is let go, and its state with it (kept, not freed, for the process's last moments).
    if (s.reader.joinable()) s.reader.detach();
    (void)state_.release();
    return;
  }
  ::shutdown(s.in_fd, SHUT_RDWR);
  if (s.reader.joinable()) s.reader.join();
  ::close(s.in_fd);
}

std::unique_ptr<DapServer> DapServer::listen(int port) {
  if (port < 0 || port > 65535) throw Error("dap: port " + std::to_string(port) + " is not in 0..65535");
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error(std::string("dap: cannot open a socket: ") + std::strerror(errno));
  const int yes = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(std::uint16_t(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);  // loopback only
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0 || ::listen(fd, 1) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    throw Error("dap: cannot listen on 127.0.0.1:" + std::to_string(port) + ": " + why);
  }
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  std::fprintf(stderr, "tfdebug dap: listening on 127.0.0.1:%d\n", int(ntohs(address.sin_port)));
  std::fflush(stderr);
  const int client = ::accept(fd, nullptr, nullptr);
  ::close(fd);
  if (client < 0) throw Error(std::string("dap: accept failed: ") + std::strerror(errno));
  auto server = std::make_unique<DapServer>(client, client);
  server->state_->own_fds = true;
  return server;
}

const std::shared_ptr<Debugger>& DapServer::debugger() const noexcept {
  return state_->debugger;
}

std::shared_ptr<Sink> DapServer::findings_sink() const {
  State* s = state_.get();
  return std::make_shared<FindingsOutput>([s](const Finding& f) {
    s->event("output",
             {{"category", "console"},
              {"output", std::string(severity_name(f.severity)) + " [" + f.rule + "] " + f.message + "\n"}});
  });
}

bool DapServer::wait_for_start() {
  State& s = *state_;
  std::unique_lock lock(s.mutex);
  s.changed.wait(lock, [&] { return s.configured || s.disconnected; });
  // A client that configured the run and left at once (its requests may all be read before this
  // thread wakes) leaves a run that goes on, as a disconnect does later; unless it asked to end it.
  return s.configured && !(s.disconnected && s.terminate_on_disconnect);
}

std::string DapServer::launch_arguments() const {
  const std::lock_guard lock(state_->mutex);
  return state_->launch_arguments;
}

void DapServer::finish(int exit_code) {
  State& s = *state_;
  s.event("terminated", json::object());
  s.event("exited", {{"exitCode", exit_code}});
  std::unique_lock lock(s.mutex);
  s.changed.wait_for(lock, std::chrono::seconds(10), [&] { return s.disconnected; });
}

}  // namespace tfdebug::ide
