#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "session_test_util.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/session/rule_registry.hpp"
#include "tfdebug/session/rules/headroom.hpp"

namespace tfdebug {
namespace {

class RunConfigFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tfdebug_config_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path write(const std::string& name, const std::string& text) {
    const auto path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }
  // The message of the tfdebug::Error that from_file throws ("" when it does not throw).
  static std::string error_of(const std::filesystem::path& path) {
    try {
      RunConfig::from_file(path);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  }
  std::filesystem::path dir_;
};

TEST_F(RunConfigFile, Toml) {
  const auto path = write("run.toml", R"(
run_dir = "out"
tier = "diagnose"
stop_on_error = true
diagnose_steps = 4
history_length = 20
target_dtype = "bf16"

[flight_recorder]
steps = 16
after = 3

[rules.dead_units]
window = 50
min_fraction = 0.25

[rules.loss]
enabled = false
spike_factor = 5.0

[rules.spectral]
every = 7
)");
  const RunConfig c = RunConfig::from_file(path);
  EXPECT_EQ(c.run_dir, dir_ / "out");
  EXPECT_EQ(c.tier, Tier::diagnose);
  EXPECT_TRUE(c.stop_on_error);
  EXPECT_EQ(c.diagnose_steps, 4);
  EXPECT_EQ(c.history_length, 20);
  EXPECT_EQ(c.target_dtype, DType::bf16);
  EXPECT_EQ(c.flight_recorder_steps, 16);
  EXPECT_EQ(c.flight_recorder_after, 3);
  EXPECT_EQ(c.rules.get<DeadUnitsRule>().window, 50);
  EXPECT_EQ(c.rules.get<DeadUnitsRule>().min_fraction, 0.25);
  EXPECT_FALSE(c.rules.get<LossRule>().enabled);
  EXPECT_EQ(c.rules.get<LossRule>().spike_factor, 5.0);
  EXPECT_EQ(c.rules.get<SpectralRule>().every, 7);
  // Untouched keys keep their defaults.
  EXPECT_EQ(c.rules.get<GradientRule>().explode_ratio, 10.0);
  EXPECT_TRUE(c.rules.get<NonfiniteRule>().enabled);
}

TEST_F(RunConfigFile, JsonWithAbsoluteRunDir) {
  const auto path = write("run.json", R"({"run_dir": "/tmp/abs", "target_dtype": "f8_e4m3fn",
      "rules": {"update_ratio": {"min_ratio": 1e-6, "max_ratio": 0.5}, "gradients": {"min_layers": 2}}})");
  const RunConfig c = RunConfig::from_file(path);
  EXPECT_EQ(c.run_dir, "/tmp/abs");
  EXPECT_EQ(c.target_dtype, DType::f8_e4m3fn);
  EXPECT_EQ(c.rules.get<UpdateRatioRule>().min_ratio, 1e-6);
  EXPECT_EQ(c.rules.get<UpdateRatioRule>().max_ratio, 0.5);
  EXPECT_EQ(c.rules.get<GradientRule>().min_layers, 2);
  EXPECT_EQ(c.tier, Tier::watch);
}

TEST_F(RunConfigFile, ErrorsNameTheFileAndTheKey) {
  const auto unknown = write("a.toml", "[rules.dead_unit]\nwindow = 3\n");
  EXPECT_EQ(error_of(unknown).rfind(unknown.string() + ": rules.dead_unit: unknown key", 0), 0u)
      << error_of(unknown);

  const auto type = write("b.json", R"({"rules": {"dead_units": {"window": "ten"}}})");
  EXPECT_EQ(error_of(type), type.string() + ": rules.dead_units.window: expected an integer, got \"ten\"");

  const auto range = write("c.json", R"({"rules": {"dead_units": {"min_fraction": 2}}})");
  EXPECT_EQ(error_of(range),
            range.string() + ": rules.dead_units.min_fraction: must be in [0, 1], got 2.000000");

  const auto tier = write("d.toml", "tier = \"everything\"\n");
  EXPECT_EQ(error_of(tier), tier.string() + ": tier: expected \"watch\" or \"diagnose\", got \"everything\"");

  const auto syntax = write("e.toml", "tier = \n");
  EXPECT_EQ(error_of(syntax).rfind(syntax.string() + ":1:", 0), 0u) << error_of(syntax);
  EXPECT_NE(error_of(syntax).find("not valid TOML"), std::string::npos);

  const auto json = write("f.json", "{\"tier\": ");
  EXPECT_NE(error_of(json).find(json.string() + ": not valid JSON"), std::string::npos) << error_of(json);

  const auto dtype = write("g.json", R"({"target_dtype": "f17"})");
  EXPECT_NE(error_of(dtype).find("target_dtype: expected one of"), std::string::npos) << error_of(dtype);

  // A growth limit of 1 or less would report every measurement that did not shrink.
  const auto growth = write("i.toml", "[rules.spectral]\nmax_growth = 1.0\n");
  EXPECT_EQ(error_of(growth), growth.string() + ": rules.spectral.max_growth: must be > 1, got 1.000000");
  const auto drift = write("j.toml", "[rules.weight_scale]\nmax_drift_rate = 0.5\n");
  EXPECT_EQ(error_of(drift),
            drift.string() + ": rules.weight_scale.max_drift_rate: must be > 1, got 0.500000");

  const auto yaml = write("h.yaml", "tier: watch\n");
  EXPECT_NE(error_of(yaml).find("unknown run configuration format '.yaml'"), std::string::npos);

  EXPECT_NE(error_of(dir_ / "missing.toml").find("missing.toml: cannot open"), std::string::npos);
}

// Found by fuzz/run_config_fuzz: a JSON number beyond a double's range made nlohmann-json throw
// out_of_range, which escaped as an unexpected failure instead of a tfdebug::Error.
TEST(RunConfig, FromTextNamesTheFileForANumberBeyondADouble) {
  try {
    RunConfig::from_text(R"({"rules": {"loss": {"spike_factor": 1e999}}})", "in-memory.json");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("in-memory.json: not valid JSON: ", 0), 0u) << e.what();
  }
  const RunConfig c = RunConfig::from_text("[rules.loss]\nspike_factor = 5.0\n", "in-memory.toml");
  EXPECT_EQ(c.rules.get<LossRule>().spike_factor, 5.0);
}

