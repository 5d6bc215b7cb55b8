#include "coalitions.hpp"

#include <cmath>
#include <string>

#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret::detail {

Coalitions::Coalitions(ForwardModel& model, std::span<const float> x, std::int64_t target,
                       const ShapleyOptions& options)
    : batcher_(model, options.max_batch), x_(x), target_(target), shape_(model.input_shape()) {
  check_example(model, x, target);
  const auto numel = static_cast<std::int64_t>(x.size());
  background_ = options.background.empty() ? std::vector<float>(x.size(), 0.0f) : options.background;
  rows_ = row_count(background_, numel, "the background", true);
  if (!options.background_weights.empty() &&
      options.background_weights.size() != static_cast<std::size_t>(rows_)) {
    throw Error("background_weights has " + std::to_string(options.background_weights.size()) +
                " weights for " + std::to_string(rows_) + " background rows");
  }
  weights_.assign(static_cast<std::size_t>(rows_), 1.0);
  if (!options.background_weights.empty()) weights_ = options.background_weights;
  double total = 0;
  for (const double w : weights_) {
    if (!(w >= 0) || !std::isfinite(w)) throw Error("background_weights must be finite and non-negative");
    total += w;
  }
  if (!(total > 0)) throw Error("background_weights sum to 0");
  for (double& w : weights_) w /= total;
  if (options.groups.empty()) {
    group_.resize(x.size());
    for (std::int64_t j = 0; j < numel; ++j) group_[static_cast<std::size_t>(j)] = j;
    features_ = numel;
  } else {
    if (options.groups.size() != x.size()) {
      throw Error("groups has " + std::to_string(options.groups.size()) + " entries; the input has " +
                  std::to_string(numel) + " values (one feature index per value)");
    }
    group_ = options.groups;
    for (const std::int64_t g : group_) {
      if (g < 0) throw Error("groups holds a negative feature index (" + std::to_string(g) + ")");
      features_ = std::max(features_, g + 1);
    }
  }
  group_size_.assign(static_cast<std::size_t>(features_), 0);
  for (const std::int64_t g : group_) ++group_size_[static_cast<std::size_t>(g)];
  for (std::int64_t f = 0; f < features_; ++f) {
    if (group_size_[static_cast<std::size_t>(f)] == 0)
      throw Error("groups names features 0.." + std::to_string(features_ - 1) + " but feature " +
                  std::to_string(f) + " has no input value");
  }
  std::vector<bool> varies(static_cast<std::size_t>(features_), false);
  for (std::int64_t r = 0; r < rows_; ++r) {
    const float* b = background_.data() + r * numel;
    for (std::int64_t j = 0; j < numel; ++j) {
      const float a = x[static_cast<std::size_t>(j)];
      if (a != b[j] && !(std::isnan(a) && std::isnan(b[j])))
        varies[static_cast<std::size_t>(group_[j])] = true;
    }
  }
  player_of_feature_.assign(static_cast<std::size_t>(features_), -1);
  for (std::int64_t f = 0; f < features_; ++f) {
    if (!varies[static_cast<std::size_t>(f)]) continue;
    player_of_feature_[static_cast<std::size_t>(f)] = static_cast<std::int64_t>(players_.size());
    players_.push_back(f);
  }
  player_of_element_.resize(x.size());
  for (std::size_t j = 0; j < x.size(); ++j)
    player_of_element_[j] = player_of_feature_[static_cast<std::size_t>(group_[j])];
}

std::vector<double> Coalitions::values(std::span<const std::uint8_t> masks, std::int64_t count) {
  const auto numel = static_cast<std::int64_t>(x_.size());
  const std::int64_t width = players();
  std::vector<double> v(static_cast<std::size_t>(count), 0.0);
  batcher_.forward(
      count * rows_,
      [&](std::int64_t i, std::span<float> row) {
        const std::int64_t m = i / rows_;
        const float* b = background_.data() + (i % rows_) * numel;
        const std::uint8_t* mask = masks.data() + m * width;
        for (std::int64_t j = 0; j < numel; ++j) {
          const std::int64_t p = player_of_element_[static_cast<std::size_t>(j)];
          // A feature that does not vary is the same in x and every background row.
          row[static_cast<std::size_t>(j)] = p >= 0 && mask[p] ? x_[static_cast<std::size_t>(j)] : b[j];
        }
      },
      [&](std::int64_t i, std::span<const float> outputs) {
        v[static_cast<std::size_t>(i / rows_)] +=
            weights_[static_cast<std::size_t>(i % rows_)] * outputs[static_cast<std::size_t>(target_)];
      });
  return v;
}

ShapleyAttribution Coalitions::result(const char* method, std::span<const double> player_values, double full,
                                      double empty) const {
  ShapleyAttribution a;
  a.method = method;
  a.shape = shape_;
  a.feature_values.assign(static_cast<std::size_t>(features_), 0.0);
  for (std::size_t p = 0; p < players_.size(); ++p)
    a.feature_values[static_cast<std::size_t>(players_[p])] = player_values[p];
  a.values.resize(x_.size());
  for (std::size_t j = 0; j < x_.size(); ++j) {
    const auto g = static_cast<std::size_t>(group_[j]);
    a.values[j] = a.feature_values[g] / static_cast<double>(group_size_[g]);
  }
  a.output = full;
  a.reference_output = empty;
  double total = 0;
  for (const double v : a.feature_values) total += v;
  a.delta = total - (full - empty);
  a.evaluations = batcher_.evaluations();
  return a;
}

}  // namespace tfdebug::interpret::detail
