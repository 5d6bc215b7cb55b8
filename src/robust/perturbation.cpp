#include "tfdebug/robust/perturbation.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "classes.hpp"
#include "interpret/batching.hpp"
#include "interpret/random.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::robust {
namespace {

constexpr struct {
  Perturbation kind;
  const char* name;
} kNames[] = {
    {Perturbation::gaussian, "gaussian"},
    {Perturbation::uniform, "uniform"},
    {Perturbation::salt_and_pepper, "salt-and-pepper"},
    {Perturbation::feature_dropout, "feature-dropout"},
    {Perturbation::token_masking, "token-masking"},
    {Perturbation::token_replacement, "token-replacement"},
};

bool is_token_kind(Perturbation k) {
  return k == Perturbation::token_masking || k == Perturbation::token_replacement;
}
bool is_probability_kind(Perturbation k) {
  return k != Perturbation::gaussian && k != Perturbation::uniform;
}

// Writes one perturbed copy of x into `point`. Every unit draws its random numbers whether or not
// it is perturbed, so that a stream gives the same draws to a unit at every intensity and in the
// hotspot runs (Note [Seeded streams]). only >= 0: that unit alone, with certainty.
class Perturber {
 public:
  Perturber(const PerturbationOptions& o, std::int64_t numel, std::int64_t tokens)
      : o_(o), numel_(numel), tokens_(tokens), unit_(numel / tokens) {}

  void apply(std::span<const float> x, std::uint64_t stream_index, double intensity, std::int64_t only,
             std::span<float> point) const {
    std::copy(x.begin(), x.end(), point.begin());
    interpret::detail::Stream stream(o_.seed, stream_index);
    const auto hit = [&](std::int64_t unit, double u) { return only >= 0 ? unit == only : u < intensity; };
    switch (o_.kind) {
      case Perturbation::gaussian:
      case Perturbation::uniform:
        for (std::int64_t j = 0; j < numel_; ++j) {
          const double z = o_.kind == Perturbation::gaussian ? stream.normal() : 2 * stream.uniform() - 1;
          if (only < 0 || j == only) point[static_cast<std::size_t>(j)] += static_cast<float>(intensity * z);
        }
        break;
      case Perturbation::salt_and_pepper:
      case Perturbation::feature_dropout:
        for (std::int64_t j = 0; j < numel_; ++j) {
          const double u = stream.uniform(), v = stream.uniform();
          if (!hit(j, u)) continue;
          point[static_cast<std::size_t>(j)] =
              o_.kind == Perturbation::feature_dropout ? o_.fill : (v < 0.5 ? o_.low : o_.high);
        }
        break;
      case Perturbation::token_masking:
      case Perturbation::token_replacement:
        for (std::int64_t t = 0; t < tokens_; ++t) {
          const double u = stream.uniform(), v = stream.uniform();
          if (!hit(t, u)) continue;
          float* slice = point.data() + t * unit_;
          if (o_.kind == Perturbation::token_masking) {
            std::fill(slice, slice + unit_, o_.fill);
          } else if (o_.vocabulary > 0 && unit_ == 1) {
            slice[0] = static_cast<float>(std::floor(v * static_cast<double>(o_.vocabulary)));
          } else {
            const auto from = static_cast<std::int64_t>(v * static_cast<double>(tokens_));
            std::copy(x.begin() + from * unit_, x.begin() + (from + 1) * unit_, slice);
          }
        }
        break;
    }
  }

 private:
  const PerturbationOptions& o_;
  std::int64_t numel_, tokens_, unit_;
};

}  // namespace

Perturbation parse_perturbation(const std::string& name) {
  std::string all;
  for (const auto& n : kNames) {
    if (name == n.name) return n.kind;
    all.append(all.empty() ? "" : ", ").append(n.name);
  }
  throw Error("unknown perturbation '" + name + "' (expected one of: " + all + ")");
}

const char* perturbation_name(Perturbation kind) {
  for (const auto& n : kNames)
    if (n.kind == kind) return n.name;
  return "?";
}

double normalized_area(std::span<const double> x, std::span<const double> y) {
  TFDEBUG_ASSERT(x.size() == y.size() && !x.empty(), "x and y of one curve");
  if (x.size() == 1 || x.back() == x.front()) return y[0];
  double area = 0;
  for (std::size_t i = 1; i < x.size(); ++i) area += (x[i] - x[i - 1]) * (y[i] + y[i - 1]) / 2;
  return area / (x.back() - x.front());
}

