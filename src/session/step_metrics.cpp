#include "step_metrics.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "rules/keyed_state.hpp"

namespace tfdebug::detail {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool histogrammed(const Observation& o) {
  return o.role == Role::parameter || (o.role == Role::output && o.phase == Phase::forward);
}

// The layer a parameter belongs to: its module, or its name up to the last '.'.
std::string_view layer_of(const Observation& o) {
  if (!o.module.empty()) return o.module;
  const std::size_t dot = o.op.rfind('.');
  return dot == std::string_view::npos ? o.op : o.op.substr(0, dot);
}

std::string histogram_name(const Observation& o) {
  return o.role == Role::parameter ? std::string(o.op) : std::string(o.module);
}

// The squared L2 norm of an observation, NaN when it holds a non-finite value (the stats
// kernel's l2 is over the finite values only).
double squared_norm(const Stats& s) {
  return s.nonfinite() > 0 ? kNaN : s.l2 * s.l2;
}

}  // namespace

bool MetricsCollector::histogram_step(const Observation& o) const {
  const int every = config_.metrics.histogram_every;
  if (every <= 0 || config_.metrics.max_histograms <= 0 || !histogrammed(o) ||
      !is_floating(o.value.dtype()) || o.value.numel() == 0)
    return false;
  const std::int64_t last = histogram_step_.load(std::memory_order_relaxed);
  // The histogram step itself, a step of a later run, or steps numbered afresh.
  return o.step == last || o.step / every > histogram_run_.load(std::memory_order_relaxed) || o.step < last;
}

bool MetricsCollector::reserve_histogram(const Observation& o) {
  if (o.step != histogram_step_.load(std::memory_order_relaxed)) {
    histogram_step_.store(o.step, std::memory_order_relaxed);
    histogram_run_.store(o.step / std::max(1, config_.metrics.histogram_every), std::memory_order_relaxed);
  }
  std::string key(1, o.role == Role::parameter ? 'w' : 'a');
  key.append(o.role == Role::parameter ? o.op : o.module);
  if (reserved_.count(key) > 0) return true;
  if (reserved_.size() < std::size_t(config_.metrics.max_histograms)) {
    reserved_.insert(key);
    return true;
  }
  if (dropped_.size() < std::size_t(config_.max_tracked)) dropped_.insert(key);
  return false;
}

MetricsCollector::ModuleState* MetricsCollector::module(std::string_view name) {
  // Found without building a string: a module's every observation after its first.
  if (const auto it = modules_.find(name); it != modules_.end()) return &it->second;
  if (modules_.size() >= std::size_t(config_.max_tracked)) return nullptr;
  return &modules_[std::string(name)];
}

void MetricsCollector::add_to(HistogramSnapshot& h, const Stats& s, const std::vector<std::int64_t>& counts) {
  if (h.counts.empty()) h.counts.assign(counts.size(), 0);
  for (std::size_t i = 0; i < counts.size() && i < h.counts.size(); ++i) h.counts[i] += counts[i];
  const std::int64_t finite = s.finite();
  if (finite == 0) return;
  h.min = h.count == 0 ? s.min : std::min(h.min, s.min);
  h.max = h.count == 0 ? s.max : std::max(h.max, s.max);
  h.count += finite;
  h.sum += s.mean * double(finite);
  h.sum_squares += s.l2 * s.l2;
}

void MetricsCollector::observe(const Observation& o, const MetricInput& m) {
  const Stats& s = m.stats;
  switch (o.role) {
    case Role::gradient:
      if (ModuleState* state = module(layer_of(o)))
        state->grad_sq = state->grad_sq.value_or(0) + squared_norm(s);
      break;
    case Role::parameter:
    case Role::update:
      // Weight matrices only, as the update_ratio rule: biases and norm scales start at 0 or 1.
      if (o.value.rank() >= 2 && updates_.size() < std::size_t(config_.max_tracked)) {
        UpdatePair& pair = updates_[make_key(o.module, o.op)];
        pair.layer.assign(layer_of(o));
        (o.role == Role::parameter ? pair.weight : pair.update) = squared_norm(s);
      }
      break;
    case Role::output:
      if (o.phase != Phase::forward) break;
      if (ModuleState* state = module(o.module)) {
        ActivationSummary& a = state->activations ? *state->activations : state->activations.emplace();
        ++a.outputs;
        a.values += s.count;
        a.nonfinite += s.nonfinite();
        a.zeros += s.zero;
        if (s.finite() > 0) a.abs_max = std::max(a.abs_max, s.abs_max);
        if (m.units != nullptr && !m.units->active.empty()) {
          const auto dead = std::count(m.units->active.begin(), m.units->active.end(), std::uint8_t{0});
          const double fraction = double(dead) / double(m.units->active.size());
          a.dead_fraction = std::max(a.dead_fraction.value_or(0.0), fraction);
        } else if (m.units != nullptr && m.units->all_active > 0) {
          a.dead_fraction = std::max(a.dead_fraction.value_or(0.0), 0.0);
        }
      }
      break;
  }
  if (m.histogram == nullptr || m.histogram->empty()) return;
  const std::string name = histogram_name(o);
  auto& table = o.role == Role::parameter ? weights_ : activations_;
  HistogramSnapshot& h = table[name];
  h.name = name;
  add_to(h, s, *m.histogram);
}

StepMetrics MetricsCollector::end_step(std::int64_t step, std::optional<double> loss) {
  StepMetrics out;
  out.step = step;
  out.loss = loss;
  for (const auto& [key, pair] : updates_) {
    if (!pair.weight || !pair.update) continue;
    ModuleState* state = module(pair.layer);
    if (state == nullptr) continue;
    state->has_ratio = true;
    state->weight_sq += *pair.weight;
    state->update_sq += *pair.update;
  }
  out.modules.reserve(modules_.size());
  for (auto& [name, state] : modules_) {
    ModuleMetrics metrics;
    metrics.module = name;
    if (state.grad_sq) metrics.grad_norm = std::sqrt(*state.grad_sq);
    // A weight of norm 0 has no ratio (the rule skips it too); NaN stays NaN.
    if (state.has_ratio && state.weight_sq != 0)
      metrics.update_ratio = std::sqrt(state.update_sq / state.weight_sq);
    metrics.activations = state.activations;
    if (metrics.grad_norm || metrics.update_ratio || metrics.activations)
      out.modules.push_back(std::move(metrics));
  }
  for (auto& entry : weights_) out.weights.push_back(std::move(entry.second));
  for (auto& entry : activations_) out.activations.push_back(std::move(entry.second));
  out.dropped_histograms = std::int64_t(dropped_.size());
  restart_step();
  return out;
}

void MetricsCollector::restart_step() {
  modules_.clear();
  updates_.clear();
  weights_.clear();
  activations_.clear();
  reserved_.clear();
  dropped_.clear();
}

}  // namespace tfdebug::detail
