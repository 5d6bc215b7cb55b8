#include "monitors.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

namespace tfdebug::detail {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
// 1.4826 * MAD estimates the standard deviation of normally distributed values.
constexpr double kMadToSigma = 1.4826;

std::string num(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3g", value);
  return buffer;
}

std::string where(std::string_view module, std::string_view op) {
  if (module.empty()) return std::string(op.empty() ? "<top level>" : op);
  if (op.empty()) return std::string(module);
  return std::string(op) + " in " + std::string(module);
}

std::string at_step(Phase phase, std::int64_t step) {
  return " (" + std::string(phase_name(phase)) + ", step " + std::to_string(step) + ")";
}

Finding make_finding(std::string_view rule, Severity severity, std::int64_t step, Phase phase,
                     std::string_view module, std::string_view op) {
  Finding f;
  f.rule = rule;
  f.severity = severity;
  f.step = step;
  f.last_step = step;
  f.phase = phase;
  f.module = module;
  f.op = op;
  return f;
}

// Whether `text` contains the lower-case ASCII `word`, ignoring the case of ASCII letters. Runs
// for every forward output (saturation_kind): no allocation, no locale.
bool contains_word(std::string_view text, std::string_view word) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  if (word.empty()) return true;
  for (std::size_t i = 0; i + word.size() <= text.size(); ++i) {
    if (lower(text[i]) != word[0]) continue;
    std::size_t j = 1;
    while (j < word.size() && lower(text[i + j]) == word[j]) ++j;
    if (j == word.size()) return true;
  }
  return false;
}

// The slot of a direct-mapped cache of 512 entries (Monitors::key, units_of) for the producer's
// module and op strings at these addresses.
std::size_t recent_slot(std::string_view module, std::string_view op) {
  const auto address = reinterpret_cast<std::uintptr_t>(module.data()) ^
                       (reinterpret_cast<std::uintptr_t>(op.data()) * 0x9E3779B97F4A7C15ULL);
  return static_cast<std::size_t>((address * 0x9E3779B97F4A7C15ULL) >> (64 - 9));
}

// Whether `key` is make_key(module, op).
bool is_key_of(const std::string& key, std::string_view module, std::string_view op) {
  return key.size() == module.size() + 1 + op.size() && key.compare(0, module.size(), module) == 0 &&
         key.compare(module.size() + 1, op.size(), op) == 0;
}

}  // namespace

void Ring::push(double value) {
  if (full()) sorted_.erase(std::lower_bound(sorted_.begin(), sorted_.end(), values_[next_]));
  sorted_.insert(std::upper_bound(sorted_.begin(), sorted_.end(), value), value);
  values_[next_] = value;
  next_ = (next_ + 1) % values_.size();
  size_ = std::min(size_ + 1, values_.size());
}

double Ring::median() const noexcept {
  if (sorted_.empty()) return kNaN;
  const std::size_t mid = sorted_.size() / 2;
  return sorted_.size() % 2 == 1 ? sorted_[mid] : 0.5 * (sorted_[mid - 1] + sorted_[mid]);
}

std::vector<double> Ring::values() const {
  std::vector<double> out;
  out.reserve(size_);
  for (std::size_t i = 0; i < size_; ++i)
    out.push_back(values_[(next_ + values_.size() - size_ + i) % values_.size()]);
  return out;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return kNaN;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + std::ptrdiff_t(mid), values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + std::ptrdiff_t(mid));
  return 0.5 * (lower + upper);
}

double median_absolute_deviation(const std::vector<double>& values, double median) {
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (const double v : values) deviations.push_back(std::abs(v - median));
  return median_of(std::move(deviations));
}

std::string layer_of(const Observation& o) {
  if (!o.module.empty()) return std::string(o.module);
  const std::size_t dot = o.op.rfind('.');
  return std::string(dot == std::string_view::npos ? o.op : o.op.substr(0, dot));
}

std::string make_key(std::string_view module, std::string_view op) {
  std::string key;
  key.reserve(module.size() + op.size() + 1);
  key.append(module);
  key.push_back('\x1f');
  key.append(op);
  return key;
}

