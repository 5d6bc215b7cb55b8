// What both tfdebug executables share (tfdebug, and tfdebug-torch: the commands that load LibTorch,
// which `tfdebug` hands over to so that its other commands start in milliseconds): the app's
// name, version and footer, and running a command line with its exit code (0 success, 1 findings
// or differences, 2 bad input, 3 an unexpected failure).
#pragma once

#include <CLI/CLI.hpp>

namespace tfdebug::cli {

// The top-level app, with --version and the footer of examples and exit codes.
void describe_app(CLI::App& app);

// Parses argv with `app` (whose subcommands set exit_code from their callbacks) and runs it:
// returns the exit code.
int run_cli(CLI::App& app, int argc, char** argv, const int& exit_code);

}  // namespace tfdebug::cli
