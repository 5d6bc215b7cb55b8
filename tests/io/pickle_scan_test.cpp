// The static pickle scanner against the malicious and benign files of
// tests/io/make_pickle_fixtures.py (expected.json holds, for each, every global that is not
// allowed, exactly), and against hand-built opcodes: nested payloads, malformed pickles, names
// that must not reach a terminal raw, and linear time on hostile shapes.
#include "tfdebug/io/pickle_scan.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "fixtures.hpp"

namespace {

using tfdebug::io::FileScan;
using tfdebug::io::GlobalRisk;
using tfdebug::io::PickleGlobal;
using tfdebug::io::PickleScan;

std::string pickles_fixture(const std::string& name) {
  return tfdebug::io::test_support::fixture(std::string("pickles/") + name);
}

// Every global of a file's pickles, nested ones included, by name.
void collect(const PickleScan& p, std::map<std::string, const PickleGlobal*>& out) {
  for (const PickleGlobal& g : p.globals) out.emplace(g.full_name(), &g);
  for (const PickleScan& n : p.nested) collect(n, out);
}

std::string verdict(const FileScan& f) {
  switch (f.worst()) {
    case GlobalRisk::runs_code:
      return "error";
    case GlobalRisk::imports:
      return "warning";
    case GlobalRisk::full_module:
      return "info";
    case GlobalRisk::allowed:
      return "clean";
  }
  return "?";
}

PickleScan scan(const std::string& bytes) {
  return tfdebug::io::scan_pickle("t.pkl", std::as_bytes(std::span(bytes.data(), bytes.size())));
}

std::string u(const std::string& text) {  // SHORT_BINUNICODE
  std::string op = "\x8c";
  op += static_cast<char>(text.size());
  return op += text;
}

}  // namespace

TEST(PickleScanFixtures, EveryFileReportsExactlyItsFlaggedGlobals) {
  std::ifstream in(pickles_fixture("expected.json"));
  ASSERT_TRUE(in) << pickles_fixture("expected.json");
  const nlohmann::json expected = nlohmann::json::parse(in);
  ASSERT_GE(expected.size(), 70u);
  for (const auto& [file, want] : expected.items()) {
    SCOPED_TRACE(file);
    const FileScan f = tfdebug::io::scan_file(pickles_fixture(file));
    EXPECT_EQ(f.error, "");
    if (want["verdict"] != "clean") {
      EXPECT_FALSE(f.pickles.empty());
    }
    EXPECT_EQ(verdict(f), want["verdict"].get<std::string>());
    std::map<std::string, const PickleGlobal*> globals;
    for (const PickleScan& p : f.pickles) collect(p, globals);
    std::map<std::string, std::pair<std::string, bool>> flagged;
    for (const auto& [name, g] : globals) {
      if (g->risk != GlobalRisk::allowed) flagged[name] = {tfdebug::io::risk_name(g->risk), g->called};
    }
    std::map<std::string, std::pair<std::string, bool>> wanted;
    for (const auto& [name, v] : want["flagged"].items())
      wanted[name] = {v[0].get<std::string>(), v[1].get<bool>()};
    EXPECT_EQ(flagged, wanted);
  }
}

TEST(PickleScanFixtures, TorchSaveStateDictReferencesItsRebuilders) {
  const FileScan f = tfdebug::io::scan_file(pickles_fixture("benign/state_dict.pt"));
  EXPECT_EQ(f.container, "torch zip");
  ASSERT_EQ(f.pickles.size(), 1u);
  std::map<std::string, const PickleGlobal*> g;
  collect(f.pickles[0], g);
  ASSERT_TRUE(g.contains("torch._utils._rebuild_tensor_v2"));
  EXPECT_TRUE(g["torch._utils._rebuild_tensor_v2"]->called);
  // Named once: pickle memoises it and fetches it again for each of the four tensors.
  EXPECT_EQ(g["torch._utils._rebuild_tensor_v2"]->references, 1);
  EXPECT_TRUE(g.contains("collections.OrderedDict"));
  EXPECT_TRUE(g.contains("torch.FloatStorage"));
  EXPECT_FALSE(g["torch.FloatStorage"]->called);  // named in persistent ids, never called
}

