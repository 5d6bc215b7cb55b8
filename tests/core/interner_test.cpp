#include "tfdebug/core/interner.hpp"

#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

namespace tfdebug {
namespace {

TEST(Interner, SameStringSameIdAndBack) {
  Interner names;
  EXPECT_EQ(names.intern(""), 0u);
  const auto a = names.intern("blocks.0.attn");
  const auto b = names.intern("blocks.0.mlp");
  EXPECT_EQ(a, 1u);
  EXPECT_EQ(b, 2u);
  EXPECT_EQ(names.intern(std::string("blocks.0.") + "attn"), a);
  EXPECT_EQ(names.name(a), "blocks.0.attn");
  EXPECT_EQ(names.name(b), "blocks.0.mlp");
  EXPECT_EQ(names.name(0), "");
  EXPECT_EQ(names.name(999), "");  // never given
  EXPECT_EQ(names.size(), 2u);
}

TEST(Interner, BeyondTheCapacityStringsGetZeroAndAreCounted) {
  Interner names(4);  // ids 1..3
  EXPECT_EQ(names.intern("a"), 1u);
  EXPECT_EQ(names.intern("b"), 2u);
  EXPECT_EQ(names.intern("c"), 3u);
  EXPECT_EQ(names.intern("d"), 0u);
  EXPECT_EQ(names.intern("e"), 0u);
  EXPECT_EQ(names.refused(), 2u);
  EXPECT_EQ(names.intern("b"), 2u);  // known strings still resolve
}

TEST(Interner, ThreadsAgreeOnIdsAcrossChunks) {
  Interner names(20000);
  std::vector<std::uint32_t> first(10000), second(10000);
  std::thread t1([&] {
    for (int i = 0; i < 10000; ++i) first[std::size_t(i)] = names.intern("op" + std::to_string(i));
  });
  std::thread t2([&] {
    for (int i = 9999; i >= 0; --i) second[std::size_t(i)] = names.intern("op" + std::to_string(i));
  });
  t1.join();
  t2.join();
  EXPECT_EQ(first, second);
  EXPECT_EQ(names.size(), 10000u);
  for (int i = 0; i < 10000; i += 997) EXPECT_EQ(names.name(first[std::size_t(i)]), "op" + std::to_string(i));
}

}  // namespace
}  // namespace tfdebug
