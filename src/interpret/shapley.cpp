#include "tfdebug/interpret/shapley.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <unordered_map>

#include "coalitions.hpp"
#include "linear_solve.hpp"
#include "tfdebug/core/error.hpp"

namespace tfdebug::interpret {
namespace {

using detail::Coalitions;

// v(all) and v(none): the first two of one call.
std::pair<double, double> ends(Coalitions& game) {
  const auto m = static_cast<std::size_t>(game.players());
  std::vector<std::uint8_t> masks(2 * m, 0);
  std::fill(masks.begin(), masks.begin() + static_cast<std::ptrdiff_t>(m), 1);
  const std::vector<double> v = game.values(masks, 2);
  return {v[0], v[1]};
}

double binomial(std::int64_t n, std::int64_t k) {
  return std::exp(std::lgamma(double(n) + 1) - std::lgamma(double(k) + 1) - std::lgamma(double(n - k) + 1));
}

}  // namespace

ShapleyAttribution exact_shapley(ForwardModel& model, std::span<const float> x, std::int64_t target,
                                 const ShapleyOptions& options) {
  Coalitions game(model, x, target, options);
  const std::int64_t m = game.players();
  if (m > options.max_exact_features) {
    throw Error("exact Shapley values of " + std::to_string(m) + " features need 2^" + std::to_string(m) +
                " coalitions; the limit is " + std::to_string(options.max_exact_features) +
                " (use kernel-shap or permutation-shap, or group the features)");
  }
  const std::int64_t count = std::int64_t{1} << m;
  std::vector<std::uint8_t> masks(static_cast<std::size_t>(count * m));
  for (std::int64_t s = 0; s < count; ++s)
    for (std::int64_t p = 0; p < m; ++p) masks[static_cast<std::size_t>(s * m + p)] = (s >> p) & 1;
  const std::vector<double> v = game.values(masks, count);
  // weight(|S|) = |S|! (M - |S| - 1)! / M!
  std::vector<double> weight(static_cast<std::size_t>(std::max<std::int64_t>(m, 1)));
  for (std::int64_t s = 0; s < m; ++s)
    weight[static_cast<std::size_t>(s)] = 1 / (double(m) * binomial(m - 1, s));
  std::vector<double> phi(static_cast<std::size_t>(m), 0.0);
  for (std::int64_t s = 0; s < count; ++s) {
    const int size = __builtin_popcountll(static_cast<unsigned long long>(s));
    for (std::int64_t p = 0; p < m; ++p) {
      if ((s >> p) & 1) continue;
      phi[static_cast<std::size_t>(p)] +=
          weight[static_cast<std::size_t>(size)] *
          (v[static_cast<std::size_t>(s | (std::int64_t{1} << p))] - v[static_cast<std::size_t>(s)]);
    }
  }
  return game.result("shap-exact", phi, v[static_cast<std::size_t>(count - 1)], v[0]);
}

ShapleyAttribution permutation_shap(ForwardModel& model, std::span<const float> x, std::int64_t target,
                                    const ShapleyOptions& options) {
  Coalitions game(model, x, target, options);
  const std::int64_t m = game.players();
  if (m == 0) {
    const auto [full, empty] = ends(game);
    return game.result("shap-permutation", {}, full, empty);
  }
  const std::int64_t permutations = std::max<std::int64_t>(1, options.max_evals / (2 * m + 1));
  // Each permutation p: the coalitions after turning its players on one by one (from none to
  // all), then off again in the same order (back to none): 2M + 1 masks, two walks whose
  // marginals each telescope to v(all) - v(none) (shap's antithetic sampling).
  std::mt19937_64 rng(options.seed);
  std::vector<std::int64_t> order(static_cast<std::size_t>(m));
  std::vector<std::vector<std::int64_t>> orders;
  const std::int64_t per = 2 * m + 1;
  std::vector<std::uint8_t> masks(static_cast<std::size_t>(permutations * per * m), 0);
  for (std::int64_t q = 0; q < permutations; ++q) {
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    orders.push_back(order);
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(m), 0);
    for (std::int64_t k = 0; k < per; ++k) {
      if (k >= 1 && k <= m) mask[static_cast<std::size_t>(order[static_cast<std::size_t>(k - 1)])] = 1;
      if (k > m) mask[static_cast<std::size_t>(order[static_cast<std::size_t>(k - m - 1)])] = 0;
      std::copy(mask.begin(), mask.end(), masks.begin() + static_cast<std::ptrdiff_t>((q * per + k) * m));
    }
  }
  const std::vector<double> v = game.values(masks, permutations * per);
  std::vector<double> phi(static_cast<std::size_t>(m), 0.0);
  for (std::int64_t q = 0; q < permutations; ++q) {
    const double* w = v.data() + q * per;
    const auto& o = orders[static_cast<std::size_t>(q)];
    for (std::int64_t k = 1; k <= m; ++k) {
      phi[static_cast<std::size_t>(o[static_cast<std::size_t>(k - 1)])] += w[k] - w[k - 1];  // turned on
      phi[static_cast<std::size_t>(o[static_cast<std::size_t>(k - 1)])] +=
          w[m + k - 1] - w[m + k];  // turned off
    }
  }
  for (double& p : phi) p /= 2.0 * static_cast<double>(permutations);
  return game.result("shap-permutation", phi, v[static_cast<std::size_t>(m)], v[0]);
}

