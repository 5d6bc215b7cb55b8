// The tfdebug subcommands. Each register_* adds one subcommand to the app; its callback runs
// the command and throws tfdebug::Error for anything the user got wrong (exit code 2).
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace tfdebug::cli {

void register_diff(CLI::App& app);
void register_graph(CLI::App& app);
void register_inspect(CLI::App& app);
void register_stats(CLI::App& app);
void register_doctor(CLI::App& app);
void register_dtypes(CLI::App& app);
#ifdef TFDEBUG_HAVE_TORCH
void register_demo(CLI::App& app);  // cmd_demo.cpp, built with LibTorch only
#endif
void register_trace(CLI::App& app);
void register_regress(CLI::App& app);

}  // namespace tfdebug::cli