PerturbationReport perturbation_test(interpret::ForwardModel& model, std::span<const float> rows,
                                     std::span<const std::int64_t> labels, const PerturbationOptions& o) {
  const std::int64_t numel = interpret::example_size(model);
  const std::int64_t n = interpret::detail::row_count(rows, numel, "the inputs", true);
  check_classifier(model, labels, n);
  if (o.intensities.empty()) throw Error("perturbation: at least one intensity is needed");
  for (std::size_t i = 0; i < o.intensities.size(); ++i) {
    const double v = o.intensities[i];
    if (!std::isfinite(v) || v < 0 || (is_probability_kind(o.kind) && v > 1)) {
      throw Error(std::string("perturbation ") + perturbation_name(o.kind) + ": intensity " +
                  std::to_string(v) + " is not " +
                  (is_probability_kind(o.kind) ? "a probability in [0, 1]" : "a finite value >= 0"));
    }
    if (i > 0 && v <= o.intensities[i - 1]) throw Error("perturbation: intensities must increase");
  }
  if (o.samples < 1) throw Error("perturbation: samples must be at least 1");
  const std::vector<std::int64_t> shape = model.input_shape();
  const std::int64_t tokens = is_token_kind(o.kind) ? (shape.empty() ? 1 : shape[0]) : numel;

  PerturbationReport r;
  r.kind = o.kind;
  r.tokens = is_token_kind(o.kind);
  interpret::detail::Batcher batcher(model, o.max_batch);
  const auto row = [&](std::int64_t i) { return rows.subspan(static_cast<std::size_t>(i * numel), numel); };

  const ClassOutputs clean = classify(batcher, rows, n);
  std::vector<std::int64_t> reference(clean.predicted);
  if (!labels.empty()) reference.assign(labels.begin(), labels.end());
  std::int64_t correct = 0;
  for (std::int64_t i = 0; i < n; ++i) correct += clean.predicted[i] == reference[i];
  r.clean_accuracy = static_cast<double>(correct) / static_cast<double>(n);

  const Perturber perturber(o, numel, tokens);
  const std::int64_t points = n * o.samples;
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> failures;
  for (const double intensity : o.intensities) {
    PerturbationPoint p;
    p.intensity = intensity;
    std::int64_t right = 0, same = 0;
    double confidence = 0;
    batcher.forward(
        points,
        [&](std::int64_t k, std::span<float> point) {
          perturber.apply(row(k / o.samples), static_cast<std::uint64_t>(k), intensity, -1, point);
        },
        [&](std::int64_t k, std::span<const float> out) {
          const std::int64_t i = k / o.samples;
          const std::int64_t c = argmax(out);
          right += c == reference[i];
          same += c == clean.predicted[i];
          confidence += softmax_at(out, reference[i]);
          if (c != reference[i]) ++failures[{reference[i], c}];
        });
    p.accuracy = static_cast<double>(right) / static_cast<double>(points);
    p.agreement = static_cast<double>(same) / static_cast<double>(points);
    p.flip_rate = 1 - p.agreement;
    p.confidence = confidence / static_cast<double>(points);
    r.points.push_back(p);
  }
  std::vector<double> x, agreement, accuracy;
  for (const auto& p : r.points) {
    x.push_back(p.intensity);
    agreement.push_back(p.agreement);
    accuracy.push_back(p.accuracy);
  }
  r.score = normalized_area(x, agreement);
  r.accuracy_score = r.clean_accuracy > 0 ? normalized_area(x, accuracy) / r.clean_accuracy : 0;

  if (o.hotspots) {
    const std::int64_t units = r.tokens ? tokens : numel;
    for (std::int64_t u = 0; u < units; ++u) {
      std::int64_t flips = 0;
      batcher.forward(
          points,
          [&](std::int64_t k, std::span<float> point) {
            perturber.apply(row(k / o.samples), static_cast<std::uint64_t>(k), o.intensities.back(), u,
                            point);
          },
          [&](std::int64_t k, std::span<const float> out) {
            flips += argmax(out) != clean.predicted[k / o.samples];
          });
      r.hotspots.push_back({u, static_cast<double>(flips) / static_cast<double>(points)});
    }
    std::stable_sort(r.hotspots.begin(), r.hotspots.end(),
                     [](const Hotspot& a, const Hotspot& b) { return a.flip_rate > b.flip_rate; });
  }
  for (const auto& [key, count] : failures) r.failure_modes.push_back({key.first, key.second, count});
  std::stable_sort(r.failure_modes.begin(), r.failure_modes.end(),
                   [](const FailureMode& a, const FailureMode& b) { return a.count > b.count; });
  r.evaluations = batcher.evaluations();
  return r;
}

}  // namespace tfdebug::robust
