// Built with -DTFDEBUG_ENABLE=0: every macro expands to nothing, even while recording.
#include <gtest/gtest.h>
#include <unistd.h>

#include "tfdebug/profile/collector.hpp"
#include "tfdebug/profile/zone.hpp"

static_assert(TFDEBUG_ENABLE == 0, "this file tests the compiled-out macros");

namespace tfdebug::profile {
namespace {

TEST(ZoneCompiledOut, RecordsNothingAndEvaluatesNothing) {
  start();
  int evaluated = 0;
  {
    TFDEBUG_ZONE("zone");
    TFDEBUG_ZONE_BEGIN("manual");
    TFDEBUG_ZONE_END("manual");
    TFDEBUG_INSTANT("instant");
    TFDEBUG_COUNTER("counter", ++evaluated);
  }
  const Trace trace = stop();
  EXPECT_EQ(evaluated, 0);
  for (const auto& thread : trace.threads) EXPECT_NE(thread.tid, static_cast<std::uint32_t>(::gettid()));
  EXPECT_EQ(stats().collected, 0u);
}

}  // namespace
}  // namespace tfdebug::profile
