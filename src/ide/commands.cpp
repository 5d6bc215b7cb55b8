#include "tfdebug/ide/commands.hpp"

#include <cstdio>
#include <exception>
#include <map>

#include "tfdebug/core/error.hpp"
#include "tfdebug/ide/tensor_tools.hpp"
#include "words.hpp"

namespace tfdebug::ide {

namespace {

struct Help {
  const char* usage;
  const char* text;
};

// In the order `help` lists them.
const std::vector<std::pair<std::string, Help>>& help_table() {
  static const std::vector<std::pair<std::string, Help>> kTable = {
      {"break",
       {"break PLACE [phase] [if CONDITION] [ignore N] [thread N|any] [once]",
        "Stop at PLACE: op GLOB (aten::log*), module GLOB [exit] (blocks.1.mlp), phase forward|backward|\n"
        "    optimizer, step N, nan | inf | nonfinite (the op that makes the first NaN/Inf from finite\n"
        "    inputs), finding [RULE]; or only 'if CONDITION' (any op). A phase word after the place\n"
        "    limits it to that phase. CONDITION: STAT OP NUMBER [and ...], STAT one of min max mean std\n"
        "    abs_max l1 l2 count nan inf nonfinite zero negative positive (abs_max > 1e4, std < 1e-6).\n"
        "    thread N: only thread N (where says which); thread any: any thread, also while another\n"
        "    steps (without it, a step is never taken over by another thread's breakpoint)."}},
      {"tbreak", {"tbreak PLACE ...", "Like break, once."}},
      {"cond", {"cond ID [CONDITION]", "Set (or, without one, remove) breakpoint ID's condition."}},
      {"ignore", {"ignore ID N", "Let breakpoint ID's next N hits pass."}},
      {"delete", {"delete [ID]", "Delete breakpoint ID (all without ID)."}},
      {"disable", {"disable ID", "Keep breakpoint ID but do not stop at it."}},
      {"enable", {"enable ID", "Stop at breakpoint ID again."}},
      {"info",
       {"info [breakpoints|watch|tensors|modules]",
        "List breakpoints (with hit counts), watches, the\n"
        "    stopped frame's tensors, or the modules seen."}},
      {"continue", {"continue (c)", "Go on to the next breakpoint."}},
      {"next", {"next (n)", "Go on to the next op of this thread."}},
      {"step", {"step (s)", "Go on to the next op in another module."}},
      {"finish",
       {"finish (f)", "Go on to the end of the training step (stops at the next step's first op)."}},
      {"where", {"where (bt)", "The stopped op, its module stack, phase and step."}},
      {"print",
       {"print NAME[INDEX] (p)",
        "Values of a tensor: output, input0.., a parameter, PARAM.grad;\n"
        "    INDEX as numpy's: [0, 2:5, ::2]."}},
      {"inspect", {"inspect NAME[INDEX]", "dtype, shape, strides and statistics of a tensor."}},
      {"stats",
       {"stats NAME[INDEX] | inputs | outputs",
        "Statistics (the stats kernel) of a tensor, or of every input."}},
      {"hist", {"hist NAME[INDEX] [BINS]", "A histogram of a tensor's finite values (10 bins)."}},
      {"watch",
       {"watch [NAME | GLOB]",
        "Show a tensor's statistics at every stop; a glob over 'MODULE OP'\n"
        "    ('blocks.1.mlp*', '*aten::log') keeps the last matching output's, and the output\n"
        "    itself (up to 2^20 values): watch N's is the tensor 'watchN' at a stop."}},
      {"unwatch", {"unwatch NAME", "Stop watching."}},
      {"findings", {"findings", "The findings of the rules so far."}},
      {"save", {"save NAME[INDEX] FILE.npy", "Write a tensor as a .npy file (numpy.load reads it)."}},
      {"detach", {"detach", "Let the run go on to its end without stopping."}},
      {"quit", {"quit (q)", "Stop the run (the current step finishes without stopping) and leave."}},
      {"help", {"help [COMMAND]", "This list, or one command's help."}},
  };
  return kTable;
}

const std::map<std::string, std::string, std::less<>>& aliases() {
  static const std::map<std::string, std::string, std::less<>> kTable = {
      {"b", "break"},         {"c", "continue"}, {"cont", "continue"}, {"run", "continue"},
      {"n", "next"},          {"s", "step"},     {"f", "finish"},      {"bt", "where"},
      {"w", "where"},         {"p", "print"},    {"q", "quit"},        {"exit", "quit"},
      {"d", "delete"},        {"h", "help"},     {"i", "info"},        {"condition", "cond"},
      {"breakpoints", "info"}};
  return kTable;
}

std::string module_name(std::string_view module) {
  return module.empty() ? "(top level)" : std::string(module);
}

const Stop& need_stop(const Stop* stop) {
  if (stop == nullptr) throw Error("the run is not stopped: set a breakpoint and 'continue'");
  return *stop;
}

// A tensor of the stop by "NAME[INDEX]".
TensorView tensor_of(const Stop& stop, std::string_view text) {
  const IndexedName named = split_index(text);
  if (named.name.empty()) throw Error("expected a tensor name (output, input0, a parameter; 'info tensors')");
  const std::optional<TensorView> view = stop.tensor(named.name);
  if (!view) throw Error("no tensor '" + named.name + "' here; 'info tensors' lists them");
  return named.index.empty() ? *view : slice(*view, named.index);
}

int id_of(std::string_view text) {
  const auto id = detail::parse_integer(text);
  if (!id || *id < 1 || *id > 1000000)
    throw Error("expected a breakpoint number, got '" + std::string(text) + "'");
  return int(*id);
}

std::string breakpoint_list(const Debugger& debugger) {
  const std::vector<Breakpoint> all = debugger.breakpoints();
  if (all.empty()) return "no breakpoints\n";
  std::string out;
  for (const Breakpoint& b : all) {
    out += std::to_string(b.id) + "  " + b.text() + "  (hit " + std::to_string(b.hits) + ")\n";
  }
  return out;
}

std::string watch_list(const Debugger& debugger, const Stop* stop) {
  std::string out;
  int position = 0;
  for (const Watched& w : debugger.watched()) {
    ++position;
    std::optional<TensorView> view = stop ? stop->tensor(split_index(w.name).name) : std::nullopt;
    if (view) {
      out += "watch " + w.name + ": " + stats_text(compute_stats(tensor_of(*stop, w.name))) + "\n";
    } else if (w.stats) {
      out += "watch " + w.name + ": " + stats_text(*w.stats) + "  (" + w.where + ", step " +
             std::to_string(w.step) + ")";
      if (w.value)
        out += "  kept as watch" + std::to_string(position) + " " + w.value->view().describe();
      else
        out += "  not kept (" + std::to_string(w.numel) + " values)";
      out += "\n";
    } else {
      out += "watch " + w.name + ": not seen yet\n";
    }
  }
  return out;
}

std::string where_text(const Stop& stop) {
  std::string out = "#0 " + stop.op() + "  " + stop.observation().value.describe() + "  (" +
                    std::string(role_name(stop.observation().role)) + ")\n";
  const std::vector<std::string> stack = stop.module_stack();
  int depth = 1;
  for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
    out.append("#").append(std::to_string(depth++)).append(" ").append(*it).append("\n");
  }
  out.append("#").append(std::to_string(depth)).append(" (model)\n");
  out += "phase " + std::string(phase_name(stop.phase())) + ", step " + std::to_string(stop.step());
  if (stop.thread() > 0) out += ", thread " + std::to_string(stop.thread());
  out += "\n";
  return out;
}

std::string tensors_text(const Stop& stop) {
  std::string out;
  for (const std::string& name : stop.tensor_names()) {
    const std::optional<TensorView> view = stop.tensor(name);
    out += name + "  " + (view ? view->describe() : std::string("(not readable)")) + "\n";
  }
  return out;
}

std::string findings_text(const Debugger& debugger) {
  const std::vector<Finding> all = debugger.findings();
  if (all.empty()) return "no findings yet\n";
  std::string out;
  for (const Finding& f : all) {
    out += std::string(severity_name(f.severity)) + "  " + f.rule + "  step " + std::to_string(f.step) +
           "  " + module_name(f.module) + " " + f.op + ": " + f.message + "\n";
  }
  return out;
}

std::string help_text(std::string_view topic) {
  std::string out;
  if (!topic.empty()) {
    const auto alias = aliases().find(topic);
    const std::string name = alias != aliases().end() ? alias->second : std::string(topic);
    for (const auto& [command, help] : help_table()) {
      if (command == name) return std::string(help.usage) + "\n    " + help.text + "\n";
    }
    throw Error("no command '" + std::string(topic) + "'; 'help' lists them");
  }
  for (const auto& [command, help] : help_table()) {
    out += std::string(help.usage) + "\n    " + help.text + "\n";
  }
  return out;
}

CommandResult run(Debugger& debugger, std::string_view line, const Stop* stop) {
  CommandResult result;
  const std::string_view text = detail::trim(line);
  if (text.empty()) return result;
  const std::size_t space = text.find_first_of(" \t");
  std::string_view word = text.substr(0, space);
  const std::string_view rest =
      space == std::string_view::npos ? std::string_view{} : detail::trim(text.substr(space));
  const auto alias = aliases().find(word);
  const std::string command = alias != aliases().end() ? alias->second : std::string(word);
  const std::vector<std::string_view> args = detail::split_words(rest);
  std::string& out = result.text;

  if (command == "break" || command == "tbreak") {
    if (rest.empty()) return {breakpoint_list(debugger), std::nullopt, false};
    Breakpoint b = parse_breakpoint(rest);
    if (command == "tbreak") b.once = true;
    const int id = debugger.add(b);
    out = "breakpoint " + std::to_string(id) + ": " + b.text() + "\n";
  } else if (command == "cond") {
    if (args.empty()) throw Error("cond: expected a breakpoint number and a condition");
    const int id = id_of(args[0]);
    const std::string_view condition = detail::trim(rest.substr(args[0].size()));
    std::optional<Condition> c;
    if (!condition.empty()) c = parse_condition(condition);
    if (!debugger.set_condition(id, c)) throw Error("no breakpoint " + std::to_string(id));
    out = c ? "breakpoint " + std::to_string(id) + " stops if " + c->text() + "\n"
            : "breakpoint " + std::to_string(id) + " has no condition now\n";
  } else if (command == "ignore") {
    if (args.size() != 2) throw Error("ignore: expected a breakpoint number and a count");
    const int id = id_of(args[0]);
    const auto n = detail::parse_integer(args[1]);
    if (!n || *n < 0) throw Error("ignore: expected a count >= 0, got '" + std::string(args[1]) + "'");
    if (!debugger.set_ignore(id, *n)) throw Error("no breakpoint " + std::to_string(id));
    out = "breakpoint " + std::to_string(id) + " lets its next " + std::to_string(*n) + " hits pass\n";
  } else if (command == "delete") {
    if (args.empty()) {
      debugger.clear();
      out = "deleted every breakpoint\n";
    } else {
      for (std::string_view a : args) {
        const int id = id_of(a);
        if (!debugger.remove(id)) throw Error("no breakpoint " + std::to_string(id));
        out += "deleted breakpoint " + std::to_string(id) + "\n";
      }
    }
  } else if (command == "disable" || command == "enable") {
    if (args.size() != 1) throw Error(command + ": expected a breakpoint number");
    const int id = id_of(args[0]);
    if (!debugger.set_enabled(id, command == "enable")) throw Error("no breakpoint " + std::to_string(id));
    out = "breakpoint " + std::to_string(id) + (command == "enable" ? " enabled\n" : " disabled\n");
  } else if (command == "info") {
    const std::string_view what = args.empty() ? "breakpoints" : args[0];
    if (what == "breakpoints" || what == "b" || what == "break")
      out = breakpoint_list(debugger);
    else if (what == "watch" || what == "watches")
      out = watch_list(debugger, stop);
    else if (what == "tensors")
      out = tensors_text(need_stop(stop));
    else if (what == "modules") {
      for (const std::string& m : debugger.modules()) out += m + "\n";
      if (out.empty()) out = "no modules seen yet\n";
    } else {
      throw Error("info: expected breakpoints, watch, tensors or modules");
    }
  } else if (command == "continue") {
    result.resume = Resume::continue_run;
  } else if (command == "next") {
    result.resume = Resume::next_op;
  } else if (command == "step") {
    result.resume = Resume::next_module;
  } else if (command == "finish") {
    result.resume = Resume::finish_step;
  } else if (command == "detach") {
    result.resume = Resume::detach;
  } else if (command == "quit") {
    result.resume = Resume::abort;
  } else if (command == "where") {
    out = where_text(need_stop(stop));
  } else if (command == "print") {
    if (rest.empty()) throw Error("print: expected a tensor name");
    out = values_text(tensor_of(need_stop(stop), rest)) + "\n";
  } else if (command == "inspect") {
    if (rest.empty()) throw Error("inspect: expected a tensor name");
    const TensorView view = tensor_of(need_stop(stop), rest);
    out = std::string(rest) + "  " + view.describe() + "\n  " + stats_text(compute_stats(view)) + "\n";
  } else if (command == "stats") {
    const Stop& s = need_stop(stop);
    const std::string_view what = rest.empty() ? std::string_view("output") : rest;
    if (what == "inputs") {
      if (s.point().inputs().empty()) out = "this op kept no inputs\n";
      for (std::size_t i = 0; i < s.point().inputs().size(); ++i) {
        const TensorView in = s.point().inputs()[i];
        out +=
            "input" + std::to_string(i) + "  " + in.describe() + "  " + stats_text(compute_stats(in)) + "\n";
      }
    } else {
      const std::string name = what == "outputs" ? "output" : std::string(what);
      const TensorView view = tensor_of(s, name);
      out = name + "  " + view.describe() + "  " + stats_text(compute_stats(view)) + "\n";
    }
  } else if (command == "hist") {
    if (args.empty() || args.size() > 2)
      throw Error("hist: expected a tensor name and optionally a bin count");
    int bins = 10;
    if (args.size() == 2) {
      const auto n = detail::parse_integer(args[1]);
      if (!n || *n < 1 || *n > 1000)
        throw Error("hist: expected 1 to 1000 bins, got '" + std::string(args[1]) + "'");
      bins = int(*n);
    }
    out = histogram_text(tensor_of(need_stop(stop), args[0]), bins);
  } else if (command == "watch") {
    if (rest.empty()) {
      out = watch_list(debugger, stop);
      if (out.empty()) out = "no watches\n";
    } else {
      debugger.watch(std::string(rest));
      out = "watching " + std::string(rest) + "\n";
    }
  } else if (command == "unwatch") {
    if (!debugger.unwatch(rest)) throw Error("unwatch: not watching '" + std::string(rest) + "'");
    out = "stopped watching " + std::string(rest) + "\n";
  } else if (command == "findings") {
    out = findings_text(debugger);
  } else if (command == "save") {
    if (args.size() != 2) throw Error("save: expected a tensor name and a file name (x.npy)");
    const TensorView view = tensor_of(need_stop(stop), args[0]);
    save_npy(view, std::string(args[1]));
    out = "saved " + std::string(args[0]) + " " + view.describe() + " to " + std::string(args[1]) + "\n";
  } else if (command == "help") {
    out = help_text(rest);
  } else {
    throw Error("unknown command '" + std::string(word) + "'; 'help' lists the commands");
  }
  return result;
}

}  // namespace

CommandResult run_command(Debugger& debugger, std::string_view line, const Stop* stop) {
  try {
    return run(debugger, line, stop);
  } catch (const std::exception& e) {
    return {std::string("error: ") + e.what() + "\n", std::nullopt, true};
  }
}

const std::vector<std::string>& command_names() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> all;
    for (const auto& [command, help] : help_table()) all.push_back(command);
    return all;
  }();
  return kNames;
}

std::string stop_banner(const Debugger& debugger, const Stop& stop) {
  std::string out = "stopped: " + stop.reason().text + "\n  " + stop.op() + " in " +
                    module_name(stop.observation().module) + "  (" + std::string(phase_name(stop.phase())) +
                    ", step " + std::to_string(stop.step()) + ")  " + stop.observation().value.describe() +
                    "\n";
  for (const Finding& f : stop.raised()) {
    out += "  finding: " + std::string(severity_name(f.severity)) + " " + f.rule + ": " + f.message + "\n";
  }
  std::string watches;
  try {
    watches = watch_list(debugger, &stop);
  } catch (const std::exception& e) {
    watches = std::string("watch: ") + e.what() + "\n";
  }
  return out + watches;
}

}  // namespace tfdebug::ide
