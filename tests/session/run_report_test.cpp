// report.json as a run goes (Note [Report as it goes] in src/session/session.cpp) and read back
// (read_run_report): rewritten atomically, valid at every moment, also in a run that is killed.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "session_test_util.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/session/json_report_sink.hpp"
#include "tfdebug/session/probe.hpp"
#include "tfdebug/session/run_report.hpp"

namespace tfdebug {
namespace {

using testing::output;

std::filesystem::path fresh_dir(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// Steps 0..steps-1 of a layer whose ReLU is dead (a warning from step 2, window 3) and, from
// step `nan_from`, a log that makes NaN from finite inputs (an error).
void train(Session& session, std::int64_t first, std::int64_t steps, std::int64_t nan_from) {
  for (std::int64_t step = first; step < first + steps; ++step) {
    session.begin_step(step);
    session.observe(output(step, "fc1", "relu", std::vector<float>(12, 0.0f), {3, 4}));
    const std::vector<float> v =
        step >= nan_from ? std::vector<float>{std::nanf(""), 1} : std::vector<float>{2, 1};
    session.observe(output(step, "fc2", "log", v, {}, true));
    session.end_step(step, 1.5);
  }
}

RunConfig config_in(const std::filesystem::path& dir) {
  RunConfig config = testing::quiet_config();
  config.run_dir = dir;
  config.rules.get<DeadUnitsRule>().window = 3;
  return config;
}

TEST(RunReport, WrittenAsTheRunGoesCompleteAtTheFinish) {
  const auto dir = fresh_dir("tfdebug_report_progress");
  Session session(config_in(dir));
  train(session, 0, 1, 100);
  // The first end_step writes a report: a run killed from here on has one.
  nlohmann::json report = read_json(dir / "report.json");
  EXPECT_EQ(report["complete"], false);
  EXPECT_EQ(report["steps"], 1);
  EXPECT_EQ(report["findings"].size(), 0u);
  EXPECT_EQ(report["config"]["rules.dead_units.window"], "3");
  train(session, 1, 2, 2);  // step 2: the dead layer (warning) and the NaN (error), both new
  report = read_json(dir / "report.json");
  EXPECT_EQ(report["complete"], false);
  ASSERT_EQ(report["findings"].size(), 2u);
  EXPECT_EQ(report["findings"][0]["rule"], "dead_units");
  EXPECT_EQ(report["findings"][1]["rule"], "nonfinite");
  EXPECT_EQ(report["findings"][1]["step"], 2);
  EXPECT_EQ(report["counts"]["error"], 1);
  EXPECT_FALSE(std::filesystem::exists(dir / "report.json.tmp"));
  train(session, 3, 3, 2);
  session.finish();
  report = read_json(dir / "report.json");
  EXPECT_EQ(report["complete"], true);
  EXPECT_EQ(report["steps"], 6);
  EXPECT_EQ(report["findings"][1]["count"], 4);  // steps 2..5
  EXPECT_EQ(report["findings"][1]["last_step"], 5);
}

TEST(RunReport, ReadsBackWhatWasWritten) {
  const auto dir = fresh_dir("tfdebug_report_read");
  RunSummary s;
  s.steps = 7;
  s.first_step = 3;
  s.last_step = 9;
  s.observations = 123;
  s.stopped = true;
  s.complete = false;
  Finding f;
  f.rule = "nonfinite";
  f.severity = Severity::error;
  f.step = 4;
  f.phase = Phase::backward;
  f.module = "blocks.0.mlp";
  f.op = "log";
  f.message = "log made NaN";
  f.suggestion = "clamp it";
  f.evidence = {{"nan", 3},
                {"ratio", 0.25},
                {"rows", std::vector<std::int64_t>{1, -2, 3}},
                {"same_as", "wte"},
                {"norm", std::nan("")}};
  f.count = 5;
  f.last_step = 9;
  f.latest = Occurrence{9, "later", {{"nan", 8}}, 2.0};
  s.findings.push_back(f);
  Finding g = f;
  g.rule = "dead_units";
  g.severity = Severity::warning;
  g.phase = Phase::optimizer;
  g.latest.reset();
  g.worst = Occurrence{6, "worst", {{"fraction", 0.5}}, 0.5};
  s.findings.push_back(g);
  s.spectral.push_back({"fc1", "fc1.weight", 8, 1.5, 2.25, 3});
  s.flight_recorder = "flight_recorder.json";
  s.dropped_findings = 1;
  s.untracked_observations = 2;
  s.dropped_op_summaries = 3;
  s.dropped_sink_events = 4;
  s.hook_errors = {"sink: disk full"};
  JsonReportSink(dir / "report.json", {{"tier", "watch"}, {"rules.loss.window", "20"}}).write(s);

  const RunReport r = read_run_report(dir / "report.json");
  const RunSummary& t = r.summary;
  EXPECT_FALSE(t.complete);
  EXPECT_EQ(t.steps, 7);
  EXPECT_EQ(t.first_step, 3);
  EXPECT_EQ(t.last_step, 9);
  EXPECT_EQ(t.observations, 123);
  EXPECT_TRUE(t.stopped);
  ASSERT_EQ(t.findings.size(), 2u);
  const Finding& a = t.findings[0];
  EXPECT_EQ(a.rule, "nonfinite");
  EXPECT_EQ(a.severity, Severity::error);
  EXPECT_EQ(a.step, 4);
  EXPECT_EQ(a.phase, Phase::backward);
  EXPECT_EQ(a.module, "blocks.0.mlp");
  EXPECT_EQ(a.op, "log");
  EXPECT_EQ(a.message, "log made NaN");
  EXPECT_EQ(a.suggestion, "clamp it");
  EXPECT_EQ(a.count, 5);
  EXPECT_EQ(a.last_step, 9);
  ASSERT_EQ(a.evidence.size(), 5u);
  EXPECT_EQ(a.evidence[0].key, "nan");  // in the order written
  EXPECT_EQ(a.evidence_value("nan"), 3);
  EXPECT_EQ(a.evidence_value("ratio"), 0.25);
  EXPECT_EQ(std::get<std::vector<std::int64_t>>(*a.find_evidence("rows")),
            (std::vector<std::int64_t>{1, -2, 3}));
  EXPECT_EQ(std::get<std::string>(*a.find_evidence("same_as")), "wte");
  EXPECT_TRUE(std::isnan(a.evidence_value("norm")));
  ASSERT_TRUE(a.latest.has_value());
  EXPECT_EQ(a.latest->step, 9);
  EXPECT_EQ(a.latest->message, "later");
  EXPECT_EQ(a.latest->evidence[0].key, "nan");
  EXPECT_FALSE(a.worst.has_value());
  const Finding& b = t.findings[1];
  EXPECT_EQ(b.severity, Severity::warning);
  EXPECT_EQ(b.phase, Phase::optimizer);
  EXPECT_FALSE(b.latest.has_value());
  ASSERT_TRUE(b.worst.has_value());
  EXPECT_EQ(b.worst->step, 6);
  ASSERT_EQ(t.spectral.size(), 1u);
  EXPECT_EQ(t.spectral[0].parameter, "fc1.weight");
  EXPECT_EQ(t.spectral[0].stable_rank, 2.25);
  EXPECT_EQ(t.spectral[0].iterations, 3);
  EXPECT_EQ(t.flight_recorder, std::filesystem::path("flight_recorder.json"));
  EXPECT_EQ(t.dropped_findings, 1);
  EXPECT_EQ(t.untracked_observations, 2);
  EXPECT_EQ(t.dropped_op_summaries, 3);
  EXPECT_EQ(t.dropped_sink_events, 4);
  EXPECT_EQ(t.hook_errors, std::vector<std::string>{"sink: disk full"});
  EXPECT_EQ(r.config, (std::vector<std::pair<std::string, std::string>>{{"tier", "watch"},
                                                                        {"rules.loss.window", "20"}}));
}

// A reader on another thread, while a writer replaces the file 400 times with reports of 0 to
// 399 findings: every read is a whole report, and reports only grow.
TEST(RunReport, ReadersNeverSeeHalfAReport) {
  const auto dir = fresh_dir("tfdebug_report_atomic");
  const auto path = dir / "report.json";
  JsonReportSink sink(path);
  RunSummary s;
  sink.write(s);
  std::atomic<bool> done{false};
  std::int64_t reads = 0;
  std::size_t last = 0;
  std::string failure;
  std::thread reader([&] {
    while (!done.load()) {
      try {
        const std::size_t n = read_run_report(path).summary.findings.size();
        if (n < last)
          failure = "went back from " + std::to_string(last) + " to " + std::to_string(n) + " findings";
        last = n;
        ++reads;
      } catch (const Error& e) {
        failure = e.what();
      }
      if (!failure.empty()) return;
    }
  });
  Finding f;
  f.rule = "nonfinite";
  f.message = std::string(200, 'x');  // a few KiB a report: more than one write(2) each
  for (int i = 0; i < 400; ++i) {
    sink.write(s);
    f.step = i;
    s.findings.push_back(f);
  }
  done.store(true);
  reader.join();
  EXPECT_EQ(failure, "");
  EXPECT_GT(reads, 0);
  EXPECT_EQ(read_run_report(path).summary.findings.size(), 399u);
}

// A training process (a child, with the probe API) killed with SIGKILL after its findings: no
// finish(), no destructor. Its report.json holds them, says the run did not finish, and no
// temporary file is left behind.
TEST(RunReport, AKilledRunLeavesItsFindings) {
  const auto dir = fresh_dir("tfdebug_report_killed");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(ready[0]);
    Session session(config_in(dir));
    Probe probe(session);
    const std::vector<float> dead(12, 0.0f);
    for (std::int64_t step = 0; step < 5; ++step) {
      probe.begin_step(step);
      probe.observe("fc1.relu", Phase::forward, TensorView(dead.data(), DType::f32, {3, 4}));
      const std::vector<float> v =
          step >= 3 ? std::vector<float>{std::nanf(""), 1} : std::vector<float>{2, 1};
      probe.observe("fc2.log", Phase::forward, TensorView(v.data(), DType::f32, {2}), true);
      probe.end_step(0.5);
    }
    const char byte = 1;
    if (::write(ready[1], &byte, 1) != 1) ::_exit(1);
    for (;;) ::pause();  // the parent kills it here
  }
  ::close(ready[1]);
  char byte = 0;
  ASSERT_EQ(::read(ready[0], &byte, 1), 1);
  ::close(ready[0]);
  ASSERT_EQ(::kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

  const RunReport report = read_run_report(dir / "report.json");
  EXPECT_FALSE(report.summary.complete);
  ASSERT_EQ(report.summary.findings.size(), 2u);
  EXPECT_EQ(report.summary.findings[0].rule, "dead_units");
  EXPECT_EQ(report.summary.findings[0].step, 2);
  EXPECT_EQ(report.summary.findings[1].rule, "nonfinite");
  EXPECT_EQ(report.summary.findings[1].severity, Severity::error);
  EXPECT_EQ(report.summary.findings[1].step, 3);
  EXPECT_EQ(report.summary.findings[1].module, "fc2");
  EXPECT_FALSE(std::filesystem::exists(dir / "report.json.tmp"));
}

std::string error_of(const std::filesystem::path& path) {
  try {
    (void)read_run_report(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(RunReport, MalformedReportsAreOneLineErrorsNamingFileAndField) {
  const auto dir = fresh_dir("tfdebug_report_bad");
  const auto path = dir / "report.json";
  const std::string p = path.string();
  EXPECT_EQ(error_of(path), p + ": not found: expected the report.json a run with run_dir writes");
  auto put = [&](const std::string& text) { std::ofstream(path, std::ios::binary) << text; };
  put("{\"tool\": \"tfdebug\", \"version\": \"0.1.0\", \"ste");
  EXPECT_EQ(error_of(path), p + ": not JSON (a syntax error at byte 45): expected a report.json");
  put("[1, 2]");
  EXPECT_EQ(error_of(path), p + ": field '(top level)': expected an object (a report.json)");
  put(std::string(100000, '[') + std::string(100000, ']'));
  EXPECT_EQ(error_of(path), p + ": nested deeper than 16 levels: not a report.json");
  std::string keys = "{\"tool\": \"tfdebug\", \"config\": {";
  for (int i = 0; i < 300; ++i) keys += (i > 0 ? ",\"k" : "\"k") + std::to_string(i) + "\": \"{[:\"";
  put(keys + "}}");
  EXPECT_EQ(error_of(path), p + ": an object with more than 256 keys: not a report.json");
  // run_report_fuzz: a number past a double's range was the parser's out_of_range, not a
  // tfdebug::Error (tfdebug report exited 3).
  put("{\"tool\": \"tfdebug\", \"steps\": 1e400}");
  EXPECT_EQ(error_of(path), p + ": a number beyond the range of a double: not a report.json");

  RunSummary s;
  Finding f;
  f.rule = "nonfinite";
  s.findings.push_back(f);
  JsonReportSink(path).write(s);
  nlohmann::json good = read_json(path);
  nlohmann::json bad = good;
  bad["findings"][0]["severity"] = "fatal";
  put(bad.dump());
  EXPECT_EQ(error_of(path),
            p + ": field 'findings[0].severity': expected \"error\", \"warning\" or \"info\"");
  bad = good;
  bad["steps"] = "many";
  put(bad.dump());
  EXPECT_EQ(error_of(path), p + ": field 'steps': expected an integer");
  bad = good;
  bad["findings"][0].erase("message");
  put(bad.dump());
  EXPECT_EQ(error_of(path), p + ": field 'findings[0].message': expected it to be there");
  bad = good;
  bad["findings"][0]["evidence"]["a\x1b[31m\nb"] = nlohmann::json::object();
  put(bad.dump());
  EXPECT_EQ(
      error_of(path),
      p + ": field 'findings[0].evidence.a?[31m?b': expected a number, a string, null or a list of integers");
  bad = good;
  bad["tool"] = "other";
  put(bad.dump());
  EXPECT_EQ(error_of(path), p + ": field 'tool': expected \"tfdebug\"");
  bad = good;
  bad.erase("complete");  // a report of a tfdebug that wrote it only at the finish
  put(bad.dump());
  EXPECT_TRUE(read_run_report(path).summary.complete);
}

}  // namespace
}  // namespace tfdebug