TEST(PickleScanFixtures, LegacyAndTensorPicklesAreScannedThroughEveryPickle) {
  const FileScan legacy = tfdebug::io::scan_file(pickles_fixture("evil/legacy.pt"));
  EXPECT_EQ(legacy.container, "legacy torch");
  EXPECT_EQ(legacy.pickles.size(), 5u);  // magic, protocol, sys info, the object, storage keys
  // A tensor through plain pickle: its storage is torch.storage._load_from_bytes of a nested
  // legacy torch.save, which is scanned (and clean).
  const FileScan tensor = tfdebug::io::scan_file(pickles_fixture("benign/tensor_pickle.pkl"));
  ASSERT_EQ(tensor.pickles.size(), 1u);
  ASSERT_EQ(tensor.pickles[0].nested.size(), 5u);
  EXPECT_EQ(tensor.pickles[0].nested[3].problem, "");
  std::map<std::string, const PickleGlobal*> g;
  collect(tensor.pickles[0], g);
  EXPECT_TRUE(g.contains("torch.FloatStorage"));
}

TEST(PickleScanFixtures, PlainNpyHoldsNoPickle) {
  const FileScan f = tfdebug::io::scan_file(pickles_fixture("benign/plain.npy"));
  EXPECT_EQ(f.error, "");
  EXPECT_EQ(f.container, "none");
  EXPECT_TRUE(f.pickles.empty());
}

TEST(PickleScan, NestedPayloadIsScannedAndNamed) {
  const std::string inner = "cposix\nsystem\n(S'echo'\ntR.";
  const PickleScan s = scan(std::string("\x80\x02"
                                        "c_pickle\nloads\nC") +
                            std::string(1, char(inner.size())) + inner + "\x85R.");
  ASSERT_EQ(s.nested.size(), 1u);
  EXPECT_EQ(s.nested[0].origin, "t.pkl > _pickle.loads argument at offset 46");
  ASSERT_EQ(s.nested[0].globals.size(), 1u);
  EXPECT_EQ(s.nested[0].globals[0].full_name(), "posix.system");
  EXPECT_TRUE(s.nested[0].globals[0].called);
  EXPECT_EQ(tfdebug::io::global_message(s.nested[0].globals[0]),
            "this file runs code when `torch.load` opens it: calls posix.system (runs a shell command or a "
            "program)");
}

TEST(PickleScan, NestingStopsAtFourLevelsAndSaysSo) {
  std::string p = "cposix\nsystem\n(S'x'\ntR.";
  for (int i = 0; i < 6; ++i)
    p = std::string(
            "\x80\x02"
            "c_pickle\nloads\nB") +
        std::string(1, char(p.size())) + std::string(3, '\0') + p + "\x85R.";
  const PickleScan s = scan(p);
  const PickleScan* level = &s;
  int depth = 0;
  while (!level->nested.empty()) {
    level = &level->nested[0];
    ++depth;
  }
  EXPECT_EQ(depth, 4);
  ASSERT_EQ(level->globals.size(), 1u);
  EXPECT_EQ(level->globals[0].reason, "unpickles more data, which may run anything");
}

TEST(PickleScan, MalformedPicklesKeepWhatCameBefore) {
  PickleScan s = scan(std::string("\x80\x02"
                                  "cposix\nsystem\n") +
                      u("x") + "\x85R}(");
  EXPECT_EQ(s.problem, "ends without STOP (pickle offset 23)");
  ASSERT_EQ(s.globals.size(), 1u);
  EXPECT_TRUE(s.globals[0].called);
  EXPECT_EQ(scan("\x80\x06.").problem, "pickle protocol 6 is newer than 5 (pickle offset 0)");
  EXPECT_EQ(scan("\x80\x02\xff.").problem, "opcode 0xff is not a pickle opcode (pickle offset 2)");
  EXPECT_EQ(scan("\x80\x02h\x05.").problem, "memo entry 5 was never stored (pickle offset 2)");
  EXPECT_EQ(scan("\x80\x02R.").problem, "stack underflow (pickle offset 2)");
  EXPECT_EQ(scan("\x80\x02(N1N.").problem, "");
  EXPECT_EQ(scan("\x80\x02N(0.").problem, "stack underflow (pickle offset 4)");  // POP may not cross a MARK
  EXPECT_EQ(scan("\x80\x02X\xf0\xff\xff\xff"
                 "abc.")
                .problem,
            "a string of 4294967280 bytes runs past the end of the pickle (4 left) (pickle offset 2)");
  EXPECT_EQ(scan("\x80\x02K\x01K\x02\x93.").problem, "STACK_GLOBAL needs two strings (pickle offset 6)");
  EXPECT_EQ(scan("cos\nsystem").problem, "a GLOBAL name has no end of line (pickle offset 0)");
  EXPECT_EQ(scan("(K\x01o.").problem,
            "calls something that is not a global or the result of one (pickle offset 3)");
}

