#include "weighted_ridge.hpp"

#include <bit>

#include "linear_solve.hpp"

namespace tfdebug::interpret::detail {
namespace {

// The weighted sums of the rows: W = sum w, sum w y, sum w x, sum w x x' (upper triangle), sum w x y.
struct Sums {
  explicit Sums(std::size_t features)
      : m(features), wx(features, 0.0), ata(features * features, 0.0), aty(features, 0.0) {}
  std::size_t m;
  double wsum = 0, wy = 0;
  std::vector<double> wx, ata, aty;
};

// As sklearn's Ridge with sample_weight: centre X and y on their weighted means, solve
// (Xc' W Xc + alpha I) beta = Xc' W yc, intercept = ybar - xbar . beta. The centred products
// come from the plain weighted sums, sum w x_i x_j - W xbar_i xbar_j.
RidgeFit solve_centred(Sums s, double alpha) {
  const std::size_t mm = s.m;
  const double ybar = s.wy / s.wsum;
  std::vector<double> xbar(mm);
  for (std::size_t j = 0; j < mm; ++j) xbar[j] = s.wx[j] / s.wsum;
  for (std::size_t i = 0; i < mm; ++i) {
    s.aty[i] -= s.wsum * xbar[i] * ybar;
    for (std::size_t j = i; j < mm; ++j) {
      s.ata[i * mm + j] -= s.wsum * xbar[i] * xbar[j];
      s.ata[j * mm + i] = s.ata[i * mm + j];
    }
  }
  for (std::size_t i = 0; i < mm; ++i) s.ata[i * mm + i] += alpha;
  RidgeFit fit;
  fit.coefficients =
      solve(std::move(s.ata), std::move(s.aty), mm,
            "LIME: the samples do not determine the surrogate (a feature never varies); raise alpha");
  fit.intercept = ybar;
  for (std::size_t j = 0; j < mm; ++j) fit.intercept -= xbar[j] * fit.coefficients[j];
  return fit;
}

// The weighted R^2 and the fit at row 0, from the fit's prediction of each row.
template <class Predict>
void score(RidgeFit& fit, std::span<const double> outputs, std::span<const double> weights, double ybar,
           Predict&& predict) {
  double rss = 0, tss = 0;
  for (std::size_t s = 0; s < outputs.size(); ++s) {
    const double f = predict(s);
    rss += weights[s] * (outputs[s] - f) * (outputs[s] - f);
    tss += weights[s] * (outputs[s] - ybar) * (outputs[s] - ybar);
  }
  fit.r2 = tss > 0 ? 1 - rss / tss : 0;
  fit.local_prediction = predict(0);
}

}  // namespace

RidgeFit weighted_ridge(std::span<const double> data, std::size_t features, std::span<const double> outputs,
                        std::span<const double> weights, double alpha) {
  // One triangle of the products, skipping the zeros (LIME's interpretable data is mostly 0/1).
  const std::size_t mm = features;
  const std::size_t n = outputs.size();
  Sums sums(mm);
  std::vector<std::size_t> nonzero;
  for (std::size_t s = 0; s < n; ++s) {
    const double w = weights[s];
    const double* z = data.data() + s * mm;
    sums.wsum += w;
    sums.wy += w * outputs[s];
    nonzero.clear();
    for (std::size_t j = 0; j < mm; ++j)
      if (z[j] != 0) nonzero.push_back(j);
    for (std::size_t a = 0; a < nonzero.size(); ++a) {
      const std::size_t i = nonzero[a];
      const double wzi = w * z[i];
      sums.wx[i] += wzi;
      sums.aty[i] += wzi * outputs[s];
      for (std::size_t b = a; b < nonzero.size(); ++b) sums.ata[i * mm + nonzero[b]] += wzi * z[nonzero[b]];
    }
  }
  const double ybar = sums.wy / sums.wsum;
  RidgeFit fit = solve_centred(std::move(sums), alpha);
  score(fit, outputs, weights, ybar, [&](std::size_t s) {
    double f = fit.intercept;
    for (std::size_t j = 0; j < mm; ++j) f += fit.coefficients[j] * data[s * mm + j];
    return f;
  });
  return fit;
}

RidgeFit weighted_ridge(const BinaryRows& data, std::size_t features, std::span<const double> outputs,
                        std::span<const double> weights, double alpha) {
  const std::size_t mm = features;
  Sums sums(mm);
  std::vector<std::uint32_t> ones(mm);
  // Row s's ones, in increasing order; returns how many.
  const auto ones_of = [&](std::size_t s) {
    std::size_t count = 0;
    const std::span<const std::uint64_t> row = data.row(s);
    for (std::size_t word = 0; word < row.size(); ++word)
      for (std::uint64_t b = row[word]; b != 0; b &= b - 1)
        ones[count++] = static_cast<std::uint32_t>(64 * word + static_cast<std::size_t>(std::countr_zero(b)));
    return count;
  };
  for (std::size_t s = 0; s < outputs.size(); ++s) {
    const double w = weights[s];
    const double wy = w * outputs[s];
    sums.wsum += w;
    sums.wy += wy;
    const std::size_t count = ones_of(s);
    for (std::size_t a = 0; a < count; ++a) {
      const std::size_t i = ones[a];
      sums.wx[i] += w;
      sums.aty[i] += wy;
      double* row = sums.ata.data() + i * mm;
      for (std::size_t b = a; b < count; ++b) row[ones[b]] += w;
    }
  }
  const double ybar = sums.wy / sums.wsum;
  RidgeFit fit = solve_centred(std::move(sums), alpha);
  score(fit, outputs, weights, ybar, [&](std::size_t s) {
    double f = fit.intercept;
    const std::size_t count = ones_of(s);
    for (std::size_t a = 0; a < count; ++a) f += fit.coefficients[ones[a]];
    return f;
  });
  return fit;
}

}  // namespace tfdebug::interpret::detail
