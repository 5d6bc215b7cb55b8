// tfdebug-torch: the tfdebug commands that load LibTorch (Note [Two executables] in main.cpp).
// `tfdebug demo ...`, `tfdebug explain ...`, `tfdebug attack ...`, `tfdebug robust ...`,
// `tfdebug console ...`, `tfdebug dap ...` and `tfdebug graph --demo ...` exec this program with
// their arguments.
#include <cstdio>

#include "cli_main.hpp"
#include "commands.hpp"

int main(int argc, char** argv) {
  try {
    CLI::App app;
    tfdebug::cli::describe_app(app);
    int exit_code = 0;
    tfdebug::cli::register_demo(app, exit_code);
    tfdebug::cli::register_graph(app, exit_code);
    tfdebug::cli::register_explain(app, exit_code);
    tfdebug::cli::register_robust(app, exit_code);
    tfdebug::cli::register_attack(app, exit_code);
    tfdebug::cli::register_console(app, exit_code);
    tfdebug::cli::register_dap(app, exit_code);
    return tfdebug::cli::run_cli(app, argc, argv, exit_code);
  } catch (...) {
    std::fputs("tfdebug: unexpected failure\n", stderr);
    return 3;
  }
}