Monitors::Monitors(const RunConfig& config)
    : config_(config),
      loss_window_(static_cast<std::size_t>(config.rules.loss.window)),
      loss_recent_(static_cast<std::size_t>(config.rules.loss.divergence_window)) {}

template <class State>
State* Monitors::track(KeyMap<State>& states, std::string_view key) {
  if (const auto it = states.find(key); it != states.end()) return &it->second;
  if (states.size() >= static_cast<std::size_t>(config_.max_tracked)) {
    ++untracked_;
    return nullptr;
  }
  return &states.try_emplace(std::string(key)).first->second;
}

std::string_view Monitors::key(std::string_view module, std::string_view op) {
  RecentKey& recent = recent_keys_[recent_slot(module, op)];
  if (recent.module == module.data() && recent.op == op.data() && recent.key != nullptr &&
      is_key_of(*recent.key, module, op))
    return *recent.key;
  scratch_key_ = make_key(module, op);
  auto it = keys_.find(scratch_key_);
  if (it == keys_.end()) {
    if (keys_.size() >= 4 * static_cast<std::size_t>(config_.max_tracked)) return scratch_key_;
    it = keys_.emplace(scratch_key_, 0).first;
  }
  recent = RecentKey{module.data(), op.data(), &it->first};
  return it->first;
}

bool Monitors::wants_unit_activity(const Observation& o) const {
  const DeadUnitsRule& rule = config_.rules.dead_units;
  if (!rule.enabled || o.role != Role::output || o.phase != Phase::forward) return false;
  const TensorView& v = o.value;
  if (v.rank() < 2 || !is_floating(v.dtype())) return false;
  const std::int64_t units = v.shape(v.rank() - 1);
  return units >= 2 && units <= rule.max_units && v.numel() > 0;
}

SaturationKind Monitors::saturation_kind(const Observation& o) const {
  if (!config_.rules.saturation.enabled || o.role != Role::output || o.phase != Phase::forward ||
      !is_floating(o.value.dtype()) || o.value.numel() == 0)
    return SaturationKind::none;
  if (contains_word(o.op, "tanh")) return SaturationKind::tanh;
  if (contains_word(o.op, "sigmoid")) return SaturationKind::sigmoid;
  if (contains_word(o.op, "gelu") && o.input != nullptr && is_floating(o.input->dtype()) &&
      o.input->numel() > 0)
    return SaturationKind::gelu;
  return SaturationKind::none;
}

std::optional<std::vector<double>> Monitors::spectral_due(const Observation& o) {
  const SpectralRule& rule = config_.rules.spectral;
  const TensorView& v = o.value;
  if (!rule.enabled || o.role != Role::parameter || v.rank() < 2 || !is_floating(v.dtype()) ||
      v.numel() > rule.max_elements || v.shape(0) < 2 ||
      v.numel() / std::max<std::int64_t>(v.shape(0), 1) < 2)
    return std::nullopt;
  const std::string_view k = key(o.module, o.op);
  const bool known = spectral_.find(k) != spectral_.end();
  SpectralState* state = track(spectral_, k);
  if (state == nullptr) return std::nullopt;
  if (known && o.step - state->last_step < rule.every) return std::nullopt;
  state->last_step = o.step;
  return state->vector;
}

void Monitors::observe(const Observation& o, const Measurements& m, Emitter& out) {
  if (config_.rules.nonfinite.enabled) check_nonfinite(o, m.stats, out);
  if (config_.rules.headroom.enabled && config_.target_dtype) check_headroom(o, m.stats, out);
  if (!m.unit_active.empty() || m.all_units_active > 0) check_dead_units(o, m, out);
  if (m.saturated_fraction) check_saturation(o, m, out);
  if (m.spectral) check_spectral(o, *m.spectral, out);
  if (m.stats.nonfinite() > 0) return;  // the norms below need finite values
  if (o.role == Role::gradient && config_.rules.gradients.enabled) {
    // The layer: its module, or its name up to the last '.' (layer_of, without a copy).
    const std::size_t dot = o.op.rfind('.');
    const std::string_view layer = !o.module.empty()               ? o.module
                                   : dot == std::string_view::npos ? o.op
                                                                   : o.op.substr(0, dot);
    if (LayerStep* entry = track(step_layer_sq_, layer)) {
      entry->sq = (entry->seen ? entry->sq : 0.0) + m.stats.l2 * m.stats.l2;
      entry->seen = true;
    }
  }
  // Weight matrices only: biases and norm scales start at 0 or 1, so their first updates are
  // large relative to them by construction.
  if ((o.role == Role::parameter || o.role == Role::update) && config_.rules.update_ratio.enabled &&
      o.value.rank() >= 2) {
    if (UpdatePair* pair = track(step_updates_, key(o.module, o.op))) {
      if (pair->op.empty()) {
        pair->module = o.module;
        pair->op = o.op;
      }
      (o.role == Role::parameter ? pair->weight : pair->update) = m.stats.l2;
    }
  }
  if (o.role == Role::parameter && config_.rules.weight_scale.enabled) check_weight_scale(o, m.stats, out);
}

