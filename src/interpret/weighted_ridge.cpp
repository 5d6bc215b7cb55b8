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
// centred_aty: where to keep Xc' W yc (the fit's R^2 from the sums needs it), or null.
RidgeFit solve_centred(Sums s, double alpha, std::vector<double>* centred_aty = nullptr) {
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
  if (centred_aty != nullptr) *centred_aty = s.aty;
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

// A row's ones, in increasing order, into `ones`; returns how many. (A free function: GCC did
// not inline it as a member, and it runs for every row three times.)
inline std::size_t ones_in(std::span<const std::uint64_t> row, std::uint32_t* ones) {
  std::size_t count = 0;
  for (std::size_t word = 0; word < row.size(); ++word)
    for (std::uint64_t b = row[word]; b != 0; b &= b - 1)
      ones[count++] = static_cast<std::uint32_t>(64 * word + static_cast<std::size_t>(std::countr_zero(b)));
  return count;
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
  BinaryRidge ridge(data, features, weights);
  ridge.add_rows(0, outputs.size());
  ridge.add_outputs(outputs, 0, outputs.size());
  return ridge.fit(alpha);
}

BinaryRidge::BinaryRidge(const BinaryRows& data, std::size_t features, std::span<const double> weights)
    : data_(data),
      m_(features),
      weights_(weights),
      wx_(features, 0.0),
      ata_(features * features, 0.0),
      aty_(features, 0.0),
      ones_rows_(features),
      ones_outputs_(features) {}

void BinaryRidge::add_rows(std::size_t begin, std::size_t end) {
  for (std::size_t s = begin; s < end; ++s) {
    const double w = weights_[s];
    wsum_ += w;
    const std::size_t count = ones_in(data_.row(s), ones_rows_.data());
    for (std::size_t a = 0; a < count; ++a) {
      const std::size_t i = ones_rows_[a];
      wx_[i] += w;
      double* row = ata_.data() + i * m_;
      for (std::size_t b = a; b < count; ++b) row[ones_rows_[b]] += w;
    }
  }
}

void BinaryRidge::add_outputs(std::span<const double> outputs, std::size_t begin, std::size_t end) {
  if (begin == 0 && end > 0) y0_ = outputs[0];
  for (std::size_t s = begin; s < end; ++s) {
    const double wy = weights_[s] * outputs[s];
    wy_ += wy;
    const double dy = outputs[s] - y0_;
    wdy_ += weights_[s] * dy;
    wdy2_ += weights_[s] * dy * dy;
    const std::size_t count = ones_in(data_.row(s), ones_outputs_.data());
    for (std::size_t a = 0; a < count; ++a) aty_[ones_outputs_[a]] += wy;
  }
}

// Note [R^2 from the sums]: with the centred Xc' W Xc = C and Xc' W yc = c, the ridge's beta
// solves (C + alpha I) beta = c, so the weighted residual sum of squares is
//   yc' W yc - 2 beta' c + beta' C beta = tss - beta' c - alpha beta' beta,
// and R^2 = 1 - rss / tss = (beta' c + alpha beta' beta) / tss: m^2 work instead of a pass over
// every row after the solve (the only part of LIME's own work that must wait for the model).
// tss = sum w (y - y0)^2 - (sum w (y - y0))^2 / W, shifted by y0 = the first output so that a
// large mean does not cancel the spread's digits. sklearn's score agrees to 1e-7 (the tests).
RidgeFit BinaryRidge::fit(double alpha) {
  Sums sums(m_);
  sums.wsum = wsum_;
  sums.wy = wy_;
  sums.wx = wx_;
  sums.ata = ata_;
  sums.aty = aty_;
  std::vector<double> c;
  RidgeFit fit = solve_centred(std::move(sums), alpha, &c);
  const double tss = wdy2_ - wdy_ * wdy_ / wsum_;
  double explained = 0;
  for (std::size_t j = 0; j < m_; ++j)
    explained += fit.coefficients[j] * c[j] + alpha * fit.coefficients[j] * fit.coefficients[j];
  fit.r2 = tss > 0 ? explained / tss : 0;
  fit.local_prediction = fit.intercept;
  if (data_.rows() > 0) {
    const std::size_t count = ones_in(data_.row(0), ones_outputs_.data());
    for (std::size_t a = 0; a < count; ++a) fit.local_prediction += fit.coefficients[ones_outputs_[a]];
  }
  return fit;
}

}  // namespace tfdebug::interpret::detail