// overflow_range_used was called overflow_headroom (a bigger number meant less room): a file that
// still says so is read the same; the new name is what the run writes (report.json, MLflow).
TEST(RunConfig, OverflowRangeUsedAndItsOldName) {
  const RunConfig renamed =
      RunConfig::from_text("[rules.headroom]\noverflow_range_used = 0.5\n", "in-memory.toml");
  EXPECT_EQ(renamed.rules.get<HeadroomRule>().overflow_range_used, 0.5);
  const RunConfig old =
      RunConfig::from_text(R"({"rules": {"headroom": {"overflow_headroom": 0.25}}})", "in-memory.json");
  EXPECT_EQ(old.rules.get<HeadroomRule>().overflow_range_used, 0.25);
  bool listed = false;
  for (const auto& [key, value] : old.entries()) {
    EXPECT_NE(key, "rules.headroom.overflow_headroom");
    listed = listed || (key == "rules.headroom.overflow_range_used" && value == "0.25");
  }
  EXPECT_TRUE(listed);
}

TEST(RunConfig, ValidateInCode) {
  RunConfig c;
  c.validate();  // defaults are valid
  c.rules.get<UpdateRatioRule>().min_ratio = 1.0;
  EXPECT_THROW(Session{c}, Error);
  RunConfig d;
  d.flight_recorder_after = d.flight_recorder_steps;
  EXPECT_THROW(d.validate(), Error);
}

// docs/live-debugging.md lists every built-in rule's section and keys ("Rule sections and keys"):
// a key added to a rule and not to the page fails here.
TEST(RunConfig, TheDocsNameEveryRuleKey) {
  std::ifstream in(std::string(TFDEBUG_SOURCE_DIR) + "/docs/live-debugging.md");
  ASSERT_TRUE(in) << "docs/live-debugging.md";
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto begin = page.find("Rule sections and keys:");
  ASSERT_NE(begin, std::string::npos);
  std::string list = page.substr(begin, page.find("A rule a", begin) - begin);
  std::replace(list.begin(), list.end(), '\n', ' ');
  for (const auto& rule : RuleRegistry::instance().rules()) {
    const std::string opening = "`" + rule->section + "` (";
    const auto at = list.find(opening);
    ASSERT_NE(at, std::string::npos) << "no section " << rule->section;
    // The keys: up to the parenthesis that closes the section's.
    std::size_t end = at + opening.size();
    for (int depth = 1; end < list.size() && depth > 0; ++end)
      depth += list[end] == '(' ? 1 : list[end] == ')' ? -1 : 0;
    const std::string keys = list.substr(at, end - at);
    for (const SettingKey& key : rule->keys)
      EXPECT_NE(keys.find("`" + key.name + "`"), std::string::npos) << rule->section << "." << key.name;
  }
}

}  // namespace
}  // namespace tfdebug