// Note [Producer and propagator]: an output with NaN/Inf whose op's inputs were all finite was
// produced by that op; with non-finite inputs the op only passed the value on. A producer is
// reported at once (one error per producing op, deduplicated over steps); propagators, and
// parameters, gradients and updates holding non-finite values, only count as evidence. When a
// step holds non-finite values but no producer (the producer did not know its inputs, or the
// value came from a parameter), the first non-finite observation of the step is reported at
// end_step as the best localisation available, once per run. An update is an output too when
// its producer says whether the parameter and its gradient were finite: the optimizer's ops
// that made it were not observed one by one.
void Monitors::check_nonfinite(const Observation& o, const Stats& s, Emitter& out) {
  if (s.nonfinite() == 0) return;
  const bool producer = (o.role == Role::output || o.role == Role::update) && o.inputs_finite == true;
  if (!producer) {
    ++step_propagators_;
    if (!step_first_nonfinite_)
      step_first_nonfinite_ =
          Candidate{std::string(o.module), std::string(o.op), o.phase, o.role, o.inputs_finite, s};
    return;
  }
  Finding f = make_finding("nonfinite", Severity::error, o.step, o.phase, o.module, o.op);
  std::string kinds;
  if (s.nan > 0) kinds += std::to_string(s.nan) + " NaN";
  if (s.pos_inf > 0) kinds += (kinds.empty() ? "" : ", ") + std::to_string(s.pos_inf) + " +Inf";
  if (s.neg_inf > 0) kinds += (kinds.empty() ? "" : ", ") + std::to_string(s.neg_inf) + " -Inf";
  if (o.role == Role::update) {
    f.message = "the optimizer's update of " + std::string(o.op) + " holds " + kinds + " of " +
                std::to_string(s.count) + " values from a finite parameter and gradient" +
                at_step(o.phase, o.step);
    f.suggestion =
        "the optimizer's own arithmetic made it: check its settings (an eps of 0 divides by a zero "
        "second moment, a learning rate or weight decay large enough to overflow) and its state";
  } else {
    f.message = where(o.module, o.op) + " produced " + kinds + " of " + std::to_string(s.count) +
                " values from finite inputs" + at_step(o.phase, o.step);
    f.suggestion =
        "check this op's inputs for values outside its domain (log/sqrt of negatives, division by "
        "~0, exp overflow); clamp or add an epsilon, or lower the learning rate if they grew";
  }
  f.evidence = {{"producer", 1},
                {"nan", double(s.nan)},
                {"pos_inf", double(s.pos_inf)},
                {"neg_inf", double(s.neg_inf)},
                {"count", double(s.count)},
                {"propagators", 0},
                {"finite_min", s.min},
                {"finite_max", s.max}};
  step_producers_.emplace_back(o.module, o.op);
  nonfinite_reported_ = true;
  out.emit(std::move(f));
}

