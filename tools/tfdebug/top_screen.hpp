// The interactive screen of `tfdebug top` (ncurses): the only file of the CLI that uses ncurses.
#pragma once

#include "run_follower.hpp"
#include "top_view.hpp"

namespace tfdebug::cli {

// Shows top_view() full screen, polling `run` every options.interval_s, redrawing on a resize,
// until `q` (or SIGINT/SIGTERM/SIGHUP). Restores the terminal on the way out, also when poll
// throws (tfdebug::Error goes on to the caller).
void run_top_screen(RunFollower& run, TopViewOptions options);

}  // namespace tfdebug::cli
