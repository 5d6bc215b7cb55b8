#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "session_test_util.hpp"
#include "tfdebug/core/terminal_text.hpp"
#include "tfdebug/session/console_sink.hpp"

namespace tfdebug {
namespace {

using testing::output;

// A run with a NaN producer and a dead layer; returns its run directory.
std::filesystem::path run_with_faults(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / name;
  std::filesystem::remove_all(dir);
  RunConfig config = testing::quiet_config();
  config.run_dir = dir;
  config.rules.get<DeadUnitsRule>().window = 3;
  Session session(config);
  for (std::int64_t step = 0; step < 6; ++step) {
    session.begin_step(step);
    session.observe(output(step, "fc1", "relu", std::vector<float>(12, 0.0f), {3, 4}));
    const std::vector<float> v = step == 4 ? std::vector<float>{std::nanf(""), 1} : std::vector<float>{2, 1};
    session.observe(output(step, "fc2", "log", v, {}, true));
    session.end_step(step, 1.5);
  }
  return dir;  // the destructor finishes the run and writes report.json
}

TEST(Report, JsonRoundTrip) {
  const auto dir = run_with_faults("tfdebug_report_test");
  std::ifstream in(dir / "report.json");
  ASSERT_TRUE(in) << "no report.json";
  const nlohmann::json report = nlohmann::json::parse(in);
  EXPECT_EQ(report["tool"], "tfdebug");
  EXPECT_EQ(report["steps"], 6);
  EXPECT_EQ(report["first_step"], 0);
  EXPECT_EQ(report["last_step"], 5);
  EXPECT_EQ(report["observations"], 12);
  EXPECT_EQ(report["counts"]["error"], 1);
  EXPECT_EQ(report["counts"]["warning"], 1);
  EXPECT_EQ(report["flight_recorder"], "flight_recorder.json");
  ASSERT_EQ(report["findings"].size(), 2u);
  const auto& dead = report["findings"][0];
  EXPECT_EQ(dead["rule"], "dead_units");
  EXPECT_EQ(dead["severity"], "warning");
  EXPECT_EQ(dead["step"], 2);
  EXPECT_EQ(dead["count"], 4);  // steps 2..5, one finding
  EXPECT_EQ(dead["last_step"], 5);
  EXPECT_EQ(dead["phase"], "forward");
  EXPECT_EQ(dead["module"], "fc1");
  EXPECT_EQ(dead["op"], "relu");
  EXPECT_EQ(dead["evidence"]["dead"], 4);
  const auto& nan = report["findings"][1];
  EXPECT_EQ(nan["rule"], "nonfinite");
  EXPECT_EQ(nan["severity"], "error");
  EXPECT_EQ(nan["step"], 4);
  EXPECT_EQ(nan["module"], "fc2");
  EXPECT_EQ(nan["op"], "log");
  EXPECT_FALSE(nan["message"].get<std::string>().empty());
  EXPECT_FALSE(nan["suggestion"].get<std::string>().empty());
  EXPECT_EQ(nan["evidence"]["nan"], 1);
  EXPECT_EQ(report["dropped"]["findings"], 0);
  EXPECT_TRUE(report["hook_errors"].empty());
  std::filesystem::remove_all(dir);
}

TEST(Report, ReadByPython) {
  const auto dir = run_with_faults("tfdebug_report_python_test");
  const std::string command =
      "/usr/bin/python3 -c \"import json,sys; r=json.load(open(sys.argv[1])); "
      "print(r['steps'], len(r['findings']), r['findings'][1]['rule'], r['findings'][1]['step'], "
      "r['findings'][1]['op'])\" " +
      (dir / "report.json").string();
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  char line[256] = {};
  ASSERT_NE(std::fgets(line, sizeof(line), pipe), nullptr);
  EXPECT_EQ(pclose(pipe), 0);
  EXPECT_STREQ(line, "6 2 nonfinite 4 log\n");
  std::filesystem::remove_all(dir);
}

TEST(Report, ConsoleSinkPrintsEachFindingAndASummary) {
  char* buffer = nullptr;
  std::size_t size = 0;
  FILE* memory = open_memstream(&buffer, &size);
  {
    Session session(testing::quiet_config());
    session.add_sink(std::make_shared<ConsoleSink>(memory));
    session.begin_step(3);
    session.observe(output(3, "fc2", "log", {std::nanf("")}, {}, true));
    session.end_step(3, std::nullopt);
    session.finish();
  }
  std::fclose(memory);
  const std::string text(buffer, size);
  std::free(buffer);
  EXPECT_NE(text.find("tfdebug: error [nonfinite] log in fc2 produced 1 NaN of 1 values from finite inputs "
                      "(forward, step 3)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("1 step, 1 observation: 1 error, 0 warnings, 0 info"), std::string::npos) << text;
  EXPECT_EQ(text.find("\033["), std::string::npos);  // not a terminal: no colour
}

// Note [Terminal width]: at 60 columns every line fits: the message and the suggestion wrap at
// spaces, the long module name is elided in the middle; without a width nothing is cut.
TEST(Report, ConsoleSinkFitsTheWidthItIsGiven) {
  const std::string module = "encoder.layers.11.self_attention.output_projection.dense";
  const auto print = [&](std::optional<std::size_t> columns) {
    char* buffer = nullptr;
    std::size_t size = 0;
    FILE* memory = open_memstream(&buffer, &size);
    {
      Session session(testing::quiet_config());
      session.add_sink(std::make_shared<ConsoleSink>(memory, false, columns));
      session.begin_step(3);
      session.observe(output(3, module, "log", {std::nanf("")}, {}, true));
      session.end_step(3, std::nullopt);
      session.finish();
    }
    std::fclose(memory);
    std::string text(buffer, size);
    std::free(buffer);
    return text;
  };
  const std::string narrow = print(60);
  std::size_t lines = 0;
  for (std::size_t start = 0; start < narrow.size();) {
    const std::size_t end = narrow.find('\n', start);
    const std::string line = narrow.substr(start, end - start);
    EXPECT_LE(display_width(line), 60U) << line;
    ++lines;
    start = end + 1;
  }
  EXPECT_GE(lines, 5U) << narrow;  // the finding wrapped, the summary, its row, "try:" wrapped
  EXPECT_NE(narrow.find("encoder.lay"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("…"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("(1 step)"), std::string::npos) << narrow;

  const std::string whole = print(0);
  EXPECT_NE(whole.find(module + " / log  (1 step)"), std::string::npos) << whole;
  EXPECT_EQ(whole.find("…"), std::string::npos) << whole;
}

}  // namespace
}  // namespace tfdebug
