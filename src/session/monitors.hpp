// The monitors and rules of docs/rules.md, with their per-rule state. Private to the session
// target: the Session measures each observation outside its lock (stats kernel, row summaries,
// histograms, power iteration) and hands the measurements to Monitors under the lock.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tfdebug/core/stats.hpp"
#include "tfdebug/session/finding.hpp"
#include "tfdebug/session/run_config.hpp"
#include "tfdebug/session/sink.hpp"
#include "tfdebug/session/spectral.hpp"

namespace tfdebug::detail {

// A fixed-capacity ring of doubles (oldest values fall out).
class Ring {
 public:
  explicit Ring(std::size_t capacity) : values_(capacity == 0 ? 1 : capacity) {
    sorted_.reserve(values_.size());
  }
  void push(double value);  // not NaN
  std::size_t size() const noexcept { return size_; }
  bool full() const noexcept { return size_ == values_.size(); }
  std::vector<double> values() const;  // oldest first
  // median_of(values()) without a copy: the values are also kept sorted (a rule asks for the
  // median of every layer's history every step).
  double median() const noexcept;

 private:
  std::vector<double> values_;
  std::vector<double> sorted_;
  std::size_t next_ = 0;
  std::size_t size_ = 0;
};

double median_of(std::vector<double> values);  // NaN when empty
// Median of |x - median|: the robust scale of the loss rule.
double median_absolute_deviation(const std::vector<double>& values, double median);

enum class SaturationKind : std::uint8_t { none, tanh, sigmoid, gelu };

struct Measurements {
  Stats stats;
  std::vector<std::uint8_t> unit_active;  // dead_units: 1 per unit with a non-zero value
  std::int64_t all_units_active = 0;      // dead_units: instead, this many units, every one active
  std::optional<double> saturated_fraction;
  std::optional<SpectralEstimate> spectral;
  // Counts in TensorFlow's default buckets (histogram_tensorflow), on histogram steps only.
  std::vector<std::int64_t> histogram;
};

class Emitter {
 public:
  virtual ~Emitter() = default;
  virtual void emit(Finding finding) = 0;
  // Adds `delta` to evidence `key` of the finding with this rule, module and op, if kept.
  virtual void add_evidence(std::string_view rule, std::string_view module, std::string_view op,
                            std::string_view key, double delta) = 0;
};

std::string make_key(std::string_view module, std::string_view op);

// Hash and equality that take a std::string_view too: look-ups by a producer's string without
// building a std::string.
struct KeyHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view key) const noexcept { return std::hash<std::string_view>()(key); }
};
template <class State>
using KeyMap = std::unordered_map<std::string, State, KeyHash, std::equal_to<>>;
// The layer a parameter belongs to: its module, or its name up to the last '.'.
std::string layer_of(const Observation& o);

class Monitors {
 public:
  explicit Monitors(const RunConfig& config);

  // What observe() should measure beyond the stats (cheap, no state; callable without the lock).
  bool wants_unit_activity(const Observation& observation) const;
  SaturationKind saturation_kind(const Observation& observation) const;
  // Spectral rule: when this parameter is due a measurement, marks it measured at this step and
  // returns the warm-start vector (empty for the first measurement). Call under the lock.
  std::optional<std::vector<double>> spectral_due(const Observation& observation);

  void observe(const Observation& observation, const Measurements& m, Emitter& out);
  void end_step(std::int64_t step, std::optional<double> loss, Emitter& out);

  std::vector<SpectralMeasurement> spectral() const;
  std::int64_t untracked() const noexcept { return untracked_; }

 private:
  template <class State>
  State* track(KeyMap<State>& states, std::string_view key);
  // make_key(module, op) of a parameter, built once: producers pass the same stable strings
  // every step (a direct-mapped cache by their addresses, checked against the key). Valid until
  // the next call.
  std::string_view key(std::string_view module, std::string_view op);
  struct RecentKey {
    const char* module = nullptr;
    const char* op = nullptr;
    const std::string* key = nullptr;  // keys_'s element: never moves, never erased
  };
  std::array<RecentKey, 512> recent_keys_{};
  KeyMap<char> keys_;
  std::string scratch_key_;  // beyond max_tracked keys

  void check_nonfinite(const Observation& o, const Stats& s, Emitter& out);
  void check_headroom(const Observation& o, const Stats& s, Emitter& out);
  void check_dead_units(const Observation& o, const Measurements& m, Emitter& out);
  void check_saturation(const Observation& o, const Measurements& m, Emitter& out);
  void check_weight_scale(const Observation& o, const Stats& s, Emitter& out);
  void check_spectral(const Observation& o, const SpectralEstimate& e, Emitter& out);
  void end_nonfinite(std::int64_t step, Emitter& out);
  void end_gradients(std::int64_t step, Emitter& out);
  void end_update_ratio(std::int64_t step, Emitter& out);
  void end_loss(std::int64_t step, std::optional<double> loss, Emitter& out);

  const RunConfig& config_;
  std::int64_t untracked_ = 0;

  // nonfinite
  struct Candidate {
    std::string module, op;
    Phase phase = Phase::forward;
    Role role = Role::output;
    std::optional<bool> inputs_finite;
    Stats stats;
  };
  std::optional<Candidate> step_first_nonfinite_;
  std::vector<std::pair<std::string, std::string>> step_producers_;  // (module, op) this step
  std::int64_t step_propagators_ = 0;
  bool nonfinite_reported_ = false;

  // gradients: per-layer sum of squared parameter-gradient norms this step (the entries stay from
  // step to step, so that a step allocates nothing), and histories
  struct LayerStep {
    double sq = 0;
    bool seen = false;  // a gradient of the layer arrived this step
  };
  KeyMap<LayerStep> step_layer_sq_;
  KeyMap<Ring> layer_history_;

  // update ratio: this step's norms per parameter key (entries stay; the norms reset each step)
  struct UpdatePair {
    std::string module, op;
    std::optional<double> weight, update;
  };
  KeyMap<UpdatePair> step_updates_;

  // dead units
  struct UnitState {
    std::int64_t first_step = 0;
    std::int64_t last_evaluated = -1;
    std::vector<std::int64_t> last_active;  // per unit, -1: never (see all_active)
    // The last step at which every unit was active (most outputs, most steps: no ±0 at all),
    // kept instead of writing it into every unit: a unit's last active step is the later of the
    // two.
    std::int64_t all_active = -1;
  };
  KeyMap<UnitState> units_;
  // Producers pass the same stable module and op strings every step: a direct-mapped cache by
  // their addresses, checked against the stored key, skips building and hashing the key.
  struct RecentUnits {
    const char* module = nullptr;
    const char* op = nullptr;
    const std::string* key = nullptr;  // units_'s node key: never moves, never erased
    UnitState* state = nullptr;
  };
  std::array<RecentUnits, 512> recent_units_{};
  UnitState* units_of(std::string_view module, std::string_view op);

  // weight scale
  struct ScaleState {
    double first_scale = 0;
    std::int64_t first_step = 0;
  };
  KeyMap<ScaleState> scales_;

  // spectral
  struct SpectralState {
    std::int64_t last_step = 0;
    double first_norm = 0;
    std::vector<double> vector;
    std::optional<SpectralMeasurement> latest;
  };
  KeyMap<SpectralState> spectral_;

  // loss
  Ring loss_window_;
  Ring loss_recent_;
  std::optional<double> max_loss_;
  std::optional<double> best_recent_median_;
};

}  // namespace tfdebug::detail
