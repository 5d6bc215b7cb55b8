// The debugger's console: a REPL (GNU readline when the input is a terminal: history,
// completion of commands, module paths and tensor names; plain lines otherwise) around a
// training run, over a Debugger on its Session. It is what `tfdebug console` runs, and what a
// training program of the user's own opens:
//
//   tfdebug::Session session(config);
//   auto console = tfdebug::ide::console(session);   // prompts: set breakpoints, then `continue`
//   auto debug = tfdebug::torch::attach(session, *model);
//   for (std::int64_t step = 0; step < steps && !console->aborted(); ++step) {
//     debug.step(step, [&] { ...; return loss.item<double>(); });   // stops at breakpoints
//   }
//
// At each stop the console shows where the run is and reads commands (commands.hpp; `help`)
// until one lets the run go on. At the end of the input the run goes on without stopping again.
#pragma once

#include <cstdio>
#include <memory>
#include <string>

#include "tfdebug/ide/debugger.hpp"
#include "tfdebug/session/session.hpp"

namespace tfdebug::ide {

struct ConsoleOptions {
  std::FILE* in = stdin;
  std::FILE* out = stdout;
  // Line editing through readline: when `in` is a terminal (the default), never, or always.
  enum class Editing : std::uint8_t { automatic, off, on } editing = Editing::automatic;
  std::string prompt = "(tfdebug) ";
};

class Console {
 public:
  explicit Console(ConsoleOptions options = {});
  ~Console();
  Console(const Console&) = delete;
  Console& operator=(const Console&) = delete;

  // The Debugger whose stops this console handles: add it to a Session as a sink.
  const std::shared_ptr<Debugger>& debugger() const noexcept { return debugger_; }
  // Reads commands before the run starts, until one starts it (continue, next, ...); quit
  // there aborts the run before its first step. Returns false when the run should not start.
  bool start();
  bool aborted() const noexcept { return debugger_->aborted(); }

 private:
  Resume on_stop(const Stop& stop);
  std::vector<std::string> completions(const Stop* stop) const;

  ConsoleOptions options_;
  std::shared_ptr<Debugger> debugger_;
  struct Reader;
  std::unique_ptr<Reader> reader_;
};

// A console on `session`: its Debugger added as a sink, and start() run (the prompt before the
// first step). The console must outlive the run.
std::unique_ptr<Console> console(Session& session, ConsoleOptions options = {});

}  // namespace tfdebug::ide
