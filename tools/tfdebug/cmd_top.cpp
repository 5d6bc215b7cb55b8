// tfdebug top RUN_DIR: a live dashboard of a run being written (loss, step rate, newest findings,
// gradient norm per module), full screen with ncurses on a terminal (top_screen.cpp); on a dumb
// terminal or a pipe, a plain-text summary at each refresh that saw something new.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "commands.hpp"
#include "run_follower.hpp"
#include "terminal_size.hpp"
#include "tfdebug/core/error.hpp"
#include "top_screen.hpp"
#include "top_view.hpp"

namespace tfdebug::cli {
namespace {

struct TopArgs {
  std::string run_dir;
  double interval = 0.5;
  bool once = false;
  bool plain = false;
  long long count = 0;
};

// The full screen needs a terminal that can address its cursor.
bool can_draw_screen() {
  if (::isatty(STDOUT_FILENO) == 0 || ::isatty(STDIN_FILENO) == 0) return false;
  const char* term = std::getenv("TERM");
  return term != nullptr && *term != '\0' && std::string_view(term) != "dumb";
}

void print_view(const RunFollower& run, const TopViewOptions& options) {
  for (const TopLine& line : top_view(run, RunFollower::Clock::now(), options))
    std::printf("%s\n", line.text.c_str());
  std::printf("\n");
  std::fflush(stdout);
}

int run_top(const TopArgs& args) {
  if (!(args.interval >= 0.05 && args.interval <= 3600))
    throw Error("--interval must be between 0.05 and 3600 seconds, got " + std::to_string(args.interval));
  if (args.count < 0) throw Error("--count must be 0 (no limit) or more, got " + std::to_string(args.count));
  RunFollower run(args.run_dir);
  TopViewOptions options;
  options.glyphs = viz::terminal_glyphs_from_environment();
  options.interval_s = args.interval;
  if (!args.once && !args.plain && can_draw_screen()) {
    run_top_screen(run, options);
    return 0;
  }
  // Plain text: the summary at each refresh that read something new; done after --once, after
  // --count refreshes, or when the run has finished.
  options.width = terminal_size(stdout).columns;
  options.height = 0;
  options.footer = false;
  const auto interval = std::chrono::duration<double>(args.interval);
  for (long long refresh = 1;; ++refresh) {
    const bool changed = run.poll(RunFollower::Clock::now());
    if (changed || refresh == 1) print_view(run, options);
    if (args.once || (args.count > 0 && refresh >= args.count)) break;
    if (run.report() && run.report()->summary.complete) break;
    std::this_thread::sleep_for(interval);
  }
  return 0;
}

}  // namespace

void register_top(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<TopArgs>();
  CLI::App* cmd = app.add_subcommand(
      "top", "Live dashboard of a run being written: loss, step rate, newest findings, gradient norms");
  cmd->add_option("run_dir", args->run_dir,
                  "The run directory (RunConfig::run_dir: report.json, metrics.jsonl)")
      ->required();
  cmd->add_option("--interval,-n", args->interval, "Seconds between refreshes")->capture_default_str();
  cmd->add_flag("--once", args->once, "Print one plain-text summary and exit");
  cmd->add_flag("--plain", args->plain,
                "Plain text even on a terminal: a summary at each refresh that saw something new "
                "(the default when stdout is not a terminal or TERM=dumb)");
  cmd->add_option("--count", args->count,
                  "Plain text: stop after this many refreshes (0: until the run finishes)")
      ->capture_default_str();
  cmd->footer(
      "\nOn a terminal: full screen, redrawn every --interval and on a resize; q quits.\n"
      "Plain text stops when report.json says the run finished.\n"
      "Examples:\n"
      "  tfdebug top runs/exp1\n"
      "  tfdebug top runs/exp1 --once          a snapshot, e.g. over a plain ssh command\n"
      "Exit codes: 0, 2 bad input (not a run directory, a metrics.jsonl line that is not one).");
  cmd->callback([args, &exit_code] { exit_code = run_top(*args); });
}

}  // namespace tfdebug::cli
