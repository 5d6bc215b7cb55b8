// Breakpoints read from the console's text, their conditions on statistics, and globs.
#include "tfdebug/ide/breakpoint.hpp"

#include <gtest/gtest.h>

#include "tfdebug/core/error.hpp"

namespace tfdebug::ide {
namespace {

TEST(Breakpoint, ReadsEveryPlaceWithItsOptions) {
  const Breakpoint op = parse_breakpoint("op aten::log* if nan > 0 once");
  EXPECT_EQ(op.kind, BreakKind::op);
  EXPECT_EQ(op.pattern, "aten::log*");
  ASSERT_TRUE(op.condition);
  EXPECT_EQ(op.condition->text(), "nan > 0");
  EXPECT_TRUE(op.once);

  const Breakpoint module = parse_breakpoint("module blocks.1.mlp exit backward ignore 2");
  EXPECT_EQ(module.kind, BreakKind::module);
  EXPECT_EQ(module.pattern, "blocks.1.mlp");
  EXPECT_TRUE(module.at_exit);
  EXPECT_EQ(module.phase, Phase::backward);
  EXPECT_EQ(module.ignore, 2);
  EXPECT_EQ(module.text(), "module blocks.1.mlp exit backward ignore 2");

  EXPECT_EQ(parse_breakpoint("phase optimizer").phase, Phase::optimizer);
  EXPECT_EQ(parse_breakpoint("step 12").step, 12);
  const Breakpoint nan = parse_breakpoint("nan");
  EXPECT_EQ(nan.kind, BreakKind::nonfinite);
  EXPECT_TRUE(nan.nan);
  EXPECT_FALSE(nan.inf);
  const Breakpoint nonfinite = parse_breakpoint("nonfinite");
  EXPECT_TRUE(nonfinite.nan && nonfinite.inf);
  EXPECT_EQ(parse_breakpoint("finding dead_units").pattern, "dead_units");
  EXPECT_EQ(parse_breakpoint("finding").pattern, "");
  // A bare name: an op when it holds "::", a module otherwise.
  EXPECT_EQ(parse_breakpoint("aten::mm").kind, BreakKind::op);
  EXPECT_EQ(parse_breakpoint("blocks.0").kind, BreakKind::module);
  const Breakpoint any = parse_breakpoint("if abs_max > 1e4 and std < 1e-6");
  EXPECT_EQ(any.kind, BreakKind::any);
  ASSERT_EQ(any.condition->all.size(), 2u);
  EXPECT_EQ(any.condition->all[0].statistic, "abs_max");
  EXPECT_EQ(any.condition->all[0].value, 1e4);
  EXPECT_EQ(any.condition->all[1].relation, "<");
  EXPECT_EQ(any.condition->all[1].value, 1e-6);
  EXPECT_EQ(parse_breakpoint("if std<1e-6 ignore 3").ignore, 3);
}

TEST(Breakpoint, BadTextIsAOneLineErrorNamingWhatIsWrong) {
  const auto message = [](const char* text) {
    try {
      parse_breakpoint(text);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message("if absmax > 3").rfind("condition: unknown statistic 'absmax'", 0), 0u)
      << message("if absmax > 3");
  EXPECT_EQ(message("step -1"), "break step: expected a step number >= 0, got '-1'");
  EXPECT_EQ(message("phase sideways"),
            "break phase: expected forward, backward or optimizer, got 'sideways'");
  EXPECT_EQ(message("op"), "break op: expected one op name or glob, e.g. aten::log*");
  EXPECT_EQ(message("if nan >"), "condition: expected a finite number after 'nan >', got ''");
  EXPECT_EQ(message("if nan"), "condition 'nan': expected STATISTIC RELATION NUMBER, e.g. abs_max > 1e4");
  EXPECT_EQ(message("op aten::mm exit"), "break: 'exit' applies to module breakpoints only");
  EXPECT_EQ(message(""),
            "break: expected a place (op, module, phase, step, nan, inf, finding) or 'if CONDITION'");
}

TEST(Breakpoint, ConditionsCompareTheStatisticsExactly) {
  Stats s;
  s.count = 10;
  s.nan = 1;
  s.abs_max = 2e4;
  s.std = 5e-7;
  EXPECT_TRUE(parse_condition("abs_max > 1e4").holds(s));
  EXPECT_FALSE(parse_condition("abs_max > 2e4").holds(s));
  EXPECT_TRUE(parse_condition("abs_max >= 2e4").holds(s));
  EXPECT_TRUE(parse_condition("nan > 0").holds(s));
  EXPECT_TRUE(parse_condition("std < 1e-6 and nan == 1").holds(s));
  EXPECT_FALSE(parse_condition("std < 1e-6 and nan != 1").holds(s));
  EXPECT_FALSE(parse_condition("nan > 0").needs_moments());
  EXPECT_TRUE(parse_condition("nan > 0 and std < 1").needs_moments());
}

TEST(Breakpoint, GlobsMatchWholeNames) {
  EXPECT_TRUE(glob_match("aten::log*", "aten::log_softmax"));
  EXPECT_TRUE(glob_match("aten::log*", "aten::log"));
  EXPECT_FALSE(glob_match("aten::log", "aten::log_"));
  EXPECT_TRUE(glob_match("blocks.?.mlp", "blocks.1.mlp"));
  EXPECT_FALSE(glob_match("blocks.?.mlp", "blocks.10.mlp"));
  EXPECT_TRUE(glob_match("*mlp*", "blocks.10.mlp.fc1"));
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_FALSE(glob_match("a*b", "acbd"));
}

}  // namespace
}  // namespace tfdebug::ide
