#include "terminal_size.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace tfdebug::cli {
namespace {

int positive_env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return 0;
  char* end = nullptr;
  const long n = std::strtol(value, &end, 10);
  return *end == '\0' && n > 0 && n < 100'000 ? static_cast<int>(n) : 0;
}

}  // namespace

TerminalSize terminal_size(std::FILE* stream) {
  TerminalSize size;
  winsize window{};
  const int fd = ::fileno(stream);
  if (fd >= 0 && ::isatty(fd) && ::ioctl(fd, TIOCGWINSZ, &window) == 0) {
    if (window.ws_col > 0) size.columns = window.ws_col;
    if (window.ws_row > 0) size.rows = window.ws_row;
  }
  if (const int columns = positive_env("COLUMNS")) size.columns = columns;
  if (const int rows = positive_env("LINES")) size.rows = rows;
  return size;
}

}  // namespace tfdebug::cli
