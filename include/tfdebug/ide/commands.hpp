// The debugger's commands, as text in and text out: what `tfdebug console` reads at its prompt,
// and what a debug adapter's evaluate request runs. In the spirit of pdb and gdb:
//
//   break nan                  stop at the op that makes the first NaN (also: op, module, phase,
//                              step, inf, finding, if CONDITION; `help break`)
//   continue / next / step / finish / quit
//   where                      the module stack, phase and step
//   stats inputs               the statistics of the stopped op's inputs
//   print enc.weight[0, :4]    values; inspect, hist, save NAME FILE.npy, watch NAME, findings
//
//   tfdebug::ide::CommandResult r = tfdebug::ide::run_command(debugger, "stats inputs", &stop);
//   std::fputs(r.text.c_str(), stdout);
//   if (r.resume) return *r.resume;      // a command that lets the run go on
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tfdebug/ide/debugger.hpp"

namespace tfdebug::ide {

struct CommandResult {
  std::string text;              // what to show, lines ending in '\n' ("" when nothing)
  std::optional<Resume> resume;  // set by continue, next, step, finish, detach, quit
  bool error = false;            // text is a one-line error
};

// Runs one command line. `stop`: the stopped frame, or nullptr when the run is not stopped
// (commands that read tensors then answer with an error). Never throws for bad input.
CommandResult run_command(Debugger& debugger, std::string_view line, const Stop* stop);

// The command names, for completion ("break", "cond", ..., "quit").
const std::vector<std::string>& command_names();

// What the console shows when the run stops: the reason, the op, its module, phase and step, and
// the watched statistics.
std::string stop_banner(const Debugger& debugger, const Stop& stop);

}  // namespace tfdebug::ide
