#include "tfdebug/core/error.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace tfdebug {
namespace {

TEST(Error, IsARuntimeErrorCarryingTheMessage) {
  try {
    throw Error("tensor 'w': expected rank 2, got 3");
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "tensor 'w': expected rank 2, got 3");
  }
}

TEST(ErrorDeathTest, AssertNamesConditionAndLocation) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const int limit = 3;
  EXPECT_DEATH(TFDEBUG_ASSERT(limit > 4, "limit too small"),
               "tfdebug internal error: limit too small.*check failed: limit > 4.*error_test.cpp");
}

}  // namespace
}  // namespace tfdebug

namespace tfdebug {
namespace {

TEST(Error, HookCheckThrowsAnInternalErrorThatAGuardCanRecord) {
  std::string recorded;
  try {
    const int stack = 2;
    TFDEBUG_HOOK_CHECK(stack >= 3, "the op's stack is shorter than its schema");
  } catch (const InternalError& e) {
    recorded = e.what();
  }
  EXPECT_EQ(
      recorded.rfind(
          "tfdebug internal error: the op's stack is shorter than its schema (check failed: stack >= 3 at ",
          0),
      0u)
      << recorded;
  EXPECT_NO_THROW(TFDEBUG_HOOK_CHECK(1 + 1 == 2, "arithmetic"));
}

TEST(Error, DebugAssertEvaluatesItsConditionOnlyInDebugBuilds) {
  int evaluated = 0;
  TFDEBUG_DASSERT(++evaluated > 0, "counts");
  EXPECT_EQ(evaluated, TFDEBUG_DEBUG_ASSERTS ? 1 : 0);
}

}  // namespace
}  // namespace tfdebug