void Monitors::end_nonfinite(std::int64_t step, Emitter& out) {
  if (!step_producers_.empty()) {
    // Every propagator of the step is evidence for the step's first producer.
    const auto& [module, op] = step_producers_.front();
    out.add_evidence("nonfinite", module, op, "propagators", double(step_propagators_));
  } else if (step_first_nonfinite_ && !nonfinite_reported_) {
    const Candidate& c = *step_first_nonfinite_;
    Finding f = make_finding("nonfinite", Severity::error, step, c.phase, c.module, c.op);
    const std::string what =
        c.role != Role::output ? "the " + std::string(role_name(c.role)) + " " + c.op : where(c.module, c.op);
    const std::string why = c.role != Role::output     ? " (no op was seen producing it)"
                            : c.inputs_finite == false ? " (its inputs were already non-finite)"
                                                       : " (the producer did not report whether "
                                                         "its inputs were finite)";
    f.message = "first non-finite value: " + what + " holds " + std::to_string(c.stats.nonfinite()) +
                " NaN/Inf of " + std::to_string(c.stats.count) + why + at_step(c.phase, step);
    f.suggestion = c.role != Role::output
                       ? "the value was corrupted before this step's ops ran: look at the "
                         "previous step's update and gradients"
                       : "observe this op's inputs (Probe::observe with inputs, or Tier::diagnose) "
                         "to find the op that produced the value";
    f.evidence = {{"producer", 0},
                  {"nan", double(c.stats.nan)},
                  {"pos_inf", double(c.stats.pos_inf)},
                  {"neg_inf", double(c.stats.neg_inf)},
                  {"count", double(c.stats.count)},
                  {"propagators", double(step_propagators_ - 1)}};
    nonfinite_reported_ = true;
    out.emit(std::move(f));
  }
  step_producers_.clear();
  step_first_nonfinite_.reset();
  step_propagators_ = 0;
}

void Monitors::check_headroom(const Observation& o, const Stats& s, Emitter& out) {
  if (!s.target || !is_floating(o.value.dtype()) || s.finite() == 0) return;
  if (o.role == Role::update) return;
  const HeadroomRule& rule = config_.rules.headroom;
  const TargetFit& t = *s.target;
  const std::string target = std::string(dtype_name(t.dtype));
  if (t.headroom >= rule.overflow_headroom) {
    Finding f = make_finding("headroom_overflow", Severity::warning, o.step, o.phase, o.module, o.op);
    f.message = where(o.module, o.op) + " " + std::string(role_name(o.role)) + " reaches " + num(s.abs_max) +
                " = " + num(t.headroom) + " of " + target + "'s largest value" +
                (t.overflow > 0 ? " (" + std::to_string(t.overflow) + " values overflow)" : "") +
                at_step(o.phase, o.step);
    f.suggestion =
        "keep this op in f32 under autocast, rescale its input (normalise, smaller "
        "init), or use bf16's wider range";
    f.evidence = {{"abs_max", s.abs_max},
                  {"headroom", t.headroom},
                  {"overflow", double(t.overflow)},
                  {"overflow_fraction", t.overflow_fraction}};
    out.emit(std::move(f));
  }
  if (t.underflow_fraction >= rule.underflow_fraction && t.underflow > 0) {
    Finding f = make_finding("headroom_underflow", Severity::warning, o.step, o.phase, o.module, o.op);
    f.message = where(o.module, o.op) + " " + std::string(role_name(o.role)) + ": " +
                num(100 * t.underflow_fraction) + "% of the values would flush to zero in " + target +
                " (smallest non-zero |x| " + num(s.min_abs_nonzero) + ")" + at_step(o.phase, o.step);
    f.suggestion = o.role == Role::gradient || o.phase == Phase::backward
                       ? "scale the loss (dynamic loss scaling, e.g. GradScaler) before backward"
                       : "keep this op in f32 or rescale its values";
    f.evidence = {{"underflow", double(t.underflow)},
                  {"underflow_fraction", t.underflow_fraction},
                  {"min_abs_nonzero", s.min_abs_nonzero}};
    out.emit(std::move(f));
  }
}

Monitors::UnitState* Monitors::units_of(std::string_view module, std::string_view op) {
  RecentUnits& recent = recent_units_[recent_slot(module, op)];
  if (recent.module == module.data() && recent.op == op.data() && recent.key != nullptr &&
      is_key_of(*recent.key, module, op))
    return recent.state;
  const std::string key = make_key(module, op);
  UnitState* state = track(units_, key);
  if (state != nullptr) recent = RecentUnits{module.data(), op.data(), &units_.find(key)->first, state};
  return state;
}

