// A rule added in one file: this one. Its settings, its rule and its registration are all here;
// nothing else of the project names it, and yet run configuration files set its keys,
// RunConfig::entries lists them, RunConfig::validate checks them, and a Session runs it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "session_test_util.hpp"
#include "tfdebug/session/rule_registry.hpp"

namespace {

using namespace tfdebug;
using namespace tfdebug::testing;

// Rule "large_outputs": a forward output whose abs-max exceeds `limit`, reported once per module
// and op; a count of how many outputs it read, reported at the end of the run as an info.
struct LargeOutputsRule {
  static constexpr std::string_view kSection = "large_outputs";
  bool enabled = true;
  double limit = 100.0;
  int min_step = 0;  // ignore outputs before this step

  static void describe(RuleKeys<LargeOutputsRule>& keys) {
    keys.flag("enabled", &LargeOutputsRule::enabled)
        .real("limit", &LargeOutputsRule::limit, Range::positive)
        .integer("min_step", &LargeOutputsRule::min_step);
  }
};

class LargeOutputs final : public Rule {
 public:
  LargeOutputs(const RunConfig& /*config*/, const LargeOutputsRule& settings) : rule_(settings) {}

  Interest interest() const override { return Interest::of(Role::output, Phase::forward); }
  Needs needs(const Observation& o) const override {
    return {o.step >= rule_.min_step ? Need::range : Need::none};
  }
  void observe(const RuleInput& in, RuleContext& out) override {
    ++read_;
    const Observation& o = in.observation;
    if (in.stats.abs_max <= rule_.limit) return;
    Finding f;
    f.rule = "large_outputs";
    f.severity = Severity::warning;
    f.step = f.last_step = o.step;
    f.module = o.module;
    f.op = o.op;
    f.message = "abs max above the limit";
    f.evidence = {{"abs_max", in.stats.abs_max}, {"limit", rule_.limit}};
    out.emit(std::move(f));
  }
  void summarize(RunSummary& summary) const override {
    Finding f;
    f.rule = "large_outputs_read";
    f.severity = Severity::info;
    f.evidence = {{"read", read_}};
    summary.findings.push_back(std::move(f));
  }

