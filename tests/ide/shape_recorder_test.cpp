// ShapeRecorder on a user's Session fed through the probe API: the shapes and dtypes of each
// module's ops (inputs and output, per phase) and parameters, a second entry when an op's shapes
// change, and the JSON written at the run's end read back field by field.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tfdebug/core/error.hpp"
#include "tfdebug/ide/shape_recorder.hpp"
#include "tfdebug/session/probe.hpp"
#include "tfdebug/session/session.hpp"

namespace tfdebug::ide {
namespace {

using nlohmann::json;

json shape(const char* dtype, std::vector<std::int64_t> dims) {
  return {{"dtype", dtype}, {"shape", dims}};
}

// enc.lin: y[b, 3] = x[b, 4] W[4, 3] in f32; dec.log: log of y; dec.cast: y as f64; a backward
// op, the weight and its gradient. Steps 0 and 1 with a batch of 2, step 2 with a batch of 1.
void train(Session& session) {
  Probe probe(session);
  std::vector<float> weight(12, 0.5F);
  for (std::int64_t step = 0; step < 3; ++step) {
    const std::int64_t b = step < 2 ? 2 : 1;
    std::vector<float> x(std::size_t(b * 4), 1.0F), y(std::size_t(b * 3), 2.0F), g(12, 0.1F);
    std::vector<double> y64(std::size_t(b * 3), 2.0);
    const TensorView xv(x.data(), DType::f32, {b, 4});
    const TensorView wv(weight.data(), DType::f32, {4, 3});
    const TensorView yv(y.data(), DType::f32, {b, 3});
    probe.begin_step(step);
    probe.observe("enc.lin.matmul", Phase::forward, yv, {xv, wv});
    probe.observe("dec.log", Phase::forward, yv, {yv});
    probe.observe("dec.cast", Phase::forward, TensorView(y64.data(), DType::f64, {b, 3}), {yv});
    probe.observe("enc.lin.matmul_backward", Phase::backward, TensorView(g.data(), DType::f32, {4, 3}),
                  {yv, xv});
    probe.observe_parameter("enc.lin.weight", wv);
    probe.observe_gradient("enc.lin.weight", TensorView(g.data(), DType::f32, {4, 3}));
    probe.end_step(1.0);
  }
}

TEST(ShapeRecorder, RecordsOpsAndParametersByModule) {
  RunConfig config;
  config.tier = Tier::diagnose;
  Session session(config);
  auto recorder = std::make_shared<ShapeRecorder>();
  session.add_sink(recorder);
  train(session);
  session.finish();

  const std::vector<ModuleShapes> modules = recorder->modules();
  ASSERT_EQ(modules.size(), 2U);
  EXPECT_EQ(modules[0].module, "dec");
  EXPECT_EQ(modules[1].module, "enc.lin");
  // dec: log and cast at batch 2, then at batch 1.
  ASSERT_EQ(modules[0].ops.size(), 4U);
  EXPECT_EQ(modules[0].ops[0].op, "log");
  EXPECT_EQ(modules[0].ops[0].calls, 2);
  EXPECT_EQ(modules[0].ops[0].first_step, 0);
  EXPECT_EQ(modules[0].ops[0].last_step, 1);
  EXPECT_EQ(modules[0].ops[1].op, "cast");
  EXPECT_EQ(modules[0].ops[1].output, (TensorShape{DType::f64, {2, 3}}));
  ASSERT_EQ(modules[0].ops[1].inputs.size(), 1U);
  EXPECT_EQ(modules[0].ops[1].inputs[0], (TensorShape{DType::f32, {2, 3}}));
  EXPECT_EQ(modules[0].ops[2].op, "log");
  EXPECT_EQ(modules[0].ops[2].output, (TensorShape{DType::f32, {1, 3}}));
  EXPECT_EQ(modules[0].ops[2].first_step, 2);
  EXPECT_TRUE(modules[0].parameters.empty());
  // enc.lin: the weight (its gradient has its shape) and the two ops.
  ASSERT_EQ(modules[1].parameters.size(), 1U);
  EXPECT_EQ(modules[1].parameters.begin()->first, "enc.lin.weight");
  EXPECT_EQ(modules[1].parameters.begin()->second, (TensorShape{DType::f32, {4, 3}}));
  ASSERT_EQ(modules[1].ops.size(), 4U);
  EXPECT_EQ(modules[1].ops[0].op, "matmul");
  EXPECT_EQ(modules[1].ops[0].phase, Phase::forward);
  EXPECT_EQ(modules[1].ops[0].inputs, (std::vector<TensorShape>{{DType::f32, {2, 4}}, {DType::f32, {4, 3}}}));
  EXPECT_EQ(modules[1].ops[1].op, "matmul_backward");
  EXPECT_EQ(modules[1].ops[1].phase, Phase::backward);
  EXPECT_EQ(recorder->dropped(), 0);
}

TEST(ShapeRecorder, WritesTheSchemaAtRunEnd) {
  const auto dir = std::filesystem::temp_directory_path() / "tfdebug_shape_recorder_test";
  std::filesystem::remove_all(dir);
  const std::string path = (dir / "run" / "shapes.json").string();
  {
    RunConfig config;
    config.tier = Tier::diagnose;
    Session session(config);
    session.add_sink(std::make_shared<ShapeRecorder>(path));
    train(session);
    session.finish();
  }
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  const json doc = json::parse(text.str());
  EXPECT_EQ(doc["format"], "tfdebug-shapes");
  EXPECT_EQ(doc["version"], 1);
  EXPECT_EQ(doc["first_step"], 0);
  EXPECT_EQ(doc["last_step"], 2);
  EXPECT_EQ(doc["dropped"], 0);
  ASSERT_EQ(doc["modules"].size(), 2U);
  const json& enc = doc["modules"][1];
  EXPECT_EQ(enc["module"], "enc.lin");
  EXPECT_EQ(enc["parameters"],
            json::array({{{"name", "enc.lin.weight"}, {"dtype", "f32"}, {"shape", {4, 3}}}}));
  const json& matmul = enc["ops"][0];
  EXPECT_EQ(matmul["op"], "matmul");
  EXPECT_EQ(matmul["phase"], "forward");
  EXPECT_EQ(matmul["inputs"], json::array({shape("f32", {2, 4}), shape("f32", {4, 3})}));
  EXPECT_EQ(matmul["output"], shape("f32", {2, 3}));
  EXPECT_EQ(matmul["calls"], 2);
  EXPECT_EQ(matmul["first_step"], 0);
  EXPECT_EQ(matmul["last_step"], 1);
  EXPECT_EQ(enc["ops"][2]["inputs"], json::array({shape("f32", {1, 4}), shape("f32", {4, 3})}));
  EXPECT_EQ(doc["modules"][0]["ops"][1]["output"], shape("f64", {2, 3}));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  std::filesystem::remove_all(dir);
}

TEST(ShapeRecorder, WriteNamesTheFileItCannotWrite) {
  ShapeRecorder recorder;
  try {
    recorder.write("/proc/self/no/such/dir/shapes.json");
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/self/no/such/dir"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tfdebug::ide