void Monitors::check_dead_units(const Observation& o, const Measurements& m, Emitter& out) {
  UnitState* state = units_of(o.module, o.op);
  if (state == nullptr) return;
  const bool all_active = m.unit_active.empty();
  const std::size_t units = all_active ? std::size_t(m.all_units_active) : m.unit_active.size();
  if (state->last_active.size() != units) {  // first sight (or the layer changed width)
    state->last_active.assign(units, -1);
    state->all_active = -1;
    state->first_step = o.step;
    state->last_evaluated = -1;
  }
  if (all_active) {
    state->all_active = o.step;
  } else {
    for (std::size_t u = 0; u < units; ++u) {
      if (m.unit_active[u] != 0) state->last_active[u] = o.step;
    }
  }
  const DeadUnitsRule& rule = config_.rules.dead_units;
  if (o.step - state->first_step + 1 < rule.window || state->last_evaluated == o.step) return;
  state->last_evaluated = o.step;
  const std::int64_t cutoff = o.step - rule.window + 1;
  if (state->all_active >= cutoff) return;  // every unit was active within the window
  std::int64_t dead = 0;
  std::int64_t first_dead = -1;
  for (std::size_t u = 0; u < units; ++u) {
    if (std::max(state->last_active[u], state->all_active) < cutoff) {
      if (dead == 0) first_dead = std::int64_t(u);
      ++dead;
    }
  }
  const double fraction = double(dead) / double(units);
  if (dead == 0 || fraction < rule.min_fraction) return;
  Finding f = make_finding("dead_units", Severity::warning, o.step, o.phase, o.module, o.op);
  f.message = std::to_string(dead) + " of " + std::to_string(units) + " units (" + num(100 * fraction) +
              "%) of " + where(o.module, o.op) + " were exactly 0 for every input over the last " +
              std::to_string(rule.window) + " steps" + at_step(o.phase, o.step);
  f.suggestion =
      "dead ReLUs: lower the learning rate, check the bias and weight initialisation of the layer "
      "before, or use LeakyReLU/GELU";
  f.evidence = {{"dead", double(dead)},
                {"units", double(units)},
                {"fraction", fraction},
                {"window", double(rule.window)},
                {"first_dead_unit", double(first_dead)}};
  out.emit(std::move(f));
}

void Monitors::check_saturation(const Observation& o, const Measurements& m, Emitter& out) {
  const SaturationRule& rule = config_.rules.saturation;
  const double fraction = *m.saturated_fraction;
  if (fraction < rule.max_fraction) return;
  Finding f = make_finding("saturation", Severity::warning, o.step, o.phase, o.module, o.op);
  if (saturation_kind(o) == SaturationKind::gelu) {
    f.message = num(100 * fraction) + "% of " + where(o.module, o.op) + "'s inputs are below -" +
                num(rule.gelu_cutoff) + ", GELU's flat negative tail, where its gradient vanishes" +
                at_step(o.phase, o.step);
    f.evidence = {{"saturated_fraction", fraction}, {"gelu_cutoff", rule.gelu_cutoff}};
  } else {
    const bool tanh = contains_word(o.op, "tanh");
    f.message = num(100 * fraction) + "% of " + where(o.module, o.op) + "'s outputs are within " +
                num(rule.margin) + " of " + (tanh ? "+-1" : "0 or 1") + ", where its gradient vanishes" +
                at_step(o.phase, o.step);
    f.evidence = {{"saturated_fraction", fraction}, {"margin", rule.margin}};
  }
  f.suggestion =
      "normalise the pre-activation (LayerNorm), shrink the initialisation or the "
      "learning rate, or use a non-saturating activation";
  out.emit(std::move(f));
}