 private:
  LargeOutputsRule rule_;
  std::int64_t read_ = 0;
};

TFDEBUG_REGISTER_RULE(LargeOutputsRule, LargeOutputs);

std::filesystem::path write(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("tfdebug_plugin_" + name);
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::filesystem::path& path) {
  try {
    RunConfig::from_file(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

void run_steps(Session& session, const std::vector<float>& big, const std::vector<float>& small) {
  for (std::int64_t step = 0; step < 4; ++step) {
    session.begin_step(step);
    session.observe(output(step, "blocks.0", "aten::linear", step == 3 ? big : small, {2, 2}));
    session.observe(output(step, "blocks.1", "aten::relu", small, {2, 2}));
    session.end_step(step, 1.0);
  }
}

TEST(PluginRule, IsRegisteredAfterTheBuiltInRulesInTheirOrder) {
  std::vector<std::string> sections;
  for (const auto& info : RuleRegistry::instance().rules()) sections.push_back(info->section);
  const std::vector<std::string> builtin = {"nonfinite",    "headroom",  "dead_units",   "saturation",
                                            "spectral",     "gradients", "update_ratio", "unused_parameters",
                                            "weight_scale", "loss"};
  ASSERT_GE(sections.size(), builtin.size() + 1);
  EXPECT_EQ(std::vector<std::string>(sections.begin(), sections.begin() + std::ptrdiff_t(builtin.size())),
            builtin);
  EXPECT_NE(std::find(sections.begin(), sections.end(), "large_outputs"), sections.end());
  // A second rule of the same section is refused.
  EXPECT_THROW((RuleRegistry::instance().add<LargeOutputsRule, LargeOutputs>()), Error);
}

TEST(PluginRule, ItsKeysComeFromAConfigurationFileAndRunInASession) {
  const auto path = write("a.toml", "[rules.large_outputs]\nlimit = 10.0\nmin_step = 1\n");
  RunConfig config = RunConfig::from_file(path);
  EXPECT_EQ(config.rules.get<LargeOutputsRule>().limit, 10.0);
  EXPECT_EQ(config.rules.get<LargeOutputsRule>().min_step, 1);
  Session session(config);
  run_steps(session, {50, -60, 1, 2}, {1, 2, 3, 4});
  const RunSummary summary = session.finish();
  const auto large = with_rule(summary.findings, "large_outputs");
  ASSERT_EQ(large.size(), 1u) << describe(summary.findings);
  EXPECT_EQ(large[0].step, 3);
  EXPECT_EQ(large[0].module, "blocks.0");
  EXPECT_EQ(large[0].evidence_value("abs_max"), 60.0);
  EXPECT_EQ(large[0].evidence_value("limit"), 10.0);
  // Steps 1-3, two outputs each: the rule read 6 outputs (none of step 0, before min_step).
  const auto read = with_rule(summary.findings, "large_outputs_read");
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].evidence_value("read"), 6.0);
}

TEST(PluginRule, DisabledInTheFileItDoesNotRun) {
  const auto path = write("b.json", R"({"rules": {"large_outputs": {"enabled": false}}})");
  Session session(RunConfig::from_file(path));
  run_steps(session, {50, -60, 1, 2}, {1, 2, 3, 4});
  const RunSummary summary = session.finish();
  EXPECT_TRUE(with_rule(summary.findings, "large_outputs").empty());
  EXPECT_TRUE(with_rule(summary.findings, "large_outputs_read").empty());
}

TEST(PluginRule, ItsKeysAreListedCheckedAndNamedInErrors) {
  RunConfig config;
  bool listed = false;
  for (const auto& [key, value] : config.entries()) {
    if (key == "rules.large_outputs.limit") {
      listed = true;
      EXPECT_EQ(value, "100");
    }
  }
  EXPECT_TRUE(listed);
  config.rules.get<LargeOutputsRule>().limit = -1;
  try {
    config.validate();
    ADD_FAILURE() << "a negative limit was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "rules.large_outputs.limit: must be > 0, got -1.000000");
  }
  const auto unknown = write("c.toml", "[rules.large_outputs]\nlimt = 3\n");
  EXPECT_EQ(error_of(unknown),
            unknown.string() +
                ": rules.large_outputs.limt: unknown key (expected one of: enabled, limit, min_step)");
  const auto type = write("d.toml", "[rules.large_outputs]\nmin_step = 1.5\n");
  EXPECT_EQ(error_of(type), type.string() + ": rules.large_outputs.min_step: expected an integer, got 1.5");
}

TEST(PluginRule, ASessionTakesARuleObjectBeforeItsFirstStep) {
  RunConfig config = quiet_config();
  config.rules.get<LargeOutputsRule>().enabled = false;  // only the added instance runs
  Session session(config);
  LargeOutputsRule settings;
  settings.limit = 1000;
  session.add_rule(std::make_unique<LargeOutputs>(config, settings));
  run_steps(session, {5000, 1, 1, 1}, {1, 2, 3, 4});
  EXPECT_THROW(session.add_rule(std::make_unique<LargeOutputs>(config, settings)), Error);
  const auto large = with_rule(session.finish().findings, "large_outputs");
  ASSERT_EQ(large.size(), 1u);
  EXPECT_EQ(large[0].evidence_value("abs_max"), 5000.0);
}

// A rule with a bug: an internal check fails inside the hook. The Session records it and goes on.
class BrokenRule final : public Rule {
 public:
  Interest interest() const override { return Interest::of(Role::output, Phase::forward); }
  Needs needs(const Observation&) const override { return {Need::range}; }
  void observe(const RuleInput& in, RuleContext&) override {
    TFDEBUG_HOOK_CHECK(in.stats.count < 0, "a count below zero");
  }
};

TEST(PluginRule, AnInternalCheckThatFailsInARuleIsRecordedAndTheRunGoesOn) {
  Session session(quiet_config());
  session.add_rule(std::make_unique<BrokenRule>());
  const std::vector<float> bad = {1.0f, std::numeric_limits<float>::quiet_NaN()};
  for (std::int64_t step = 0; step < 3; ++step) {
    session.begin_step(step);
    session.observe(output(step, "m", "aten::log", bad, {}, true));
    session.end_step(step, 1.0);
  }
  const RunSummary summary = session.finish();
  ASSERT_FALSE(summary.hook_errors.empty());
  EXPECT_NE(summary.hook_errors[0].find("tfdebug internal error: a count below zero"), std::string::npos)
      << summary.hook_errors[0];
  // The built-in rules ran before it on the same observation: the NaN's producer is named.
  EXPECT_EQ(with_rule(summary.findings, "nonfinite").size(), 1u);
}

}  // namespace
