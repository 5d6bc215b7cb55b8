// tfdebug: the command-line tool. `tfdebug --help` lists the subcommands.
//
// Note [Two executables]: a program linked against LibTorch loads ~290 shared libraries before
// main (0.4 s), so every command would pay that, `--version` too. `tfdebug` links no LibTorch:
// the commands that train or trace a LibTorch model (demo, graph --demo) live in tfdebug-torch,
// which this program execs with the same arguments, found next to it (the build tree) or in
// ../libexec/tfdebug (an installed tree). Everything else starts in milliseconds
// (docs/performance.md, "Start-up").
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <string>
#include <string_view>

#include "cli_main.hpp"
#include "commands.hpp"

namespace {

// The index of the subcommand: the first argument that is not an option nor --color's value
// (argc when there is none).
int command_index(int argc, char** argv) {
  int command = 1;
  while (command < argc && argv[command][0] == '-') {
    const std::string_view option = argv[command];
    command += option == "--color" || option == "--colour" ? 2 : 1;
  }
  return std::min(command, argc);
}

// Whether the command line is one of tfdebug-torch's: its subcommand is `demo`, `explain`, `attack`,
// `robust`, `console` or `dap`, or
// `graph` with --demo.
bool needs_torch(int argc, char** argv) {
  const int command = command_index(argc, argv);
  if (command >= argc) return false;
  const std::string_view name = argv[command];
  if (name == "demo" || name == "explain" || name == "attack" || name == "robust" || name == "console" ||
      name == "dap")
    return true;
  if (name != "graph") return false;
  for (int i = command + 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--demo") return true;
  }
  return false;
}

// Replaces this process with tfdebug-torch; returns only when that fails (exit code 2).
int exec_torch(int argc, char** argv) {
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const std::filesystem::path dir = ec ? std::filesystem::path(argv[0]).parent_path() : self.parent_path();
  const std::filesystem::path candidates[] = {dir / "tfdebug-torch",
                                              dir / ".." / "libexec" / "tfdebug" / "tfdebug-torch"};
  for (const auto& candidate : candidates) {
    if (::access(candidate.c_str(), X_OK) != 0) continue;
    ::execv(candidate.c_str(), argv);
    std::fprintf(stderr, "tfdebug: error: cannot run %s: %s\n", candidate.c_str(), std::strerror(errno));
    return 2;
  }
  std::fprintf(
      stderr,
      "tfdebug: error: '%s' needs LibTorch, and tfdebug-torch (the part of tfdebug built with it) is "
      "not in %s or %s: build tfdebug with libtorch-dev installed\n",
      argv[command_index(argc, argv)], candidates[0].parent_path().c_str(),
      candidates[1].parent_path().lexically_normal().c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (needs_torch(argc, argv)) return exec_torch(argc, argv);
    CLI::App app;
    tfdebug::cli::describe_app(app);
    int exit_code = 0;
    tfdebug::cli::register_inspect(app, exit_code);
    tfdebug::cli::register_scan(app, exit_code);
    tfdebug::cli::register_diff(app, exit_code);
    tfdebug::cli::register_graph(app, exit_code);
    tfdebug::cli::register_stats(app, exit_code);
    tfdebug::cli::register_doctor(app, exit_code);
    tfdebug::cli::register_dtypes(app, exit_code);
#ifdef TFDEBUG_TORCH_CLI
    // Listed for --help; the command line itself goes to tfdebug-torch (needs_torch).
    app.add_subcommand(
        "demo", "Train a small transformer with a planted fault and watch tfdebug diagnose it (LibTorch)");
    app.add_subcommand(
        "explain",
        "Why did the model give this output? Attributions of one input (LibTorch; docs/interpretability.md)");
    app.add_subcommand("attack",
                       "How easily does the model break? Adversarial examples for a classifier (LibTorch; "
                       "docs/robustness.md)");
    app.add_subcommand(
        "robust",
        "How easily does it break? Certified radii, perturbation curves, what-if, edge cases (LibTorch; "
        "docs/robustness.md)");
    app.add_subcommand(
        "console",
        "Debug a training run interactively: breakpoints on ops, modules, the first NaN, statistics; "
        "step; inspect tensors (LibTorch; docs/debugger.md)");
    app.add_subcommand(
        "dap",
        "Debug Adapter Protocol server (VS Code) around a run of the demo (LibTorch; docs/debugger.md)");
#endif
    tfdebug::cli::register_trace(app, exit_code);
    tfdebug::cli::register_regress(app, exit_code);
    tfdebug::cli::register_report(app, exit_code);
    tfdebug::cli::register_plot(app, exit_code);
    tfdebug::cli::register_top(app, exit_code);
    tfdebug::cli::register_serve(app, exit_code);
    tfdebug::cli::register_heatmap(app, exit_code);
    tfdebug::cli::register_animate(app, exit_code);
    return tfdebug::cli::run_cli(app, argc, argv, exit_code);
  } catch (...) {
    std::fputs("tfdebug: unexpected failure\n", stderr);
    return 3;
  }
}
