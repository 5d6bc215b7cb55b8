// Errors: two intents, two mechanisms.
//
//   tfdebug::Error     something a user can get wrong (a bad file, a bad shape, an unknown
//                      dtype name). The message names the thing and says what was expected.
//                      The CLI turns it into exit code 2.
//   TFDEBUG_ASSERT     an internal invariant of tfdebug itself. Failing it is a bug in tfdebug:
//                      it prints the condition and location and aborts.
//   TFDEBUG_DASSERT    the same on a hot path, checked in debug builds only (NDEBUG unset, or
//                      TFDEBUG_DEBUG_ASSERTS=1): in release builds the condition is not evaluated.
//   TFDEBUG_HOOK_CHECK an internal invariant inside a hook that runs in the user's training loop
//                      (the LibTorch adapter's op path, the Session's observe). A hook must not
//                      abort the user's program, so failing it throws tfdebug::InternalError,
//                      which the hook's guard records (RunSummary::hook_errors, the adapter's
//                      Counters) and the run goes on without that observation.
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

// A broken internal invariant found inside a guarded hook (TFDEBUG_HOOK_CHECK): a bug in tfdebug,
// reported and survived.
class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& message) : std::logic_error(message) {}
};

namespace detail {
[[noreturn]] void hook_check_fail(const char* condition, const char* message, const char* file, int line);
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

#if !defined(TFDEBUG_DEBUG_ASSERTS)
#if defined(NDEBUG)
#define TFDEBUG_DEBUG_ASSERTS 0
#else
#define TFDEBUG_DEBUG_ASSERTS 1
#endif
#endif

#if TFDEBUG_DEBUG_ASSERTS
#define TFDEBUG_DASSERT(condition, message) TFDEBUG_ASSERT(condition, message)
#else
#define TFDEBUG_DASSERT(condition, message) \
  do {                                      \
  } while (false)
#endif

#define TFDEBUG_HOOK_CHECK(condition, message)                                       \
  do {                                                                               \
    if (!(condition)) [[unlikely]] {                                                 \
      ::tfdebug::detail::hook_check_fail(#condition, (message), __FILE__, __LINE__); \
    }                                                                                \
  } while (false)
