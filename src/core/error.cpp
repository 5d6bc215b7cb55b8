#include "tfdebug/core/error.hpp"

#include <cstdio>
#include <cstdlib>

namespace tfdebug::detail {

void assert_fail(const char* condition, const char* message, const char* file, int line) noexcept {
  std::fprintf(stderr,
               "tfdebug internal error: %s\n  check failed: %s\n  at %s:%d\n"
               "This is a bug in tfdebug; please report it with the command that triggered it.\n",
               message, condition, file, line);
  std::abort();
}

}  // namespace tfdebug::detail
