// metrics.jsonl read back (read_metrics_jsonl) and a run's exports rebuilt from its directory
// (rebuild_exports). The workbook, TensorBoard and MLflow files are compared with the live ones
// by independent readers in tests/cli/report_test.sh; here: the numbers, exactly.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "tfdebug/core/error.hpp"
#include "tfdebug/export/metrics_files.hpp"
#include "tfdebug/export/run_rebuild.hpp"
#include "tfdebug/session/probe.hpp"
#include "tfdebug/session/session.hpp"

namespace tfdebug {
namespace {

std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool same(const std::optional<double>& a, const std::optional<double>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  if (std::isnan(*a)) return std::isnan(*b);
  return *a == *b;
}

// Every field that metrics.jsonl carries (histograms it does not).
void expect_same(const StepMetrics& a, const StepMetrics& b) {
  EXPECT_EQ(a.step, b.step);
  EXPECT_TRUE(same(a.loss, b.loss)) << "step " << a.step;
  ASSERT_EQ(a.modules.size(), b.modules.size()) << "step " << a.step;
  for (std::size_t i = 0; i < a.modules.size(); ++i) {
    const ModuleMetrics& x = a.modules[i];
    const ModuleMetrics& y = b.modules[i];
    EXPECT_EQ(x.module, y.module);
    EXPECT_TRUE(same(x.grad_norm, y.grad_norm)) << x.module;
    EXPECT_TRUE(same(x.update_ratio, y.update_ratio)) << x.module;
    ASSERT_EQ(x.activations.has_value(), y.activations.has_value()) << x.module;
    if (!x.activations) continue;
    EXPECT_EQ(x.activations->outputs, y.activations->outputs);
    EXPECT_EQ(x.activations->values, y.activations->values);
    EXPECT_EQ(x.activations->nonfinite, y.activations->nonfinite);
    EXPECT_EQ(x.activations->zeros, y.activations->zeros);
    EXPECT_EQ(x.activations->abs_max, y.activations->abs_max);
    EXPECT_TRUE(same(x.activations->dead_fraction, y.activations->dead_fraction));
  }
}

TEST(MetricsJsonl, ReadsBackEveryValueIncludingNonFiniteOnes) {
  const auto dir = fresh_dir("tfdebug_metrics_read");
  std::vector<StepMetrics> written(4);
  for (std::size_t i = 0; i < written.size(); ++i) {
    StepMetrics& m = written[i];
    m.step = std::int64_t(i) * 10;
    ActivationSummary a;
    a.outputs = 3;
    a.values = 4096;
    a.zeros = 1234 + std::int64_t(i);
    a.nonfinite = std::int64_t(i);
    a.abs_max = 6.25 / double(i + 1);
    if (i % 2 == 0) a.dead_fraction = 0.125 * double(i);
    m.modules.push_back({"", 0.1 / 3.0, std::nullopt, a});
    m.modules.push_back({"blocks.0.attn", 1e-300, 3e-5, std::nullopt});
  }
  written[0].loss = 2.5;
  written[1].loss = std::numeric_limits<double>::quiet_NaN();
  written[2].loss = std::numeric_limits<double>::infinity();
  written[2].modules[1].grad_norm = -std::numeric_limits<double>::infinity();
  written[3].modules[1].update_ratio = std::numeric_limits<double>::quiet_NaN();  // loss: none
  {
    JsonlMetricsSink sink(dir / "metrics.jsonl");
    for (const StepMetrics& m : written) sink.on_step(m);
    sink.on_run_end(RunSummary{});
  }
  std::vector<StepMetrics> read;
  const MetricsFileRead r =
      read_metrics_jsonl(dir / "metrics.jsonl", [&](const StepMetrics& m) { read.push_back(m); });
  EXPECT_EQ(r.steps, 4);
  EXPECT_EQ(r.first_step, 0);
  EXPECT_EQ(r.last_step, 30);
  EXPECT_FALSE(r.cut_off);
  ASSERT_EQ(read.size(), written.size());
  for (std::size_t i = 0; i < read.size(); ++i) expect_same(written[i], read[i]);
  EXPECT_TRUE(std::isinf(*read[2].loss) && *read[2].loss > 0);
  EXPECT_TRUE(std::isinf(*read[2].modules[1].grad_norm) && *read[2].modules[1].grad_norm < 0);
  EXPECT_FALSE(read[3].loss.has_value());

  // A run killed while it wrote a line leaves part of it: the rest is read, the part is not.
  std::ofstream(dir / "metrics.jsonl", std::ios::binary | std::ios::app) << "{\"step\": 40, \"lo";
  read.clear();
  const MetricsFileRead cut =
      read_metrics_jsonl(dir / "metrics.jsonl", [&](const StepMetrics& m) { read.push_back(m); });
  EXPECT_EQ(cut.steps, 4);
  EXPECT_TRUE(cut.cut_off);
  const std::uintmax_t whole = std::filesystem::file_size(dir / "metrics.jsonl") - 16;  // before the part
  EXPECT_EQ(cut.end_offset, whole);

  // Read as it grows (tfdebug top): from the end of the last whole line, the rest of the line
  // once it is written, and then nothing new.
  std::ofstream(dir / "metrics.jsonl", std::ios::binary | std::ios::app) << "ss\": 0.25, \"modules\": {}}\n";
  read.clear();
  const MetricsFileRead grown = read_metrics_jsonl(
      dir / "metrics.jsonl", [&](const StepMetrics& m) { read.push_back(m); }, cut.end_offset);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].step, 40);
  EXPECT_EQ(*read[0].loss, 0.25);
  EXPECT_FALSE(grown.cut_off);
  EXPECT_EQ(grown.end_offset, std::filesystem::file_size(dir / "metrics.jsonl"));
  read.clear();
  const MetricsFileRead again = read_metrics_jsonl(
      dir / "metrics.jsonl", [&](const StepMetrics& m) { read.push_back(m); }, grown.end_offset);
  EXPECT_EQ(again.steps, 0);
  EXPECT_TRUE(read.empty());
  EXPECT_EQ(again.end_offset, grown.end_offset);
}

