#include "attacker.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tfdebug/core/error.hpp"
#include "tfdebug/core/quantile.hpp"

namespace tfdebug::robust {
namespace detail {

std::int64_t argmax(std::span<const float> logits) {
  return std::max_element(logits.begin(), logits.end()) - logits.begin();
}

double softmax_at(std::span<const float> logits, std::int64_t c) {
  const double top = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (const float z : logits) sum += std::exp(static_cast<double>(z) - top);
  return std::exp(static_cast<double>(logits[static_cast<std::size_t>(c)]) - top) / sum;
}

void cross_entropy_weights(std::span<const float> logits, std::int64_t goal, bool targeted,
                           std::span<float> weights) {
  const double top = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (const float z : logits) sum += std::exp(static_cast<double>(z) - top);
  const double sign = targeted ? -1.0 : 1.0;
  for (std::size_t c = 0; c < logits.size(); ++c) {
    const double p = std::exp(static_cast<double>(logits[c]) - top) / sum;
    weights[c] = static_cast<float>(sign * (p - (static_cast<std::int64_t>(c) == goal ? 1.0 : 0.0)));
  }
}

Attacker::Attacker(interpret::GradientModel& model, std::span<const float> inputs,
                   std::span<const std::int64_t> labels, const AttackSettings& settings, std::string name)
    : model_(model), inputs_(inputs), labels_(labels), settings_(settings), name_(std::move(name)) {
  numel_ = interpret::example_size(model);
  classes_ = model.output_size();
  if (classes_ < 2) {
    throw Error("attacks need a classifier with at least 2 outputs (its logits); the model has " +
                std::to_string(classes_));
  }
  if (numel_ < 1 || inputs.size() % static_cast<std::size_t>(numel_) != 0 || inputs.empty()) {
    throw Error("the inputs hold " + std::to_string(inputs.size()) + " values, not a whole number of " +
                std::to_string(numel_) + "-value examples (at least one)");
  }
  n_ = static_cast<std::int64_t>(inputs.size()) / numel_;
  if (static_cast<std::int64_t>(labels.size()) != n_) {
    throw Error("expected one label per example: " + std::to_string(n_) + " examples, " +
                std::to_string(labels.size()) + " labels");
  }
  const auto check_class = [&](std::int64_t c, const char* what) {
    if (c < 0 || c >= classes_) {
      throw Error(std::string(what) + " " + std::to_string(c) + " is not a class of the model (0.." +
                  std::to_string(classes_ - 1) + ")");
    }
  };
  for (const std::int64_t y : labels) check_class(y, "label");
  if (!settings.targets.empty() && settings.targets.size() != 1 &&
      static_cast<std::int64_t>(settings.targets.size()) != n_) {
    throw Error("targets: expected none (untargeted), one, or one per example (" + std::to_string(n_) +
                "), got " + std::to_string(settings.targets.size()));
  }
  for (const std::int64_t t : settings.targets) check_class(t, "target class");
  targeted_ = !settings.targets.empty();
  if (settings.max_batch < 1)
    throw Error("max_batch must be at least 1, got " + std::to_string(settings.max_batch));
  if (!(settings.clip_min < settings.clip_max)) {
    throw Error("the input range [" + std::to_string(settings.clip_min) + ", " +
                std::to_string(settings.clip_max) + "] is empty: expected clip_min < clip_max");
  }
  for (std::size_t j = 0; j < inputs.size(); ++j) {
    if (!(inputs[j] >= settings.clip_min && inputs[j] <= settings.clip_max)) {
      throw Error("input element " + std::to_string(j % static_cast<std::size_t>(numel_)) + " of example " +
                  std::to_string(j / static_cast<std::size_t>(numel_)) + " is " + std::to_string(inputs[j]) +
                  ", outside the input range [" + std::to_string(settings.clip_min) + ", " +
                  std::to_string(settings.clip_max) + "]");
    }
  }
  if (settings.mask.empty()) {
    mask_.assign(static_cast<std::size_t>(numel_), 1.0f);
  } else if (static_cast<std::int64_t>(settings.mask.size()) != numel_) {
    throw Error("the mask has " + std::to_string(settings.mask.size()) + " flags; one example has " +
                std::to_string(numel_) + " elements");
  } else {
    for (const std::uint8_t m : settings.mask) mask_.push_back(m != 0 ? 1.0f : 0.0f);
  }
  shape_ = model.input_shape();
  shape_.insert(shape_.begin(), 0);

  goal_.resize(static_cast<std::size_t>(n_));
  for (std::int64_t i = 0; i < n_; ++i) {
    goal_[static_cast<std::size_t>(i)] =
        !targeted_ ? labels[static_cast<std::size_t>(i)]
                   : settings.targets[settings.targets.size() == 1 ? 0 : static_cast<std::size_t>(i)];
  }
  before_.resize(static_cast<std::size_t>(n_));
  confidence_before_.resize(static_cast<std::size_t>(n_));
  std::vector<float> out;
  for (std::int64_t start = 0; start < n_; start += settings.max_batch) {
    const std::int64_t count = std::min(settings.max_batch, n_ - start);
    out.assign(static_cast<std::size_t>(count * classes_), 0.0f);
    forward(
        inputs.subspan(static_cast<std::size_t>(start * numel_), static_cast<std::size_t>(count * numel_)),
        out);
    for (std::int64_t r = 0; r < count; ++r) {
      const auto z = std::span<const float>(out).subspan(static_cast<std::size_t>(r * classes_),
                                                         static_cast<std::size_t>(classes_));
      before_[static_cast<std::size_t>(start + r)] = argmax(z);
      confidence_before_[static_cast<std::size_t>(start + r)] = softmax_at(z, goal(start + r));
    }
  }
}

bool Attacker::reached(std::span<const float> logits, std::int64_t i) const {
  const std::int64_t top = argmax(logits);
  return targeted_ ? top == goal(i) : top != goal(i);
}

TensorView Attacker::view(std::span<const float> rows) {
  shape_[0] = static_cast<std::int64_t>(rows.size()) / numel_;
  return TensorView(rows.data(), DType::f32, shape_);
}

void Attacker::forward(std::span<const float> rows, std::span<float> outputs) {
  const TensorView v = view(rows);
  model_.forward(v, outputs);
  queries_ += v.shape(0);
}

void Attacker::loss_gradient(std::span<const float> rows,
                             const interpret::LossGradientModel::OutputWeights& weigh,
                             std::span<float> outputs, std::span<float> gradients) {
  const TensorView v = view(rows);
  const std::int64_t count = v.shape(0);
  if (auto* tier = dynamic_cast<interpret::LossGradientModel*>(&model_)) {
    tier->loss_gradient(v, weigh, outputs, gradients);
    queries_ += count;
    return;
  }
  // [G] only: one backward per class, then the weighted sum (fine for a few classes).
  std::vector<float> scores(static_cast<std::size_t>(count));
  std::vector<float> per_class(static_cast<std::size_t>(classes_ * count * numel_));
  for (std::int64_t c = 0; c < classes_; ++c) {
    model_.gradient(v, c, scores,
                    std::span<float>(per_class).subspan(static_cast<std::size_t>(c * count * numel_),
                                                        static_cast<std::size_t>(count * numel_)));
    for (std::int64_t r = 0; r < count; ++r)
      outputs[static_cast<std::size_t>(r * classes_ + c)] = scores[static_cast<std::size_t>(r)];
  }
  queries_ += count * classes_;
  std::vector<float> weights(static_cast<std::size_t>(count * classes_), 0.0f);
  weigh(std::span<const float>(outputs.data(), weights.size()), weights);
  std::fill(gradients.begin(), gradients.begin() + count * numel_, 0.0f);
  for (std::int64_t c = 0; c < classes_; ++c) {
    for (std::int64_t r = 0; r < count; ++r) {
      const float w = weights[static_cast<std::size_t>(r * classes_ + c)];
      if (w == 0) continue;
      const float* g = per_class.data() + (c * count + r) * numel_;
      float* out = gradients.data() + r * numel_;
      for (std::int64_t j = 0; j < numel_; ++j) out[j] += w * g[j];
    }
  }
}

AttackResult Attacker::finish(std::vector<float> adversarial) {
  AttackResult r;
  r.attack = name_;
  r.numel = numel_;
  r.targeted = targeted_;
  const auto n = static_cast<std::size_t>(n_);
  r.labels.assign(labels_.begin(), labels_.end());
  r.goal = goal_;
  r.predicted_before = before_;
  r.confidence_before = confidence_before_;
  r.success.resize(n);
  r.predicted_after.resize(n);
  r.confidence_after.resize(n);
  r.l0.resize(n);
  r.l2.resize(n);
  r.linf.resize(n);
  std::vector<float> out;
  for (std::int64_t start = 0; start < n_; start += settings_.max_batch) {
    const std::int64_t count = std::min(settings_.max_batch, n_ - start);
    out.assign(static_cast<std::size_t>(count * classes_), 0.0f);
    forward(std::span<const float>(adversarial)
                .subspan(static_cast<std::size_t>(start * numel_), static_cast<std::size_t>(count * numel_)),
            out);
    for (std::int64_t k = 0; k < count; ++k) {
      const std::int64_t i = start + k;
      const auto z = std::span<const float>(out).subspan(static_cast<std::size_t>(k * classes_),
                                                         static_cast<std::size_t>(classes_));
      const auto u = static_cast<std::size_t>(i);
      r.predicted_after[u] = argmax(z);
      r.confidence_after[u] = softmax_at(z, goal(i));
      r.success[u] = reached(z, i) ? 1 : 0;
      double l0 = 0, l2 = 0, linf = 0;
      const std::span<const float> x = input(i);
      for (std::int64_t j = 0; j < numel_; ++j) {
        const double d = static_cast<double>(adversarial[static_cast<std::size_t>(i * numel_ + j)]) -
                         static_cast<double>(x[static_cast<std::size_t>(j)]);
        l0 += d != 0 ? 1 : 0;
        l2 += d * d;
        linf = std::max(linf, std::abs(d));
      }
      r.l0[u] = l0;
      r.l2[u] = std::sqrt(l2);
      r.linf[u] = linf;
    }
  }
  r.adversarial = std::move(adversarial);
  r.queries = queries_;
  return r;
}

}  // namespace detail

Distribution distribution(std::span<const double> values) {
  Distribution d;
  d.count = static_cast<std::int64_t>(values.size());
  if (values.empty()) return d;
  const std::vector<std::int64_t> shape{d.count};
  const std::vector<double> q =
      quantiles_exact(TensorView(values.data(), DType::f64, shape), {0.0, 0.25, 0.5, 0.75, 1.0});
  d.min = q[0];
  d.q25 = q[1];
  d.median = q[2];
  d.q75 = q[3];
  d.max = q[4];
  d.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  return d;
}

AttackSummary summarize(const AttackResult& result) {
  AttackSummary s;
  s.examples = result.examples();
  s.queries = result.queries;
  if (s.examples == 0) return s;
  std::vector<double> l0, l2, linf;
  double success = 0, clean = 0, robust = 0, before = 0, after = 0;
  for (std::size_t i = 0; i < result.success.size(); ++i) {
    before += result.confidence_before[i];
    after += result.confidence_after[i];
    clean += result.predicted_before[i] == result.labels[i] ? 1 : 0;
    robust += result.predicted_after[i] == result.labels[i] ? 1 : 0;
    if (result.success[i] == 0) continue;
    success += 1;
    l0.push_back(result.l0[i]);
    l2.push_back(result.l2[i]);
    linf.push_back(result.linf[i]);
  }
  const auto n = static_cast<double>(s.examples);
  s.success_rate = success / n;
  s.clean_accuracy = clean / n;
  s.robust_accuracy = robust / n;
  s.mean_confidence_before = before / n;
  s.mean_confidence_after = after / n;
  s.l0 = distribution(l0);
  s.l2 = distribution(l2);
  s.linf = distribution(linf);
  return s;
}

}  // namespace tfdebug::robust
