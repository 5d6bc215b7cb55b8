// What `tfdebug top` shows, as lines of text that fit a width and a height: a header (run, step,
// step rate, status), the loss plot, the newest findings and the gradient norm of each module.
// The same lines go to the ncurses screen (top_screen.cpp) and, on a dumb terminal or a pipe, to
// stdout as plain text.
#pragma once

#include <string>
#include <vector>

#include "run_follower.hpp"
#include "terminal.hpp"
#include "tfdebug/viz/terminal_plot.hpp"

namespace tfdebug::cli {

struct TopLine {
  std::string text;  // at most `width` columns, no control characters
  Tone tone = Tone::plain;
};

struct TopViewOptions {
  int width = 80;
  int height = 24;  // lines; 0: as many as the content takes (plain-text summaries)
  viz::Glyphs glyphs = viz::Glyphs::unicode;
  bool footer = true;  // the key help line of the interactive screen
  double interval_s = 0.5;
};

std::vector<TopLine> top_view(const RunFollower& run, RunFollower::Clock::time_point now,
                              const TopViewOptions& options);

}  // namespace tfdebug::cli
