#include "explain_cam.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "json_output.hpp"
#include "safe_text.hpp"
#include "terminal.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/interpret/cam.hpp"
#include "tfdebug/torch/layer_model.hpp"
#include "tfdebug/viz/plot.hpp"

namespace tfdebug::cli {
namespace {

// Row-major `values` of a one- or two-dimensional `shape` as nested JSON arrays.
nlohmann::json rows_json(const std::vector<double>& values, const std::vector<std::int64_t>& shape) {
  nlohmann::json out = nlohmann::json::array();
  if (shape.size() == 1) {
    for (const double v : values) out.push_back(json_number(v));
    return out;
  }
  for (std::int64_t r = 0; r < shape[0]; ++r) {
    nlohmann::json row = nlohmann::json::array();
    for (std::int64_t c = 0; c < shape[1]; ++c)
      row.push_back(json_number(values[static_cast<std::size_t>(r * shape[1] + c)]));
    out.push_back(std::move(row));
  }
  return out;
}

// The input as the map sees it: the mean over its leading dimensions (channels) at each
// spatial position.
std::vector<double> input_image(const std::vector<float>& input, std::int64_t area) {
  std::vector<double> image(static_cast<std::size_t>(area), 0.0);
  const std::size_t planes = input.size() / static_cast<std::size_t>(area);
  for (std::size_t j = 0; j < input.size(); ++j)
    image[j % static_cast<std::size_t>(area)] += input[j] / double(planes);
  return image;
}

void write_png(const CamRequest& request, const interpret::CamAttribution& cam, std::int64_t target) {
  const std::size_t rows = cam.shape.size() == 2 ? static_cast<std::size_t>(cam.shape[0]) : 1;
  const std::size_t cols = static_cast<std::size_t>(cam.shape.back());
  viz::Figure figure;
  figure.title = cam.method + " of output " + std::to_string(target) + " at layer " + request.layer;
  figure.columns = 2;
  viz::Heatmap input;
  input.title = "input";
  input.rows = rows;
  input.cols = cols;
  input.values = input_image(request.input, static_cast<std::int64_t>(rows * cols));
  input.value_title = "value";
  viz::Heatmap map = input;
  map.title = cam.method;
  map.values = cam.values;
  map.value_title = "map";
  map.lo = 0;  // a ReLU'd map: zero, not the smallest value, is the dark end
  figure.panels.emplace_back(std::move(input));
  figure.panels.emplace_back(std::move(map));
  viz::save(figure, request.png, {.width = 900, .height = 420});
}

}  // namespace

bool is_cam_method(const std::string& method) {
  return method == "grad-cam" || method == "grad-cam-plus-plus" || method == "score-cam";
}

int run_cam_explain(const CamRequest& request) {
  if (request.layer.empty()) {
    try {
      torch::load_torchscript_layer(request.model, request.shape, "");
    } catch (const Error& e) {  // the message lists the layers
      throw Error(request.method + " needs --layer NAME, a module of the model: " + e.what());
    }
  }
  torch::TorchLayerModel model = [&] {
    try {
      return torch::load_torchscript_layer(request.model, request.shape, request.layer);
    } catch (const Error& e) {
      throw Error(std::string("--layer: ") + e.what());
    }
  }();

  std::vector<float> outputs(static_cast<std::size_t>(model.output_size()));
  std::vector<std::int64_t> batch = request.shape;
  batch.insert(batch.begin(), 1);
  model.forward(TensorView(request.input.data(), DType::f32, batch), outputs);
  const bool chosen = request.target >= 0;
  const std::int64_t target =
      chosen ? request.target
             : static_cast<std::int64_t>(std::max_element(outputs.begin(), outputs.end()) - outputs.begin());
  if (target >= model.output_size()) {
    throw Error("--target " + std::to_string(target) + ": the model has " +
                std::to_string(model.output_size()) + " outputs (0.." +
                std::to_string(model.output_size() - 1) + ")");
  }

  interpret::CamAttribution cam;
  if (request.method == "grad-cam") {
    cam = interpret::grad_cam(model, request.input, target);
  } else if (request.method == "grad-cam-plus-plus") {
    cam = interpret::grad_cam_plus_plus(model, request.input, target);
  } else {
    cam = interpret::score_cam(model, request.input, target, {.max_batch = request.max_batch});
  }
  if (!request.png.empty()) write_png(request, cam, target);

  if (request.output.wanted()) {
    nlohmann::json out = {{"method", cam.method},
                          {"model", request.model},
                          {"layer", request.layer},
                          {"target", target},
                          {"target_chosen", chosen ? "given" : "top output"},
                          {"outputs", outputs},
                          {"output", json_number(cam.output)},
                          {"evaluations", cam.evaluations},
                          {"shape", cam.shape},
                          {"attributions", rows_json(cam.values, cam.shape)},
                          {"layer_shape", cam.layer_shape},
                          {"layer_map", rows_json(cam.layer_values, cam.layer_shape)},
                          {"channel_weights", cam.channel_weights},
                          {"skipped_channels", cam.skipped_channels}};
    if (!cam.channel_scores.empty()) {
      nlohmann::json scores = nlohmann::json::array();
      for (const double s : cam.channel_scores) scores.push_back(json_number(s));
      out["channel_scores"] = std::move(scores);
    }
    std::vector<std::string> images;
    if (!request.png.empty()) images.push_back(request.png);
    request.output.emit(
        "explain",
        cam.method + " of output " + std::to_string(target) + " of " + request.model + " at " + request.layer,
        out, images, {{"input", request.input}});
    if (request.output.json) return 0;
  }

  const bool colour = use_colour(stdout);
  std::printf("%s of output %lld (%s) of %s at layer %s\n", paint(cam.method, Tone::bold, colour).c_str(),
              static_cast<long long>(target), chosen ? "--target" : "the model's top output",
              terminal_safe(request.model).c_str(), terminal_safe(request.layer).c_str());
  KeyValueTable facts;
  facts.add("output", format_number(cam.output));
  std::string layer_shape;
  for (const std::int64_t d : model.layer_shape())
    layer_shape.append(layer_shape.empty() ? "" : " x ").append(std::to_string(d));
  facts.add("layer output", layer_shape + " (channels x spatial)");
  if (!cam.skipped_channels.empty())
    facts.add("skipped channels", std::to_string(cam.skipped_channels.size()) + " (constant: no mask)");
  facts.add("model evaluations", format_count(cam.evaluations));
  if (!request.png.empty()) facts.add("image", terminal_safe(request.png));
  facts.print(stdout);

  // The map, one row of numbers a row of the input, brightest cells marked.
  double largest = 0;
  for (const double v : cam.values) largest = std::max(largest, std::fabs(v));
  std::printf("\n%s\n",
              paint("the map over the input's " + std::to_string(cam.shape.front()) +
                        (cam.shape.size() == 2 ? " x " + std::to_string(cam.shape.back()) : std::string()) +
                        " positions",
                    Tone::bold, colour)
                  .c_str());
  const std::int64_t cols = cam.shape.back();
  for (std::size_t i = 0; i < cam.values.size(); ++i) {
    const double v = cam.values[i];
    char cell[32];
    std::snprintf(cell, sizeof cell, "%9.4g", v);
    const bool bright = largest > 0 && std::fabs(v) >= 0.5 * largest;
    std::fputs(paint(cell, bright ? Tone::warn : Tone::plain, colour).c_str(), stdout);
    if ((static_cast<std::int64_t>(i) + 1) % cols == 0) std::fputc('\n', stdout);
  }
  return 0;
}

}  // namespace tfdebug::cli
