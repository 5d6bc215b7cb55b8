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