std::string error_of_line(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  try {
    (void)read_metrics_jsonl(path, [](const StepMetrics&) {});
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(MetricsJsonl, MalformedLinesAreOneLineErrorsNamingLineAndField) {
  const auto dir = fresh_dir("tfdebug_metrics_bad");
  const auto path = dir / "metrics.jsonl";
  const std::string p = path.string();
  try {
    (void)read_metrics_jsonl(dir / "none.jsonl", [](const StepMetrics&) {});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir / "none.jsonl").string() +
                  ": not found: expected the per-step metrics a JsonlMetricsSink writes");
  }
  const std::string good = "{\"step\":0,\"loss\":1.0,\"modules\":{}}\n";
  EXPECT_EQ(
      error_of_line(path, good + "{\"step\":1,\"loss\":1.0,\"modules\":{\"fc\":{\"grad_norm\":\"big\"}}}\n"),
      p + ": line 2: field 'modules.fc.grad_norm': expected a number or null");
  EXPECT_EQ(error_of_line(path, good + good + "not json\n"),
            p + ": line 3: not JSON (a syntax error at byte 2): expected one step's metrics");
  EXPECT_EQ(error_of_line(path, "{\"loss\":1.0,\"modules\":{}}\n"),
            p + ": line 1: field 'step': expected an integer");
  EXPECT_EQ(error_of_line(path, "{\"step\":0,\"loss\":null,\"loss_nonfinite\":\"big\",\"modules\":{}}\n"),
            p + ": line 1: field 'loss_nonfinite': expected \"nan\", \"inf\" or \"-inf\"");
  EXPECT_EQ(error_of_line(
                path, "{\"step\":0,\"loss\":1,\"modules\":{\"fc\":{\"activations\":{\"outputs\":-1}}}}\n"),
            p + ": line 1: field 'modules.fc.activations.outputs': expected a count (an integer >= 0)");
  EXPECT_EQ(error_of_line(path, "[[[[[[[[[[[[[[]]]]]]]]]]]]]]\n"),
            p + ": line 1: nested deeper than 4 levels: not a line of metrics.jsonl");
  // metrics_jsonl_fuzz: a number past a double's range was the parser's out_of_range, not a
  // tfdebug::Error (tfdebug report exited 3).
  EXPECT_EQ(error_of_line(path, good + "{\"step\":1,\"loss\":1e400,\"modules\":{}}\n"),
            p + ": line 2: a number beyond the range of a double: expected one step's metrics");
}

