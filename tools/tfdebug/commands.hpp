// The tfdebug subcommands. Each register_* adds one subcommand to the app; its callback runs
// the command, sets `exit_code` (0, or 1 for findings, differences or slowdowns) and throws
// tfdebug::Error for anything the user got wrong (exit code 2). demo is tfdebug-torch's
// (Note [Two executables] in main.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace tfdebug::cli {

void register_diff(CLI::App& app, int& exit_code);
void register_graph(CLI::App& app, int& exit_code);
void register_inspect(CLI::App& app, int& exit_code);
void register_scan(CLI::App& app, int& exit_code);
void register_stats(CLI::App& app, int& exit_code);
void register_doctor(CLI::App& app, int& exit_code);
void register_dtypes(CLI::App& app, int& exit_code);
#ifdef TFDEBUG_HAVE_TORCH
void register_demo(CLI::App& app, int& exit_code);     // cmd_demo.cpp, built with LibTorch only
void register_explain(CLI::App& app, int& exit_code);  // cmd_explain.cpp, built with LibTorch only
void register_robust(CLI::App& app, int& exit_code);   // cmd_robust.cpp, built with LibTorch only
void register_attack(CLI::App& app, int& exit_code);   // cmd_attack.cpp, built with LibTorch only
void register_console(CLI::App& app, int& exit_code);  // cmd_console.cpp, built with LibTorch only
void register_dap(CLI::App& app, int& exit_code);      // cmd_dap.cpp, built with LibTorch only
#endif
void register_trace(CLI::App& app, int& exit_code);
void register_regress(CLI::App& app, int& exit_code);
void register_report(CLI::App& app, int& exit_code);   // cmd_report.cpp
void register_plot(CLI::App& app, int& exit_code);     // cmd_plot.cpp
void register_top(CLI::App& app, int& exit_code);      // cmd_top.cpp
void register_serve(CLI::App& app, int& exit_code);    // cmd_serve.cpp
void register_heatmap(CLI::App& app, int& exit_code);  // cmd_heatmap.cpp
void register_animate(CLI::App& app, int& exit_code);  // cmd_animate.cpp

}  // namespace tfdebug::cli
