// The terminal helpers every command prints through (tools/tfdebug/terminal.hpp,
// findings_text.hpp): colour choice, width, elision, wrapping, plurals, tables, severity order.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdio>
#include <string>

#include "findings_text.hpp"
#include "terminal.hpp"

namespace tfdebug::cli {
namespace {

// What `print` writes to a FILE, as a string.
template <class Print>
std::string captured(Print print) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* memory = open_memstream(&buffer, &size);
  print(memory);
  std::fclose(memory);
  std::string text(buffer, size);
  std::free(buffer);
  return text;
}

TEST(Terminal, ElideMiddleKeepsTheStartAndTheEnd) {
  EXPECT_EQ(elide_middle("blocks.0.mlp.attn.q.weight", 22), "blocks.0.m…tn.q.weight");
  EXPECT_EQ(display_width(elide_middle("blocks.0.mlp.attn.q.weight", 22)), 22u);
  EXPECT_EQ(elide_middle("short", 22), "short");
  EXPECT_EQ(elide_middle("abcdef", 0), "abcdef");  // unlimited
  EXPECT_EQ(elide_middle("abcdef", 1), "…");
  EXPECT_EQ(elide_middle("abcdef", 4), "a…ef");
  EXPECT_EQ(elide_middle("αβγδεζ", 4), "α…εζ");  // columns are code points, not bytes
}

TEST(Terminal, WrapWordsAtSpacesWithAHangingIndent) {
  const auto lines = wrap_words("one two three four five", 11, 2);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "one two");
  EXPECT_EQ(lines[1], "  three");
  EXPECT_EQ(lines[2], "  four five");
  EXPECT_EQ(wrap_words("a-word-longer-than-the-line b", 8, 0).front(), "a-word-longer-than-the-line");
  EXPECT_EQ(wrap_words("one two three", 0, 2).size(), 1u);
}

TEST(Terminal, PluralAgreesWithTheCount) {
  EXPECT_EQ(plural(0, "error"), "0 errors");
  EXPECT_EQ(plural(1, "error"), "1 error");
  EXPECT_EQ(plural(1234, "tensor"), "1,234 tensors");
  EXPECT_EQ(plural(3, "info", "info"), "3 info");
  EXPECT_EQ(plural(2, "shape change"), "2 shape changes");
}

TEST(Terminal, ColumnsComeFromColumnsThenTheTerminalThenUnlimited) {
  setenv("COLUMNS", "60", 1);
  EXPECT_EQ(terminal_columns(stdout), 60u);
  setenv("COLUMNS", "wide", 1);  // not a number: as if unset (a memstream is no terminal)
  std::FILE* memory = std::tmpfile();
  EXPECT_EQ(terminal_columns(memory), 0u);
  unsetenv("COLUMNS");
  EXPECT_EQ(terminal_columns(memory), 0u);
  std::fclose(memory);
}

TEST(Terminal, ColourChoice) {
  std::FILE* file = std::tmpfile();
  EXPECT_FALSE(use_colour(file));  // auto: not a terminal
  set_colour_choice(ColourChoice::always);
  EXPECT_TRUE(use_colour(file));
  EXPECT_EQ(paint("x", Tone::bad, use_colour(file)), "\033[1;31mx\033[0m");
  set_colour_choice(ColourChoice::never);
  EXPECT_FALSE(use_colour(file));
  set_colour_choice(parse_colour_choice("auto"));
  EXPECT_FALSE(interactive(file));
  std::fclose(file);
  EXPECT_THROW(parse_colour_choice("yes"), std::exception);
}

Table sample() {
  Table t({{.header = "name", .elidable = true, .minimum = 10},
           {.header = "params", .align = Table::Align::right},
           {.header = "mean", .align = Table::Align::right, .droppable = true},
           {.header = "histogram", .droppable = true}});
  t.add({"layers.0.attention.query.weight", "1,024", "0.5", "▁▂▃"});
  t.add({"b", "7", "-0.25", "█"});
  return t;
}

TEST(Table, UnlimitedKeepsEveryNameWholeAndRightAlignsNumbers) {
  const std::string text = captured([](std::FILE* f) { sample().print(f, 0, false); });
  EXPECT_EQ(text,
            "  name                             params   mean  histogram\n"
            "  layers.0.attention.query.weight   1,024    0.5  ▁▂▃\n"
            "  b                                     7  -0.25  █\n");
}

TEST(Table, ANarrowTerminalElidesTheNameInTheMiddle) {
  const std::string text = captured([](std::FILE* f) { sample().print(f, 40, false); });
  EXPECT_EQ(text,
            "  name          params   mean  histogram\n"
            "  layer…weight   1,024    0.5  ▁▂▃\n"
            "  b                  7  -0.25  █\n");
}

TEST(Table, ThenDropsTheLastOptionalColumnsAndSaysSo) {
  const std::string text = captured([](std::FILE* f) { sample().print(f, 24, false); });
  EXPECT_EQ(text,
            "  name            params\n"
            "  layers….weight   1,024\n"
            "  b                    7\n"
            "  (mean, histogram left\n"  // the note fits too, wrapped
            "   out to fit 24\n"
            "   columns; a wider\n"
            "   terminal or --json\n"
            "   shows them)\n");
}

Finding finding(Severity severity, std::string rule) {
  Finding f;
  f.severity = severity;
  f.rule = std::move(rule);
  return f;
}

TEST(Findings, ErrorsFirstThenWarningsThenInfoInTheOrderFound) {
  const std::vector<Finding> found = {finding(Severity::info, "i1"), finding(Severity::warning, "w1"),
                                      finding(Severity::error, "e1"), finding(Severity::warning, "w2"),
                                      finding(Severity::error, "e2")};
  std::string order;
  for (const Finding* f : by_severity(found)) order += f->rule + " ";
  EXPECT_EQ(order, "e1 e2 w1 w2 i1 ");
  EXPECT_EQ(findings_headline(count_severities(found)), "5 findings: 2 errors, 2 warnings, 1 info");
  EXPECT_EQ(findings_headline(count_severities(std::span<const Finding>(found).first(1))),
            "1 finding: 0 errors, 0 warnings, 1 info");
  EXPECT_EQ(findings_headline({}), "no findings");
}

TEST(Findings, ALineWrapsUnderItsTextAtTheTerminalWidth) {
  setenv("COLUMNS", "40", 1);
  const std::string text = captured([](std::FILE* f) {
    print_finding_line(f, Severity::warning, "dead_units fc1: 8 of 8 units were exactly zero", false,
                       "→ check the initialisation");
  });
  unsetenv("COLUMNS");
  EXPECT_EQ(text,
            "  warning  dead_units fc1: 8 of 8 units\n"
            "           were exactly zero\n"
            "           → check the initialisation\n");
}

}  // namespace
}  // namespace tfdebug::cli
