#include "tfdebug/ide/console.hpp"

#include <unistd.h>

#include <algorithm>

#include "line_reader.hpp"
#include "tfdebug/ide/commands.hpp"

namespace tfdebug::ide {

struct Console::Reader {
  const Stop* stop = nullptr;  // the frame being shown, for completion
  std::unique_ptr<detail::LineReader> lines;
};

Console::Console(ConsoleOptions options) : options_(std::move(options)), reader_(std::make_unique<Reader>()) {
  debugger_ = std::make_shared<Debugger>([this](const Stop& stop) { return on_stop(stop); });
  const bool terminal = isatty(fileno(options_.in)) != 0;
  const bool editing = options_.editing == ConsoleOptions::Editing::on ||
                       (options_.editing == ConsoleOptions::Editing::automatic && terminal);
  reader_->lines = std::make_unique<detail::LineReader>(options_.in, options_.out, editing,
                                                        [this] { return completions(reader_->stop); });
}

Console::~Console() = default;

std::vector<std::string> Console::completions(const Stop* stop) const {
  std::vector<std::string> words = command_names();
  for (const char* extra :
       {"op",        "module", "phase",   "step",        "nan",     "inf",     "nonfinite",
        "finding",   "if",     "exit",    "once",        "ignore",  "forward", "backward",
        "optimizer", "inputs", "outputs", "breakpoints", "tensors", "modules"})
    words.emplace_back(extra);
  for (std::string& m : debugger_->modules()) words.push_back(std::move(m));
  if (stop != nullptr) {
    for (std::string& name : stop->tensor_names()) words.push_back(std::move(name));
  }
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return words;
}

bool Console::start() {
  std::fprintf(
      options_.out,
      "tfdebug console: set breakpoints (help break), then 'continue' to run; 'help' lists the commands\n");
  std::fflush(options_.out);
  while (true) {
    const std::optional<std::string> line = reader_->lines->read(options_.prompt);
    if (!line) return true;  // nothing more to ask: run to the end
    const CommandResult r = run_command(*debugger_, *line, nullptr);
    std::fputs(r.text.c_str(), options_.out);
    std::fflush(options_.out);
    if (!r.resume) continue;
    switch (*r.resume) {
      case Resume::abort:
        debugger_->abort();
        return false;
      case Resume::continue_run:
        return true;
      case Resume::detach:
        debugger_->clear();
        return true;
      default:
        debugger_->interrupt();
        return true;  // next, step, finish: stop at the first op
    }
  }
}

Resume Console::on_stop(const Stop& stop) {
  std::fputs(stop_banner(*debugger_, stop).c_str(), options_.out);
  std::fflush(options_.out);
  reader_->stop = &stop;
  Resume resume = Resume::detach;
  while (true) {
    const std::optional<std::string> line = reader_->lines->read(options_.prompt);
    if (!line) {
      std::fputs("end of input: the run goes on without stopping\n", options_.out);
      break;
    }
    const CommandResult r = run_command(*debugger_, *line, &stop);
    std::fputs(r.text.c_str(), options_.out);
    if (r.resume) {
      resume = *r.resume;
      break;
    }
  }
  if (resume == Resume::abort) std::fputs("stopping the run\n", options_.out);
  std::fflush(options_.out);
  reader_->stop = nullptr;
  return resume;
}

std::unique_ptr<Console> console(Session& session, ConsoleOptions options) {
  auto c = std::make_unique<Console>(std::move(options));
  session.add_sink(c->debugger());
  c->start();
  return c;
}

}  // namespace tfdebug::ide
