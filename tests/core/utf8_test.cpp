#include "tfdebug/core/utf8.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tfdebug {
namespace {

// Each step as (valid, code point or 0, length).
std::vector<Utf8Step> steps(std::string_view text) {
  std::vector<Utf8Step> out;
  for (std::size_t i = 0; i < text.size();) {
    out.push_back(next_utf8(text, i));
    i += out.back().length;
  }
  return out;
}

TEST(Utf8, DecodesOneToFourByteSequences) {
  const auto s = steps("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");  // a é € 😀
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0].code_point, U'a');
  EXPECT_EQ(s[1].code_point, U'\u00E9');
  EXPECT_EQ(s[1].length, 2u);
  EXPECT_EQ(s[2].code_point, U'\u20AC');
  EXPECT_EQ(s[2].length, 3u);
  EXPECT_EQ(s[3].code_point, U'\U0001F600');
  EXPECT_EQ(s[3].length, 4u);
  for (const auto& step : s) EXPECT_TRUE(step.valid);
}

TEST(Utf8, C1ControlsAreValidCodePoints) {
  const auto s = steps("\xC2\x85\xC2\x9B");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_TRUE(s[0].valid && s[1].valid);
  EXPECT_EQ(s[0].code_point, U'\u0085');
  EXPECT_EQ(s[1].code_point, U'\u009B');
}

// Unicode 15, table 3-8: "61 F1 80 80 E1 80 C2 62 80 63 80 BF 64" has these maximal subparts.
TEST(Utf8, InvalidBytesComeAsMaximalSubparts) {
  const auto s = steps("\x61\xF1\x80\x80\xE1\x80\xC2\x62\x80\x63\x80\xBF\x64");
  std::vector<std::pair<bool, std::size_t>> got;
  got.reserve(s.size());
  for (const auto& step : s) got.emplace_back(step.valid, step.length);
  const std::vector<std::pair<bool, std::size_t>> want = {{true, 1},  {false, 3}, {false, 2}, {false, 1},
                                                          {true, 1},  {false, 1}, {true, 1},  {false, 1},
                                                          {false, 1}, {true, 1}};
  EXPECT_EQ(got, want);
}

TEST(Utf8, RejectsOverlongSurrogatesAndPastU10FFFF) {
  for (const std::string bad :
       {"\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF4\x90\x80\x80", "\xF5", "\xFF"}) {
    const Utf8Step s = next_utf8(bad, 0);
    EXPECT_FALSE(s.valid) << bad;
    EXPECT_EQ(s.length, 1u) << bad;  // the second byte is outside the lead's range
  }
}

TEST(Utf8, TruncatedSequenceStopsAtTheEnd) {
  const Utf8Step s = next_utf8("\xE2\x82", 0);
  EXPECT_FALSE(s.valid);
  EXPECT_EQ(s.length, 2u);
}

}  // namespace
}  // namespace tfdebug
