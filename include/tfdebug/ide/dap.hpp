// A Debug Adapter Protocol server (VS Code and other DAP clients) over a Debugger: breakpoints on
// modules and ops (function breakpoints, with conditions on statistics), NaN/Inf and rule
// findings (exception breakpoints), the stopped frame as a stack (the op, then its module path
// chain), scopes (output, inputs, parameters, gradients) and variables (a tensor shows dtype,
// shape and statistics and expands into slices and values), evaluate (the console's commands),
// continue / next / stepIn / stepOut / pause, `output` events for findings. It speaks on a pair
// of file descriptors: standard input and output, or a loopback TCP connection.
//
//   auto server = tfdebug::ide::DapServer::listen(4711);    // or DapServer(0, 1): stdio
//   session.add_sink(server->debugger());
//   session.add_sink(server->findings_sink());
//   if (server->wait_for_start()) {                         // the client's configurationDone
//     ... the training loop, until server->debugger()->aborted() ...
//   }
//   session.finish();
//   server->finish(0);                                      // terminated and exited events
//
// `tfdebug dap` runs the demo this way (docs/debugger.md).
#pragma once

#include <memory>
#include <string>

#include "tfdebug/ide/debugger.hpp"

namespace tfdebug::ide {

class DapServer {
 public:
  // Reads requests from `in_fd`, writes responses and events to `out_fd` (a socket: the same fd
  // twice). Starts its reader thread.
  DapServer(int in_fd, int out_fd);
  ~DapServer();
  DapServer(const DapServer&) = delete;
  DapServer& operator=(const DapServer&) = delete;

  // Listens on 127.0.0.1:`port` (0: a free port, printed to stderr) and accepts one client.
  // Throws tfdebug::Error when it cannot listen.
  static std::unique_ptr<DapServer> listen(int port);

  const std::shared_ptr<Debugger>& debugger() const noexcept;
  // A Sink that sends each finding as an `output` event.
  std::shared_ptr<Sink> findings_sink() const;
  // Blocks until the client's configurationDone (true) or its disconnect or the end of the
  // input before it (false; also false when it disconnected with terminateDebuggee).
  bool wait_for_start();
  // The launch or attach request's arguments, as JSON text ("{}" when none came).
  std::string launch_arguments() const;
  // The run ended: `terminated` and `exited` events; waits (at most 10 s) for the client to
  // disconnect.
  void finish(int exit_code);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tfdebug::ide
