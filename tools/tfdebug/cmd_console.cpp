// tfdebug console: the debugger's REPL (tfdebug::ide::console) around a training run of the demo
// model or of a TorchScript model with data (debug_target.hpp): set breakpoints, run, stop at the
// op that made the first NaN, look at its inputs, step (docs/debugger.md).
#include <cstdio>
#include <limits>
#include <memory>
#include <string>

#include "commands.hpp"
#include "debug_target.hpp"
#include "demo_model.hpp"
#include "demo_profile.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/ide/console.hpp"
#include "tfdebug/session/console_sink.hpp"
#include "tfdebug/session/session.hpp"

namespace tfdebug::cli {
namespace {

struct ConsoleCliOptions {
  DebugTargetOptions target;
  std::int64_t every = 20;
};

int run_console(const ConsoleCliOptions& options) {
  const DebugTarget target(options.target);
  std::printf("tfdebug console: %s\n", target.description().c_str());
  RunConfig run;
  // Breakpoints on ops need every op observed: diagnose (the default here).
  run.tier = target.tier();
  Session session(run);
  session.add_sink(std::make_shared<ConsoleSink>(stdout, use_colour(stdout)));
  target.add_sinks(session);
  const auto console = ide::console(session);
  std::int64_t steps_run = 0;
  if (!console->aborted()) {
    steps_run = target.run(
        session, [&] { return console->aborted(); },
        [&](std::int64_t step, std::optional<double> loss) {
          if (options.every > 0 && (step % options.every == 0 || step + 1 == target.steps()))
            std::printf("step %5lld  loss %s\n", static_cast<long long>(step),
                        loss_text(loss.value_or(std::numeric_limits<double>::quiet_NaN())).c_str());
        });
  }
  const RunSummary summary = session.finish();
  std::printf("%s after %lld of %lld steps; %zu findings; stopped %lld time(s)\n",
              console->aborted() ? "run stopped by quit" : "run finished", static_cast<long long>(steps_run),
              static_cast<long long>(target.steps()), summary.findings.size(),
              static_cast<long long>(console->debugger()->stops()));
  std::fflush(stdout);
  return 0;
}

}  // namespace

void register_console(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<ConsoleCliOptions>();
  auto* cmd =
      app.add_subcommand("console",
                         "Debug a training run interactively: breakpoints on ops, modules, the first NaN, "
                         "statistics; step; inspect tensors (docs/debugger.md)");
  cmd->add_flag("--demo", options->target.demo,
                "Run the demo's transformer LM (tfdebug demo) under the console");
  cmd->add_option("--model", options->target.model,
                  "Or a TorchScript model (torch.jit.script(model).save(path)) run on --input");
  cmd->add_option("--input", options->target.input,
                  "--model's input: a .npy array (floats as f32, integers as i64)");
  cmd->add_option("--labels", options->target.labels,
                  "--model's class indices (.npy): adds a cross-entropy loss and its backward to each step");
  cmd->add_option("--steps", options->target.steps,
                  "Training steps (default: 200 for --demo, 1 for --model)");
  cmd->add_option("--seed", options->target.seed, "--demo: random seed (weights and data)")
      ->capture_default_str();
  cmd->add_option("--fault", options->target.fault,
                  "--demo: injected fault: " + std::string(demo::kFaultNames))
      ->capture_default_str();
  cmd->add_option("--tier", options->target.tier,
                  "What tfdebug observes: watch or diagnose (op breakpoints need diagnose)")
      ->capture_default_str();
  cmd->add_option("--out", options->target.out,
                  "Write OUT/shapes.json when the run ends: every tensor's shape and dtype by module "
                  "(docs/debugger.md)");
  cmd->add_option("--every", options->every, "Print the loss every N steps (0: never)")
      ->capture_default_str();
  cmd->footer(
      "Commands come from the terminal (readline: history, TAB completion) or, when standard input is not a "
      "terminal, one per line from it. Exit 0 when the run finished or was quit, 2 for bad options.");
  cmd->callback([options, &exit_code] { exit_code = run_console(*options); });
}

}  // namespace tfdebug::cli