// The same small run as tests/export/write_run.cpp, finished, through a recording sink and
// metrics.jsonl/csv; rebuilt: the same metrics, the same CSV bytes, the same summary.
class Recorder : public Sink {
 public:
  Delivery delivery() const noexcept override { return Delivery::synchronous; }
  void on_finding(const Finding&) override {}
  void on_run_end(const RunSummary& s) override { summary = s; }
  void on_step(const StepMetrics& m) override { steps.push_back(m); }
  bool wants_step_metrics() const noexcept override { return true; }
  std::vector<StepMetrics> steps;
  RunSummary summary;
};

TEST(RebuildExports, TheSameMetricsAndCsvAsTheLiveRun) {
  const auto dir = fresh_dir("tfdebug_rebuild");
  RunConfig config;
  config.run_dir = dir / "run";
  config.rules.get<DeadUnitsRule>().window = 3;
  auto recorder = std::make_shared<Recorder>();
  {
    Session session(config);
    session.add_sink(recorder);
    session.add_sink(std::make_shared<JsonlMetricsSink>(dir / "run" / "metrics.jsonl"));
    session.add_sink(std::make_shared<CsvMetricsSink>(dir / "run" / "metrics.csv"));
    Probe probe(session);
    std::vector<float> w(8 * 4, 0.5f), g(8 * 4, 0.01f), u(8 * 4, -0.001f);
    for (int step = 0; step < 8; ++step) {
      probe.begin_step(step);
      probe.observe_parameter("fc1.weight", TensorView(w.data(), DType::f32, {8, 4}));
      const std::vector<float> hidden(16 * 8, 0.0f);
      probe.observe("fc1.relu", Phase::forward, TensorView(hidden.data(), DType::f32, {16, 8}), true);
      std::vector<float> out(16, 1.0f + float(step));
      if (step >= 5) out[2] = std::nanf("");
      probe.observe("fc2.log", Phase::forward, TensorView(out.data(), DType::f32, {4, 4}), true);
      probe.observe_gradient("fc1.weight", TensorView(g.data(), DType::f32, {8, 4}));
      probe.observe_update("fc1.weight", TensorView(u.data(), DType::f32, {8, 4}));
      probe.end_step(step >= 5 ? std::nan("") : 1.0 / (step + 1));
    }
    session.finish();
  }
  ASSERT_EQ(recorder->steps.size(), 8u);
  std::vector<StepMetrics> read;
  (void)read_metrics_jsonl(dir / "run" / "metrics.jsonl", [&](const StepMetrics& m) { read.push_back(m); });
  ASSERT_EQ(read.size(), recorder->steps.size());
  for (std::size_t i = 0; i < read.size(); ++i) expect_same(recorder->steps[i], read[i]);

  RebuildTargets targets;
  targets.csv = (dir / "rebuilt.csv").string();
  const RunRebuild run = rebuild_exports(dir / "run", targets);
  EXPECT_EQ(slurp(dir / "rebuilt.csv"), slurp(dir / "run" / "metrics.csv"));
  EXPECT_TRUE(run.summary.complete);
  EXPECT_EQ(run.summary.steps, 8);
  ASSERT_EQ(run.summary.findings.size(), recorder->summary.findings.size());
  for (std::size_t i = 0; i < run.summary.findings.size(); ++i) {
    EXPECT_EQ(run.summary.findings[i].rule, recorder->summary.findings[i].rule);
    EXPECT_EQ(run.summary.findings[i].step, recorder->summary.findings[i].step);
    EXPECT_EQ(run.summary.findings[i].count, recorder->summary.findings[i].count);
    EXPECT_EQ(run.summary.findings[i].message, recorder->summary.findings[i].message);
  }
  ASSERT_TRUE(run.metrics.has_value());
  EXPECT_EQ(run.metrics->steps, 8);

  // Without metrics.jsonl there is nothing to rebuild the exports from.
  std::filesystem::remove(dir / "run" / "metrics.jsonl");
  try {
    (void)rebuild_exports(dir / "run", targets);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              (dir / "run" / "metrics.jsonl").string() +
                  ": not found: the exports are rebuilt from the per-step metrics a run "
                  "writes with a JsonlMetricsSink (tfdebug demo --out writes it)");
  }
  // The summary alone needs only report.json.
  EXPECT_EQ(rebuild_exports(dir / "run", RebuildTargets{}).summary.steps, 8);
}

}  // namespace
}  // namespace tfdebug
