// MLflow file store: every file checked against MLflow's documented layout by
// tests/export/check_mlflow.py (python3-yaml); float formatting against Python itself.
#include "tfdebug/export/mlflow.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tfdebug/core/error.hpp"

namespace tfdebug {
namespace {

namespace fs = std::filesystem;

std::string run_command(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
  std::string out;
  std::array<char, 65536> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  if (::pclose(pipe) != 0) throw std::runtime_error(command + " failed: " + out);
  return out;
}

TEST(Mlflow, FloatsAsPythonPrintsThem) {
  const std::vector<double> values = {0.5,
                                      1e-05,
                                      100.0,
                                      1e16,
                                      1e15,
                                      123456789.125,
                                      -0.0,
                                      0.0,
                                      1.0 / 3,
                                      2.5e-300,
                                      1.7976931348623157e308,
                                      -4.94e-324,
                                      0.0001,
                                      12345.678,
                                      1e22,
                                      -7.0,
                                      std::numeric_limits<double>::quiet_NaN(),
                                      std::numeric_limits<double>::infinity(),
                                      -std::numeric_limits<double>::infinity()};
  std::string hex_list;
  for (const double v : values) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%a", v);
    hex_list += std::string(hex_list.empty() ? "" : ",") + "'" + buffer + "'";
  }
  const std::string python =
      run_command("/usr/bin/python3 -c \"import math\nfor h in [" + hex_list +
                  "]: print(repr(float(h) if h[0] in 'ni-' and not h.startswith('-0x') else "
                  "float.fromhex(h)))\"");
  std::string ours;
  for (const double v : values) ours += python_float(v) + "\n";
  EXPECT_EQ(ours, python);
}

TEST(Mlflow, RunLayoutMatchesTheFileStore) {
  const fs::path root = fs::temp_directory_path() / ("tfdebug_mlruns_" + std::to_string(::getpid()));
  fs::remove_all(root);
  const fs::path artifact = root.string() + "_report.json";
  std::ofstream(artifact) << "{\"findings\": []}\n";
  std::string first_run;
  {
    MlflowRun run(root.string(), "tfdebug demo", "fault: log");
    first_run = run.run_id();
    run.log_param("lr", "0.001");
    run.log_param("model/layers", "2");
    run.set_tag("diagnosis", "aten::log in blocks.1");
    for (int step = 0; step < 3; ++step) run.log_metric("loss", 1.0 / (step + 1), step);
    run.log_metric("grad_norm/blocks.0", std::numeric_limits<double>::quiet_NaN(), 2);
    run.log_artifact(artifact.string());
    EXPECT_THROW(run.log_param("bad key!", "x"), Error);
    EXPECT_THROW(run.log_metric("../escape", 1, 0), Error);
    run.finish();
  }
  {
    MlflowRun again(root.string(), "tfdebug demo", "second");  // the same experiment
    again.log_metric("loss", 0.25, 0);
  }  // finished by the destructor
  const auto j = nlohmann::json::parse(run_command("/usr/bin/python3 " + std::string(TFDEBUG_SOURCE_DIR) +
                                                   "/tests/export/check_mlflow.py '" + root.string() + "'"));
  ASSERT_TRUE(j["experiments"].contains("Default"));
  EXPECT_EQ(j["experiments"]["Default"]["id"], "0");
  const auto& demo = j["experiments"]["tfdebug demo"];
  ASSERT_EQ(demo["runs"].size(), 2u);
  const auto& run = demo["runs"][first_run];
  EXPECT_EQ(run["meta"]["status"], 3);
  EXPECT_EQ(run["meta"]["run_name"], "fault: log");
  EXPECT_EQ(run["params"]["lr"], "0.001");
  EXPECT_EQ(run["params"]["model/layers"], "2");
  EXPECT_EQ(run["tags"]["mlflow.runName"], "fault: log");
  EXPECT_EQ(run["tags"]["diagnosis"], "aten::log in blocks.1");
  const auto& loss = run["metrics"]["loss"];
  ASSERT_EQ(loss.size(), 3u);
  EXPECT_EQ(loss[1][2], "0.5");
  EXPECT_EQ(loss[2][1], 2);
  EXPECT_EQ(run["metrics"]["grad_norm/blocks.0"][0][2], "nan");
  EXPECT_EQ(run["artifacts"][0], artifact.filename().string());
  fs::remove_all(root);
  fs::remove(artifact);
}

}  // namespace
}  // namespace tfdebug
