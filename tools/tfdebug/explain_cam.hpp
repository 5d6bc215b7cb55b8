// `tfdebug explain --method grad-cam | grad-cam-plus-plus | score-cam --layer NAME`: the class
// activation map of one input at one layer of a TorchScript model (cmd_explain.cpp parses the
// options and reads the input; this runs the method and prints or draws the map).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis_output.hpp"

namespace tfdebug::cli {

// True for the method names this file runs.
bool is_cam_method(const std::string& method);

struct CamRequest {
  std::string model;                // a TorchScript file
  std::vector<float> input;         // one example
  std::vector<std::int64_t> shape;  // its shape, e.g. [1, 8, 8]
  std::string method;               // grad-cam, grad-cam-plus-plus or score-cam
  std::string layer;                // a module path of the model ("conv2"); required
  std::int64_t target = -1;         // -1: the model's top output at the input
  std::int64_t max_batch = 64;      // score-cam: masked inputs per forward call
  AnalysisOutput output;            // --json, --run-dir, --html
  std::string png;                  // write the input and the map beside it as a PNG
};

// Prints the map (text or --json) and returns the exit code; tfdebug::Error for what the user
// got wrong (no --layer or one the model does not have, with the layers it does have).
int run_cam_explain(const CamRequest& request);

}  // namespace tfdebug::cli
