#include "weighted_ridge.hpp"

#include "linear_solve.hpp"

namespace tfdebug::interpret::detail {

RidgeFit weighted_ridge(std::span<const double> data, std::size_t features, std::span<const double> outputs,
                        std::span<const double> weights, double alpha) {
  // As sklearn's Ridge with sample_weight: centre X and y on their weighted means, solve
  // (Xc' W Xc + alpha I) beta = Xc' W yc, intercept = ybar - xbar . beta. The centred products
  // come from the plain weighted sums, sum w x_i x_j - W xbar_i xbar_j, one triangle, skipping the
  // zeros (LIME's interpretable data is mostly 0/1).
  const std::size_t mm = features;
  const std::size_t n = outputs.size();
  double wsum = 0, wy = 0;
  std::vector<double> wx(mm, 0.0), ata(mm * mm, 0.0), aty(mm, 0.0);
  std::vector<std::size_t> nonzero;
  for (std::size_t s = 0; s < n; ++s) {
    const double w = weights[s];
    const double* z = data.data() + s * mm;
    wsum += w;
    wy += w * outputs[s];
    nonzero.clear();
    for (std::size_t j = 0; j < mm; ++j)
      if (z[j] != 0) nonzero.push_back(j);
    for (std::size_t a = 0; a < nonzero.size(); ++a) {
      const std::size_t i = nonzero[a];
      const double wzi = w * z[i];
      wx[i] += wzi;
      aty[i] += wzi * outputs[s];
      for (std::size_t b = a; b < nonzero.size(); ++b) ata[i * mm + nonzero[b]] += wzi * z[nonzero[b]];
    }
  }
  const double ybar = wy / wsum;
  std::vector<double> xbar(mm);
  for (std::size_t j = 0; j < mm; ++j) xbar[j] = wx[j] / wsum;
  for (std::size_t i = 0; i < mm; ++i) {
    aty[i] -= wsum * xbar[i] * ybar;
    for (std::size_t j = i; j < mm; ++j) {
      ata[i * mm + j] -= wsum * xbar[i] * xbar[j];
      ata[j * mm + i] = ata[i * mm + j];
    }
  }
  for (std::size_t i = 0; i < mm; ++i) ata[i * mm + i] += alpha;
  RidgeFit fit;
  fit.coefficients = solve(
      ata, aty, mm, "LIME: the samples do not determine the surrogate (a feature never varies); raise alpha");
  const std::vector<double>& beta = fit.coefficients;
  fit.intercept = ybar;
  for (std::size_t j = 0; j < mm; ++j) fit.intercept -= xbar[j] * beta[j];
  double rss = 0, tss = 0;
  for (std::size_t s = 0; s < n; ++s) {
    double f = fit.intercept;
    for (std::size_t j = 0; j < mm; ++j) f += beta[j] * data[s * mm + j];
    rss += weights[s] * (outputs[s] - f) * (outputs[s] - f);
    tss += weights[s] * (outputs[s] - ybar) * (outputs[s] - ybar);
  }
  fit.r2 = tss > 0 ? 1 - rss / tss : 0;
  fit.local_prediction = fit.intercept;
  for (std::size_t j = 0; j < mm; ++j) fit.local_prediction += beta[j] * data[j];
  return fit;
}

}  // namespace tfdebug::interpret::detail
