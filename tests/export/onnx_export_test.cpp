// ONNX initializers with their values (include/tfdebug/export/onnx_export.hpp), read back by
// python3-onnx (tests/export/read_onnx.py: onnx.checker.check_model and numpy_helper.to_array).
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tfdebug/export/onnx_export.hpp"

namespace tfdebug {
namespace {

namespace fs = std::filesystem;

nlohmann::json read_onnx(const fs::path& model) {
  const std::string command = "/usr/bin/python3 " + std::string(TFDEBUG_SOURCE_DIR) +
                              "/tests/export/read_onnx.py '" + model.string() + "' 2>&1";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
  std::string out;
  std::array<char, 65536> buffer{};
  std::size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  if (::pclose(pipe) != 0) throw std::runtime_error("python3-onnx rejected " + model.string() + ": " + out);
  return nlohmann::json::parse(out);
}

GraphValue value(const std::string& name, int elem_type, const std::vector<std::int64_t>& dims) {
  GraphValue v;
  v.name = name;
  v.elem_type = elem_type;
  v.has_shape = true;
  for (const std::int64_t d : dims) v.dims.emplace_back(d);
  return v;
}

// y = x · W + b, and a third weight `scale` that the graph declares f32 [2].
ModelGraph linear_graph() {
  ModelGraph g;
  g.ir_version = 8;
  g.opsets = {{"", 17}};
  g.name = "linear";
  g.inputs = {value("x", 1, {1, 3})};
  g.outputs = {value("y", 1, {1, 2})};
  g.initializers = {value("W", 1, {3, 2}), value("b", 7, {2}), value("scale", 1, {2})};
  GraphNode mm;
  mm.name = "mm";
  mm.op_type = "MatMul";
  mm.inputs = {"x", "W"};
  mm.outputs = {"xw"};
  GraphNode add;
  add.name = "add";
  add.op_type = "Add";
  add.inputs = {"xw", "scale"};
  add.outputs = {"y"};
  g.nodes = {mm, add};
  g.value_info = {value("xw", 1, {1, 2})};
  return g;
}

fs::path path_of(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("tfdebug_onnx_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

struct Weights {
  // W is stored [2, 3] and handed over transposed: a view with strides {1, 3}.
  std::vector<float> w_rows = {1.5f, -2.0f, 0.25f, 3.0f, 1e-8f, -1e8f};
  std::vector<std::int64_t> b = {7, -9};
  std::vector<std::int32_t> scale_wrong_type = {1, 2};
  std::map<std::string, TensorView> views;
  Weights() {
    views["W"] = TensorView(w_rows.data(), DType::f32, {2, 3}).transposed(0, 1);
    views["b"] = TensorView(b.data(), DType::i64, {2});
    views["scale"] = TensorView(scale_wrong_type.data(), DType::i32, {2});
  }
  OnnxWriteOptions options() const {
    OnnxWriteOptions o;
    o.weights = [this](const std::string& name) -> std::optional<TensorView> {
      const auto it = views.find(name);
      return it == views.end() ? std::nullopt : std::optional<TensorView>(it->second);
    };
    return o;
  }
};

TEST(OnnxExport, WeightsWithValuesAreInitializersThatOnnxReadsBack) {
  const Weights weights;
  OnnxWriteStats stats;
  const fs::path path = path_of("linear.onnx");
  write_onnx_model(linear_graph(), path.string(), weights.options(), &stats);
  EXPECT_EQ(stats.weights_written, 2);
  EXPECT_EQ(stats.weight_bytes, 6 * 4 + 2 * 8);
  EXPECT_EQ(stats.weights_shape_only, 1);  // scale: i32 values for an f32 weight
  EXPECT_EQ(stats.weights_over_cap, 0);
  const nlohmann::json model = read_onnx(path);
  ASSERT_EQ(model["initializers"].size(), 2u);
  const nlohmann::json& w = model["initializers"][0];
  EXPECT_EQ(w["name"], "W");
  EXPECT_EQ(w["data_type"], 1);
  EXPECT_EQ(w["dims"], nlohmann::json::array({3, 2}));
  // Row-major [3, 2] of the transpose of [[1.5, -2, 0.25], [3, 1e-8, -1e8]].
  const std::vector<double> expected = {1.5, 3.0, -2.0, static_cast<double>(1e-8f), 0.25, -1e8};
  EXPECT_EQ(w["values"].get<std::vector<double>>(), expected);
  const nlohmann::json& b = model["initializers"][1];
  EXPECT_EQ(b["name"], "b");
  EXPECT_EQ(b["data_type"], 7);
  EXPECT_EQ(b["values"].get<std::vector<double>>(), (std::vector<double>{7, -9}));
  // The weights with data are not inputs; the one without stays an input with its shape.
  EXPECT_EQ(model["inputs"], nlohmann::json::array({"x", "scale"}));
}

TEST(OnnxExport, TheCapLeavesLaterWeightsAsShapes) {
  const Weights weights;
  OnnxWriteOptions options = weights.options();
  options.max_weight_bytes = 20;  // W's 24 bytes do not fit; b's 16 do
  OnnxWriteStats stats;
  const fs::path path = path_of("capped.onnx");
  write_onnx_model(linear_graph(), path.string(), options, &stats);
  EXPECT_EQ(stats.weights_written, 1);
  EXPECT_EQ(stats.weights_over_cap, 1);
  const nlohmann::json model = read_onnx(path);
  ASSERT_EQ(model["initializers"].size(), 1u);
  EXPECT_EQ(model["initializers"][0]["name"], "b");
  EXPECT_EQ(model["inputs"], nlohmann::json::array({"x", "W", "scale"}));
}

TEST(OnnxExport, WithoutValuesEveryWeightIsAShapedInput) {
  OnnxWriteStats stats;
  const fs::path path = path_of("shapes.onnx");
  write_onnx_model(linear_graph(), path.string(), {}, &stats);
  EXPECT_EQ(stats.weights_written, 0);
  EXPECT_EQ(stats.weights_shape_only, 3);
  const nlohmann::json model = read_onnx(path);
  EXPECT_TRUE(model["initializers"].empty());
  EXPECT_EQ(model["inputs"], nlohmann::json::array({"x", "W", "b", "scale"}));
}

}  // namespace
}  // namespace tfdebug
