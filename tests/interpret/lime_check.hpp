// The independent check of a LIME surrogate (tests/interpret/check_ridge.py): the neighbourhood
// and the fit written as CSV, python3-sklearn's Ridge fitted to them must agree.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tfdebug/interpret/lime.hpp"

namespace tfdebug::interpret::testing {

inline bool sklearn_agrees(const LimeAttribution& a, const std::vector<double>& coefficients,
                           const std::string& name) {
  const std::size_t features = coefficients.size();
  const std::filesystem::path dir = std::filesystem::temp_directory_path();
  const std::string nb = (dir / (name + "_neighbourhood.csv")).string();
  const std::string fit = (dir / (name + "_fit.csv")).string();
  char number[32];
  const auto put = [&](std::ofstream& out, double v) {
    std::snprintf(number, sizeof number, "%.17g", v);
    out << number;
  };
  {
    std::ofstream out(nb);
    out << "weight,output";
    for (std::size_t j = 0; j < features; ++j) out << ",f" << j;
    out << "\n";
    for (std::size_t s = 0; s < a.weights.size(); ++s) {
      put(out, a.weights[s]);
      out << ',';
      put(out, a.outputs[s]);
      for (std::size_t j = 0; j < features; ++j) {
        out << ',';
        put(out, a.data[s * features + j]);
      }
      out << '\n';
    }
    std::ofstream f(fit);
    put(f, a.intercept);
    f << ',';
    put(f, a.r2);
    for (const double v : coefficients) {
      f << ',';
      put(f, v);
    }
    f << '\n';
  }
  const std::string command = "/usr/bin/python3 " + std::string(TFDEBUG_SOURCE_DIR) +
                              "/tests/interpret/check_ridge.py " + nb + " " + fit;
  return std::system(command.c_str()) == 0;
}

}  // namespace tfdebug::interpret::testing
