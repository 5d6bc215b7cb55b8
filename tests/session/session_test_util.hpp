// Helpers for the session tests: observations from plain vectors, and finding look-ups.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "tfdebug/session/session.hpp"

namespace tfdebug::testing {

inline Observation output(std::int64_t step, std::string_view module, std::string_view op,
                          const std::vector<float>& values, std::vector<std::int64_t> shape = {},
                          std::optional<bool> inputs_finite = std::nullopt, Phase phase = Phase::forward) {
  static thread_local std::vector<std::int64_t> keep;
  keep = shape.empty() ? std::vector<std::int64_t>{std::int64_t(values.size())} : shape;
  return Observation{step,         phase,
                     Role::output, module,
                     op,           TensorView(values.data(), DType::f32, std::span<const std::int64_t>(keep)),
                     inputs_finite};
}

inline Observation tensor(std::int64_t step, Role role, std::string_view module, std::string_view name,
                          const std::vector<float>& values, std::vector<std::int64_t> shape) {
  static thread_local std::vector<std::int64_t> keep;
  keep = std::move(shape);
  const Phase phase = role == Role::gradient ? Phase::backward
                      : role == Role::update ? Phase::optimizer
                                             : Phase::forward;
  return Observation{step,        phase,
                     role,        module,
                     name,        TensorView(values.data(), DType::f32, std::span<const std::int64_t>(keep)),
                     std::nullopt};
}

inline std::vector<float> normal(std::size_t n, float mean, float std, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(mean, std);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

inline std::vector<Finding> with_rule(const std::vector<Finding>& findings, std::string_view rule) {
  std::vector<Finding> out;
  for (const Finding& f : findings) {
    if (f.rule == rule) out.push_back(f);
  }
  return out;
}

inline std::string describe(const std::vector<Finding>& findings) {
  std::string out;
  for (const Finding& f : findings)
    out += f.rule + " @" + std::to_string(f.step) + " " + f.module + "/" + f.op + ": " + f.message + "\n";
  return out;
}

// A config with every rule on but no files and no console.
inline RunConfig quiet_config() {
  RunConfig c;
  c.rules.get<SpectralRule>().every = 10;
  return c;
}

}  // namespace tfdebug::testing
