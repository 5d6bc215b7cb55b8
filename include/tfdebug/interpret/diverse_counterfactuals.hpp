// Diverse counterfactuals ([G], tfdebug/interpret/model.hpp), after DiCE's gradient method
// (Mothilal et al. 2020): k inputs near x that the model puts in the wanted class, kept apart
// from each other so that together they show several ways to get there.
//
//   tfdebug::interpret::DiverseCounterfactualOptions o;
//   o.count = 4;              // k
//   o.wanted_class = 2;       // the output that must come out on top
//   o.training = rows;        // for the MADs (the unit of distance)
//   o.immutable = {0};        // features never moved
//   o.seed = 7;               // the same seed gives the same set, bit for bit
//   const auto set = tfdebug::interpret::diverse_counterfactuals(model, x, o);
//   // set.counterfactuals[i].x / .valid / .changed; set.validity, set.proximity, set.sparsity,
//   // set.diversity, set.count_diversity, set.determinant
//
// The k counterfactuals c_1..c_k minimise together, by Adam (lr 0.05, at least 500 and at most
// 5,000 steps; stopped once all are valid and the loss moves less than 1e-5 between steps):
//
//   loss = mean_i yloss(c_i) + 0.5 proximity - 1.0 det K
//   yloss(c)   = max(0, 1 - margin(c)), the hinge DiCE puts on the logit: margin = s z for a
//                single output z (s = +1 when class 1 is wanted, -1 for class 0), else
//                z_wanted - max over the other outputs (a multi-class hinge on the logits).
//                The outputs are read as logits (scores), as a classifier's last layer gives them.
//   proximity  = sum_i sum_j |c_ij - x_j| / MAD_j / (features k)
//   K_ij       = 1 / (1 + d(c_i, c_j)) with d the MAD-weighted L1 distance, + 1e-4 on the diagonal
//
// Each c_i starts at x plus seeded noise of 0.5 MAD per mutable feature (its own stream,
// Note [Seeded streams]) and moves in units of each feature's MAD (DiCE scales features to
// [0, 1] by their range instead; the MAD is the unit proximity already uses, and it keeps one
// outlier from shrinking every step). Immutable features are never moved: their gradient is not
// applied (DiCE#355: the gradient method ignored features_to_vary). Bounds are projections after
// each step. A feature with MAD 0 is scaled by its standard deviation, or 1 (Note [MAD fallback];
// DiCE#227). Then post-hoc sparsity, as DiCE's: each changed feature of a valid c_i, the smallest
// change first, is reset to x's value if that change is below `sparsity_threshold` MADs and c_i
// stays valid.
//
// Categorical features (`categorical`, as DiCE's): a feature whose allowed values are the training
// data's distinct values of its column (and x's own) is only ever set to one of them. Inside the
// search it is relaxed as DiCE relaxes a one-hot group: a weight q_v in [0, 1] per allowed value,
// the model reading sum_v q_v v, with DiCE's categorical penalty 0.1 (sum_v q_v - 1)^2; its
// proximity is half the L1 distance of q from x's one-hot (1 for a full switch), its distance in
// K likewise. At the end each takes its largest q's value; a counterfactual that this leaves
// outside the wanted class is repaired by the single categorical change that raises its margin
// most, repeated while it helps. In the metrics and det K a categorical feature counts 1 when it
// differs and 0 when not (DiCE's categorical proximity and diversity), not its MAD-scaled change.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "tfdebug/interpret/model.hpp"

namespace tfdebug::interpret {

struct DiverseCounterfactualOptions {
  std::int64_t count = 4;                 // k
  std::int64_t wanted_class = 1;          // for a single-output model: 1 (z > 0) or 0 (z < 0)
  std::vector<float> training;            // rows, for the MADs; empty: every MAD 1
  std::vector<std::int64_t> immutable;    // features that keep x's value
  std::vector<std::int64_t> categorical;  // features set only to the training data's values
  std::vector<float> lower, upper;        // per feature bounds (empty: none)
  double proximity_weight = 0.5;
  double diversity_weight = 1.0;
  double learning_rate = 0.05;
  std::int64_t min_iterations = 500;
  std::int64_t max_iterations = 5000;
  double loss_tolerance = 1e-5;     // stop once all are valid and the loss moves less than this
  double sparsity_threshold = 0.5;  // post-hoc: changes below this many MADs are tried at x's value
  double init_noise = 0.5;          // MADs of the starting noise
  std::uint64_t seed = 0;
};

struct DiverseCounterfactual {
  std::vector<float> x;        // the counterfactual
  bool valid = false;          // the model puts it in the wanted class
  std::vector<float> outputs;  // the model's outputs there
  std::int64_t changed = 0;    // features that differ from the input
  double distance = 0;         // MAD-weighted L1 distance to the input (categorical: 1 per mismatch)
};

struct DiverseCounterfactuals {
  std::vector<DiverseCounterfactual> counterfactuals;
  std::vector<double> scale;  // per feature: the MAD (or its fallback), the unit of distance
  // The categorical features (their mutable ones) and each one's allowed values.
  std::vector<std::int64_t> categorical;
  std::vector<std::vector<float>> allowed;
  // The set's metrics, as DiCE reports them:
  double validity = 0;         // fraction of the counterfactuals in the wanted class
  double proximity = 0;        // mean over them of the MAD-weighted L1 distance / features
  double sparsity = 0;         // mean number of features changed
  double diversity = 0;        // mean over pairs of the MAD-weighted L1 distance / features
  double count_diversity = 0;  // mean over pairs of the fraction of features that differ
  double determinant = 0;      // det K without the 1e-4 (in (0, 1] for distinct ones, 0 if two coincide)
  std::int64_t iterations = 0;
  std::int64_t evaluations = 0;
};

DiverseCounterfactuals diverse_counterfactuals(GradientModel& model, std::span<const float> x,
                                               const DiverseCounterfactualOptions& options);

// det K for `count` points of `features` values (row-major) under per-feature scales, with
// `jitter` added to K's diagonal (DiCE's loss uses 1e-4).
double diversity_determinant(std::span<const float> points, std::int64_t count, std::span<const double> scale,
                             double jitter = 0);

}  // namespace tfdebug::interpret