ShapleyAttribution kernel_shap(ForwardModel& model, std::span<const float> x, std::int64_t target,
                               const ShapleyOptions& options) {
  Coalitions game(model, x, target, options);
  const std::int64_t m = game.players();
  const auto [full, empty] = ends(game);
  if (m <= 1) {
    // No player, or one who takes the whole change (shap: M = 1 gives phi = delta).
    const std::vector<double> phi(static_cast<std::size_t>(m), full - empty);
    ShapleyAttribution a = game.result("kernel-shap", phi, full, empty);
    return a;
  }
  if (options.samples < 0)
    throw Error("samples must be >= 0 (0: 2M + 2048), got " + std::to_string(options.samples));
  const double all_subsets = m >= 62 ? 4.6e18 : std::ldexp(1.0, static_cast<int>(m)) - 2;
  std::int64_t budget = options.samples > 0 ? options.samples : 2 * m + 2048;
  if (static_cast<double>(budget) > all_subsets) budget = static_cast<std::int64_t>(all_subsets);

  // Note [Kernel SHAP sampling], after shap's KernelExplainer: the Shapley kernel gives the
  // coalitions of size s a total weight of (M - 1) / (s (M - s)); sizes s and M - s are paired
  // (a coalition comes with its complement). Whole sizes are enumerated, smallest first, while
  // the budget left covers all their coalitions at their share of the remaining weight; the rest
  // of the budget is drawn at random and its weights scaled to the sizes' total. With a budget
  // of every coalition (2^M - 2) all sizes are enumerated and the fit is exactly the Shapley
  // values. No L1 feature selection (shap's default since 0.47 leaves at most 10 non-zero,
  // the all-zero answers of shap#996): every player gets its least-squares value.
  const std::int64_t sizes = (m + 1) / 2;  // ceil((M - 1) / 2) for s = 1..sizes
  const std::int64_t paired = (m - 1) / 2;
  std::vector<double> size_weight(static_cast<std::size_t>(sizes));
  for (std::int64_t s = 1; s <= sizes; ++s) {
    size_weight[static_cast<std::size_t>(s - 1)] = double(m - 1) / (double(s) * double(m - s));
    if (s <= paired) size_weight[static_cast<std::size_t>(s - 1)] *= 2;
  }
  const double weight_total = std::accumulate(size_weight.begin(), size_weight.end(), 0.0);
  for (double& w : size_weight) w /= weight_total;

  std::vector<std::uint8_t> masks;
  std::vector<double> weights;
  const auto add = [&](const std::vector<std::uint8_t>& mask, double w) {
    masks.insert(masks.end(), mask.begin(), mask.end());
    weights.push_back(w);
  };
  // Whole sizes, smallest first, while the budget covers them at their share of the weight.
  std::int64_t left = budget;
  std::int64_t full_sizes = 0;
  std::vector<double> remaining = size_weight;
  for (std::int64_t s = 1; s <= sizes; ++s) {
    double subsets = binomial(m, s);
    if (s <= paired) subsets *= 2;
    if (static_cast<double>(left) * remaining[static_cast<std::size_t>(s - 1)] / subsets < 1 - 1e-8) break;
    ++full_sizes;
    left -= static_cast<std::int64_t>(std::llround(subsets));
    if (remaining[static_cast<std::size_t>(s - 1)] < 1) {
      const double r = remaining[static_cast<std::size_t>(s - 1)];
      for (double& w : remaining) w /= 1 - r;
    }
    double w = size_weight[static_cast<std::size_t>(s - 1)] / binomial(m, s);
    if (s <= paired) w /= 2;
    // Every subset of size s, in lexicographic order, and its complement when paired.
    std::vector<std::int64_t> pick(static_cast<std::size_t>(s));
    std::iota(pick.begin(), pick.end(), 0);
    while (true) {
      std::vector<std::uint8_t> mask(static_cast<std::size_t>(m), 0);
      for (const std::int64_t p : pick) mask[static_cast<std::size_t>(p)] = 1;
      add(mask, w);
      if (s <= paired) {
        for (auto& b : mask) b = 1 - b;
        add(mask, w);
      }
      std::int64_t i = s - 1;
      while (i >= 0 && pick[static_cast<std::size_t>(i)] == m - s + i) --i;
      if (i < 0) break;
      ++pick[static_cast<std::size_t>(i)];
      for (std::int64_t k = i + 1; k < s; ++k)
        pick[static_cast<std::size_t>(k)] = pick[static_cast<std::size_t>(k - 1)] + 1;
    }
  }
  // The rest sampled: a size from the remaining sizes' weights, a random subset of it and its
  // complement; a coalition drawn again adds to its weight instead of a row.
  const std::size_t fixed = weights.size();
  if (full_sizes < sizes && left > 0) {
    std::vector<double> rest(size_weight.begin() + full_sizes, size_weight.end());
    for (std::int64_t s = full_sizes + 1; s <= paired; ++s)
      rest[static_cast<std::size_t>(s - full_sizes - 1)] /= 2;
    std::mt19937_64 rng(options.seed);
    std::discrete_distribution<std::int64_t> size_of(rest.begin(), rest.end());
    std::unordered_map<std::string, std::size_t> seen;  // a mask as bytes -> its row
    std::vector<std::int64_t> players(static_cast<std::size_t>(m));
    for (std::int64_t draw = 0; draw < 4 * budget && left > 0; ++draw) {
      const std::int64_t s = size_of(rng) + full_sizes + 1;
      std::iota(players.begin(), players.end(), 0);
      std::shuffle(players.begin(), players.end(), rng);
      std::vector<std::uint8_t> mask(static_cast<std::size_t>(m), 0);
      for (std::int64_t k = 0; k < s; ++k)
        mask[static_cast<std::size_t>(players[static_cast<std::size_t>(k)])] = 1;
      std::string key(mask.begin(), mask.end());
      const auto found = seen.find(key);
      const bool fresh = found == seen.end();
      std::size_t at = 0;
      if (fresh) {
        at = weights.size();
        seen.emplace(std::move(key), at);
        add(mask, 1.0);
        --left;
      } else {
        at = found->second;
        weights[at] += 1.0;
      }
      if (left > 0 && s <= paired) {
        for (auto& b : mask) b = 1 - b;
        if (fresh) {
          add(mask, 1.0);
          --left;
        } else {
          weights[at + 1] += 1.0;
        }
      }
    }
    const double weight_left = std::accumulate(size_weight.begin() + full_sizes, size_weight.end(), 0.0);
    const double drawn =
        std::accumulate(weights.begin() + static_cast<std::ptrdiff_t>(fixed), weights.end(), 0.0);
    for (std::size_t i = fixed; i < weights.size(); ++i) weights[i] *= weight_left / drawn;
  }

  const auto rows = static_cast<std::int64_t>(weights.size());
  const std::vector<double> v = game.values(masks, rows);
  // Weighted least squares of v(S) - v(none) on the mask, with the efficiency constraint
  // sum(phi) = v(all) - v(none) used to eliminate the last player.
  const auto n = static_cast<std::size_t>(m - 1);
  const double change = full - empty;
  std::vector<double> ata(n * n, 0.0), aty(n, 0.0), z(n);
  for (std::int64_t r = 0; r < rows; ++r) {
    const std::uint8_t* mask = masks.data() + r * m;
    const double last = mask[m - 1];
    const double y = v[static_cast<std::size_t>(r)] - empty - last * change;
    for (std::size_t i = 0; i < n; ++i) z[i] = double(mask[i]) - last;
    const double w = weights[static_cast<std::size_t>(r)];
    for (std::size_t i = 0; i < n; ++i) {
      if (z[i] == 0) continue;
      aty[i] += w * z[i] * y;
      for (std::size_t j = 0; j < n; ++j) ata[i * n + j] += w * z[i] * z[j];
    }
  }
  std::vector<double> phi = detail::solve(
      ata, aty, n, "kernel SHAP: the sampled coalitions do not determine the values; raise samples");
  phi.push_back(change - std::accumulate(phi.begin(), phi.end(), 0.0));
  return game.result("kernel-shap", phi, full, empty);
}

}  // namespace tfdebug::interpret