void Monitors::check_weight_scale(const Observation& o, const Stats& s, Emitter& out) {
  const TensorView& v = o.value;
  if (v.rank() < 2 || v.shape(0) == 0 || s.finite() < 2) return;
  const std::int64_t fan_in_elements = v.numel() / v.shape(0);  // exact: shape(0) divides numel
  const auto fan_in = static_cast<double>(fan_in_elements);
  const double scale = s.std * std::sqrt(fan_in);
  const std::string_view k = key(o.module, o.op);
  const bool known = scales_.find(k) != scales_.end();
  ScaleState* state = track(scales_, k);
  if (state == nullptr) return;
  const WeightScaleRule& rule = config_.rules.weight_scale;
  if (!known) {
    state->first_scale = scale;
    state->first_step = o.step;
    if (scale >= rule.min_init && scale <= rule.max_init) return;
    // An embedding table's input is one-hot: its fan-in says nothing about its scale.
    const std::string_view name = o.op.empty() ? o.module : o.op;
    for (const std::string_view embedding : {"embed", "wte", "wpe", "tok", "pos"}) {
      if (name.find(embedding) != std::string_view::npos) return;
    }
    Finding f = make_finding("init_scale", Severity::warning, o.step, o.phase, o.module, o.op);
    f.message = "weight " + std::string(o.op) + " starts with std * sqrt(fan_in) = " + num(scale) + " (std " +
                num(s.std) + ", fan_in " + num(fan_in) + "); common initialisations give 0.5-1.5";
    f.suggestion = scale > rule.max_init ? "initialise with std ~ 1/sqrt(fan_in) (LeCun/Kaiming) "
                                           "or the model's documented std"
                                         : "the weight is (nearly) constant or tiny: check its "
                                           "initialisation";
    f.evidence = {{"scale", scale}, {"std", s.std}, {"fan_in", fan_in}};
    out.emit(std::move(f));
    return;
  }
  if (state->first_scale <= 0) return;
  const double drift = scale / state->first_scale;
  if (drift <= rule.max_drift && drift >= 1.0 / rule.max_drift) return;
  Finding f = make_finding("weight_drift", Severity::warning, o.step, o.phase, o.module, o.op);
  f.message = "weight " + std::string(o.op) + "'s std * sqrt(fan_in) is " + num(scale) + ", " + num(drift) +
              "x its value at step " + std::to_string(state->first_step) + " (" + num(state->first_scale) +
              ")";
  f.suggestion = drift > 1 ? "weights grow: lower the learning rate or add weight decay"
                           : "weights shrink towards 0: weight decay may be too strong";
  f.evidence = {{"scale", scale}, {"first_scale", state->first_scale}, {"drift", drift}};
  out.emit(std::move(f));
}

void Monitors::check_spectral(const Observation& o, const SpectralEstimate& e, Emitter& out) {
  SpectralState* state = track(spectral_, key(o.module, o.op));
  if (state == nullptr) return;
  state->vector = e.right_vector;
  if (state->first_norm == 0) state->first_norm = e.spectral_norm;
  state->latest = SpectralMeasurement{std::string(o.module), std::string(o.op), o.step,
                                      e.spectral_norm,       e.stable_rank,     e.iterations};
  const SpectralRule& rule = config_.rules.spectral;
  const TensorView& v = o.value;
  const std::int64_t rows = v.shape(0);
  const std::int64_t cols = v.numel() / rows;
  const double growth = state->first_norm > 0 ? e.spectral_norm / state->first_norm : 1.0;
  const bool collapsed =
      std::min(rows, cols) >= 4 && e.spectral_norm > 0 && e.stable_rank < rule.min_stable_rank;
  if (!collapsed && growth <= rule.max_growth) return;
  Finding f = make_finding("spectral", Severity::warning, o.step, o.phase, o.module, o.op);
  f.message = "weight " + std::string(o.op) + ": spectral norm " + num(e.spectral_norm) +
              (growth > rule.max_growth ? " (" + num(growth) + "x its first measurement)" : "") +
              ", stable rank " + num(e.stable_rank) + " of at most " + std::to_string(std::min(rows, cols)) +
              (collapsed ? ": one direction dominates" : "") + " (step " + std::to_string(o.step) + ")";
  f.suggestion =
      "lower the learning rate or add weight decay / spectral normalisation for this "
      "layer";
  f.evidence = {{"spectral_norm", e.spectral_norm},
                {"stable_rank", e.stable_rank},
                {"growth", growth},
                {"iterations", double(e.iterations)}};
  out.emit(std::move(f));
}

