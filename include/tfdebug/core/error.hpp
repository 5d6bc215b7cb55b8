// Errors: two intents, two mechanisms.
//
//   tfdebug::Error     something a user can get wrong (a bad file, a bad shape, an unknown
//                      dtype name). The message names the thing and says what was expected.
//                      The CLI turns it into exit code 2.
//   TFDEBUG_ASSERT     an internal invariant of tfdebug itself. Failing it is a bug in tfdebug:
//                      it prints the condition and location and aborts.
//
//   if (shape.size() > kMaxRank)
//     throw tfdebug::Error("tensor 'w': rank " + std::to_string(shape.size()) +
//                          " exceeds the supported maximum of 8");
//   TFDEBUG_ASSERT(offset <= size, "chunk offset past the end");
#pragma once

#include <stdexcept>
#include <string>

namespace tfdebug {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

namespace detail {
[[noreturn]] void assert_fail(const char* condition, const char* message, const char* file,
                              int line) noexcept;
}  // namespace detail

}  // namespace tfdebug

#define TFDEBUG_ASSERT(condition, message)                                       \
  do {                                                                           \
    if (!(condition)) [[unlikely]] {                                             \
      ::tfdebug::detail::assert_fail(#condition, (message), __FILE__, __LINE__); \
    }                                                                            \
  } while (false)
