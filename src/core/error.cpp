#include "tfdebug/core/error.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace tfdebug::detail {

void hook_check_fail(const char* condition, const char* message, const char* file, int line) {
  throw InternalError(std::string("tfdebug internal error: ") + message + " (check failed: " + condition +
                      " at " + file + ":" + std::to_string(line) + ")");
}

void assert_fail(const char* condition, const char* message, const char* file, int line) noexcept {
  std::fprintf(stderr,
               "tfdebug internal error: %s\n  check failed: %s\n  at %s:%d\n"
               "This is a bug in tfdebug; please report it with the command that triggered it.\n",
               message, condition, file, line);
  std::abort();
}

}  // namespace tfdebug::detail