void Monitors::end_gradients(std::int64_t step, Emitter& out) {
  const GradientRule& rule = config_.rules.gradients;
  // This step's layers, by name: findings of one step come out in a stable order.
  std::vector<std::pair<const std::string*, double>> layers;
  layers.reserve(step_layer_sq_.size());
  std::vector<double> norms;
  norms.reserve(step_layer_sq_.size());
  for (const auto& [layer, entry] : step_layer_sq_) {
    if (!entry.seen) continue;
    layers.emplace_back(&layer, std::sqrt(entry.sq));
    norms.push_back(layers.back().second);
  }
  const double layers_median = norms.size() >= std::size_t(rule.min_layers) ? median_of(norms) : kNaN;
  std::sort(layers.begin(), layers.end(), [](const auto& a, const auto& b) { return *a.first < *b.first; });
  for (const auto& [layer_key, norm] : layers) {
    const std::string& layer = *layer_key;
    Ring* history = nullptr;
    if (const auto it = layer_history_.find(layer); it != layer_history_.end()) {
      history = &it->second;
    } else if (layer_history_.size() < std::size_t(config_.max_tracked)) {
      history = &layer_history_.emplace(layer, Ring(std::size_t(config_.history_length))).first->second;
    } else {
      ++untracked_;
    }
    const double history_median =
        history != nullptr && history->size() >= std::size_t(rule.min_history) ? history->median() : kNaN;
    const double to_history = history_median > 0 ? norm / history_median : kNaN;
    const double to_layers = layers_median > 0 ? norm / layers_median : kNaN;
    const bool explode = to_history > rule.explode_ratio || to_layers > rule.explode_vs_layers;
    const bool vanish = (norm == 0 && (history_median > 0 || layers_median > 0)) ||
                        to_history < rule.vanish_ratio || to_layers < rule.vanish_vs_layers;
    if (explode || vanish) {
      Finding f = make_finding(explode ? "exploding_gradients" : "vanishing_gradients", Severity::warning,
                               step, Phase::backward, layer, "");
      std::string relative;
      if (!std::isnan(to_history))
        relative +=
            num(to_history) + "x the median of its last " + std::to_string(history->size()) + " steps";
      if (!std::isnan(to_layers))
        relative += (relative.empty() ? "" : ", ") + num(to_layers) + "x the median layer of this step";
      f.message = "gradient norm of " + layer + " is " + num(norm) + " (" + relative + ")" +
                  at_step(Phase::backward, step);
      f.suggestion = explode ? "clip gradients (e.g. max norm 1.0), lower the learning rate, or "
                               "check for a loss spike in this step"
                             : "the layer stopped learning: look for dead or saturated units "
                               "upstream, a detached path, or a too-small initialisation";
      f.evidence = {{"norm", norm},
                    {"history_median", history_median},
                    {"ratio_to_history", to_history},
                    {"layers_median", layers_median},
                    {"ratio_to_layers", to_layers}};
      out.emit(std::move(f));
    }
    if (history != nullptr && std::isfinite(norm)) history->push(norm);
  }
}

void Monitors::end_update_ratio(std::int64_t step, Emitter& out) {
  const UpdateRatioRule& rule = config_.rules.update_ratio;
  std::vector<const UpdatePair*> pairs;
  for (const auto& entry : step_updates_) {
    if (entry.second.weight && entry.second.update && *entry.second.weight > 0)
      pairs.push_back(&entry.second);
  }
  std::sort(pairs.begin(), pairs.end(),
            [](const UpdatePair* a, const UpdatePair* b) { return a->op < b->op; });
  for (const UpdatePair* pair : pairs) {
    const double ratio = *pair->update / *pair->weight;
    if (ratio >= rule.min_ratio && ratio <= rule.max_ratio) continue;
    const bool high = ratio > rule.max_ratio;
    Finding f =
        make_finding("update_ratio", Severity::warning, step, Phase::optimizer, pair->module, pair->op);
    f.message = "update of " + pair->op + " is " + num(ratio) + " of the weight's norm (" +
                (high ? "above " + num(rule.max_ratio) : "below " + num(rule.min_ratio)) +
                "; ~1e-3 is typical)" + at_step(Phase::optimizer, step);
    f.suggestion = high ? "the learning rate is likely too high for this parameter"
                        : "the parameter barely moves: the learning rate may be too low or its "
                          "gradient vanishes";
    f.evidence = {{"ratio", ratio}, {"update_norm", *pair->update}, {"weight_norm", *pair->weight}};
    out.emit(std::move(f));
  }
}

