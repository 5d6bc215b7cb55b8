// The size of the terminal a command writes to, for output that fits it (tfdebug plot, top).
#pragma once

#include <cstdio>

namespace tfdebug::cli {

struct TerminalSize {
  int columns = 80;
  int rows = 24;
};

// COLUMNS and LINES when set to a positive number (a user's choice wins); else the terminal's own
// size when `stream` is one (ioctl TIOCGWINSZ); else 80 x 24.
TerminalSize terminal_size(std::FILE* stream);

}  // namespace tfdebug::cli