TEST(PickleScan, NamesFromTheFileAreStoredPrintable) {
  const PickleScan s = scan(std::string("\x80\x04") + u("evil\x1b[2J") + u("x\xff\\") + "\x93.");
  ASSERT_EQ(s.globals.size(), 1u);
  EXPECT_EQ(s.globals[0].module, "evil\\x1b[2J");
  EXPECT_EQ(s.globals[0].name, "x\\xff\\x5c");
  EXPECT_EQ(s.globals[0].risk, GlobalRisk::imports);
}

TEST(PickleScan, AllowListMatchesExactly) {
  const auto risk = [](const std::string& module, const std::string& name) {
    const PickleScan s = scan(std::string("\x80\x04") + u(module) + u(name) + "\x93.");
    return s.globals.at(0).risk;
  };
  EXPECT_EQ(risk("torch._utils", "_rebuild_tensor_v2"), GlobalRisk::allowed);
  EXPECT_EQ(risk("torch._utils", "_rebuild_qtensor"), GlobalRisk::allowed);
  EXPECT_EQ(risk("torch", "BFloat16Storage"), GlobalRisk::allowed);
  EXPECT_EQ(risk("torch", "float8_e4m3fn"), GlobalRisk::allowed);
  EXPECT_EQ(risk("builtins", "set"), GlobalRisk::allowed);
  EXPECT_EQ(risk("builtins", "print"), GlobalRisk::imports);
  EXPECT_EQ(risk("builtins", "getattr"), GlobalRisk::runs_code);
  EXPECT_EQ(risk("__builtin__", "apply"), GlobalRisk::runs_code);
  EXPECT_EQ(risk("os.path", "join"), GlobalRisk::runs_code);  // submodules of a denied module
  EXPECT_EQ(risk("codecs", "decode"), GlobalRisk::imports);   // "code" does not cover "codecs"
  EXPECT_EQ(risk("torch.nn.modules.linear", "Linear"), GlobalRisk::full_module);
  EXPECT_EQ(risk("torch.nn.modules.linear", "Linear.__reduce__"), GlobalRisk::runs_code);
  EXPECT_EQ(risk("collections", "OrderedDict.fromkeys"), GlobalRisk::imports);
  EXPECT_EQ(risk("torch._utils", "_rebuild_tensor_v2.x"), GlobalRisk::imports);
  EXPECT_EQ(risk("mypackage.trace", "Tracer"), GlobalRisk::imports);  // a package's own module
  EXPECT_EQ(risk("torch.fx.experimental.symbolic_shapes", "ShapeEnv.evaluate_guards_expression"),
            GlobalRisk::runs_code);
}

// Hostile shapes stay linear (Note [Symbolic stack]) and bounded: a million MARKs, a stack of 200,000
// memoised DUPs, 300,000 calls of one memoised global. A quadratic scanner would run past CTest's timeout.
TEST(PickleScan, HostileShapes) {
  const std::string marks = std::string("\x80\x02") + std::string(1'000'000, '(') + "N.";
  std::string memo = "\x80\x02N";
  for (int i = 0; i < 200'000; ++i) memo += "\x94\x32";  // MEMOIZE, DUP
  memo += ".";
  std::string calls =
      "\x80\x02"
      "ccollections\nOrderedDict\n";
  for (int i = 0; i < 300'000; ++i) calls += "2)R0";  // DUP, EMPTY_TUPLE, REDUCE, POP
  calls += ".";
  EXPECT_EQ(scan(marks).problem, "");
  EXPECT_EQ(scan(memo).problem, "");
  const PickleScan c = scan(calls);
  EXPECT_EQ(c.problem, "");
  ASSERT_EQ(c.globals.size(), 1u);
  EXPECT_EQ(c.globals[0].references, 1);
  EXPECT_TRUE(c.globals[0].called);
  // Note [Scan limits]: past them the scan stops with a problem, keeping what it found.
  EXPECT_EQ(scan(std::string("\x80\x02") + std::string(1'000'001, '(') + "N.").problem,
            "MARK nesting deeper than 1000000; tfdebug stops scanning there (pickle offset 1000002)");
  EXPECT_EQ(scan(std::string("\x80\x02") + std::string(4'000'001, 'N') + ".").problem,
            "the stack grows past 4000000 entries; tfdebug stops scanning there (pickle offset 4000002)");
}