void Monitors::end_loss(std::int64_t step, std::optional<double> loss, Emitter& out) {
  if (!loss || !config_.rules.loss.enabled) return;
  const LossRule& rule = config_.rules.loss;
  const double value = *loss;
  if (!std::isfinite(value)) {
    Finding f = make_finding("divergence", Severity::error, step, Phase::forward, "", "loss");
    f.message = "the loss is " + num(value) + at_step(Phase::forward, step);
    f.suggestion =
        "see the nonfinite finding for the op that produced it; lower the learning rate "
        "or clip gradients";
    f.evidence = {{"loss", value}};
    out.emit(std::move(f));
    return;
  }
  const std::vector<double> window = loss_window_.values();
  const double spike_vs_max = max_loss_ && *max_loss_ > 0 ? value / *max_loss_ : kNaN;
  double z = kNaN;
  double median = kNaN;
  if (window.size() >= std::size_t(rule.min_window)) {
    median = median_of(window);
    const double mad = median_absolute_deviation(window, median);
    if (mad > 0) z = (value - median) / (kMadToSigma * mad);
  }
  if (spike_vs_max > rule.spike_factor || z > rule.max_z) {
    Finding f = make_finding("loss_spike", Severity::warning, step, Phase::forward, "", "loss");
    f.message = "loss " + num(value) + " jumped: " +
                (spike_vs_max > rule.spike_factor ? num(spike_vs_max) + "x the largest loss so far"
                                                  : "robust z-score " + num(z) + " over the last " +
                                                        std::to_string(window.size()) + " steps") +
                at_step(Phase::forward, step);
    f.suggestion =
        "look at this step's batch and the gradient findings; clip gradients or lower "
        "the learning rate";
    f.evidence = {{"loss", value},
                  {"max_loss", max_loss_.value_or(kNaN)},
                  {"ratio_to_max", spike_vs_max},
                  {"median", median},
                  {"z", z}};
    out.emit(std::move(f));
  }
  loss_window_.push(value);
  loss_recent_.push(value);
  max_loss_ = std::max(max_loss_.value_or(value), value);
  if (!loss_recent_.full()) return;
  const double recent = loss_recent_.median();
  if (!best_recent_median_ || recent < *best_recent_median_) best_recent_median_ = recent;
  if (*best_recent_median_ > 0 && recent > rule.divergence_factor * *best_recent_median_) {
    Finding f = make_finding("divergence", Severity::warning, step, Phase::forward, "", "loss");
    f.message = "the loss is diverging: the median of the last " + std::to_string(rule.divergence_window) +
                " losses is " + num(recent) + ", " + num(recent / *best_recent_median_) + "x its best (" +
                num(*best_recent_median_) + ")" + at_step(Phase::forward, step);
    f.suggestion = "lower the learning rate, add warmup, or clip gradients";
    f.evidence = {{"recent_median", recent},
                  {"best_median", *best_recent_median_},
                  {"ratio", recent / *best_recent_median_}};
    out.emit(std::move(f));
  }
}

void Monitors::end_step(std::int64_t step, std::optional<double> loss, Emitter& out) {
  end_nonfinite(step, out);
  if (config_.rules.gradients.enabled) end_gradients(step, out);
  if (config_.rules.update_ratio.enabled) end_update_ratio(step, out);
  // The next step starts empty; the entries stay, so that it allocates nothing.
  for (auto& entry : step_layer_sq_) entry.second.seen = false;
  for (auto& entry : step_updates_) {
    entry.second.weight.reset();
    entry.second.update.reset();
  }
  end_loss(step, loss, out);
}

std::vector<SpectralMeasurement> Monitors::spectral() const {
  std::vector<SpectralMeasurement> out;
  for (const auto& entry : spectral_) {
    if (entry.second.latest) out.push_back(*entry.second.latest);
  }
  std::sort(out.begin(), out.end(), [](const SpectralMeasurement& a, const SpectralMeasurement& b) {
    return a.parameter < b.parameter;
  });
  return out;
}

}  // namespace tfdebug::detail
