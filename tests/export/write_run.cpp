// A small debugged run, written live by every sink, for the tests of `tfdebug report`
// (tests/cli/report_test.sh) and the fixture of docs/report.md: a probe feeds a Session a
// two-layer model whose fc1 ReLU is dead from the start and whose fc2 log makes NaN from step 5.
//
//   write_run OUT [--kill-after STEP]
//
// OUT/run is the run directory (report.json, metrics.jsonl, metrics.csv, flight_recorder.json);
// OUT/live.xlsx, OUT/tb and OUT/mlruns are the live exports. With --kill-after the process sends
// itself SIGKILL at the end of that step, as the OOM killer would: no finish(), no destructor.
// The metrics sinks are queued: before the kill it waits (at most 10 s) until metrics.jsonl holds
// a step, so that the killed run has between 1 and STEP + 1 steps on disk however busy the
// machine (under a loaded CI, the sink's thread had written none yet).
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tfdebug/export/metrics_files.hpp"
#include "tfdebug/export/mlflow_sink.hpp"
#include "tfdebug/export/tensorboard_sink.hpp"
#include "tfdebug/export/xlsx_sink.hpp"
#include "tfdebug/session/probe.hpp"
#include "tfdebug/session/session.hpp"

namespace {

constexpr int kSteps = 12;

tfdebug::TensorView view(const std::vector<float>& v, std::int64_t rows, std::int64_t cols) {
  return tfdebug::TensorView(v.data(), tfdebug::DType::f32, {rows, cols});
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && !(argc == 4 && std::string(argv[2]) == "--kill-after")) {
    std::fprintf(stderr, "usage: write_run OUT [--kill-after STEP]\n");
    return 2;
  }
  const std::string out = argv[1];
  const long kill_after = argc == 4 ? std::strtol(argv[3], nullptr, 10) : -1;
  tfdebug::RunConfig config;
  config.run_dir = out + "/run";
  config.rules.get<tfdebug::DeadUnitsRule>().window = 3;
  tfdebug::Session session(config);
  session.add_sink(std::make_shared<tfdebug::JsonlMetricsSink>(out + "/run/metrics.jsonl"));
  session.add_sink(std::make_shared<tfdebug::CsvMetricsSink>(out + "/run/metrics.csv"));
  session.add_sink(std::make_shared<tfdebug::XlsxSink>(out + "/live.xlsx", session.config()));
  session.add_sink(std::make_shared<tfdebug::TensorBoardSink>(out + "/tb"));
  session.add_sink(
      std::make_shared<tfdebug::MlflowSink>(out + "/mlruns", "tfdebug report", "run", session.config()));
  tfdebug::Probe probe(session);
  std::vector<float> w1(8 * 4), w2(4 * 8);
  for (std::size_t i = 0; i < w1.size(); ++i) w1[i] = 0.01f * float(i % 7) - 0.03f;
  for (std::size_t i = 0; i < w2.size(); ++i) w2[i] = 0.02f * float(i % 5) - 0.04f;
  for (int step = 0; step < kSteps; ++step) {
    probe.begin_step(step);
    probe.observe_parameter("fc1.weight", view(w1, 8, 4));
    probe.observe_parameter("fc2.weight", view(w2, 4, 8));
    const std::vector<float> hidden(16 * 8, 0.0f);  // every unit of fc1's ReLU is 0
    probe.observe("fc1.relu", tfdebug::Phase::forward, view(hidden, 16, 8), true);
    std::vector<float> logits(16 * 4);
    for (std::size_t i = 0; i < logits.size(); ++i)
      logits[i] = 1.0f + 0.1f * float(i % 9) - 0.05f * float(step);
    if (step >= 5) logits[3] = std::log(-1.0f);  // NaN from finite inputs
    probe.observe("fc2.log", tfdebug::Phase::forward, view(logits, 16, 4), true);
    std::vector<float> g1(w1.size()), g2(w2.size()), u1(w1.size()), u2(w2.size());
    for (std::size_t i = 0; i < g1.size(); ++i) g1[i] = 0.001f * float((i + std::size_t(step)) % 11);
    for (std::size_t i = 0; i < g2.size(); ++i) g2[i] = 0.002f * float((i + std::size_t(step)) % 13);
    for (std::size_t i = 0; i < u1.size(); ++i) u1[i] = -0.1f * g1[i];
    for (std::size_t i = 0; i < u2.size(); ++i) u2[i] = -0.1f * g2[i];
    probe.observe_gradient("fc1.weight", view(g1, 8, 4));
    probe.observe_gradient("fc2.weight", view(g2, 4, 8));
    probe.observe_update("fc1.weight", view(u1, 8, 4));
    probe.observe_update("fc2.weight", view(u2, 4, 8));
    for (std::size_t i = 0; i < w1.size(); ++i) w1[i] += u1[i];
    for (std::size_t i = 0; i < w2.size(); ++i) w2[i] += u2[i];
    const double loss = step >= 5 ? std::nan("") : 2.0 / (step + 1.0);
    probe.end_step(loss);
    if (step == kill_after) {
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      std::error_code ec;
      while (std::filesystem::file_size(out + "/run/metrics.jsonl", ec) == 0 || ec) {
        if (std::chrono::steady_clock::now() > give_up) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      std::raise(SIGKILL);
    }
  }
  session.finish();
  return 0;
}
