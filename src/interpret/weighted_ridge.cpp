#include "weighted_ridge.hpp"

#include <algorithm>
#include <array>
#include <bit>

#include "linear_solve.hpp"
#include "tfdebug/core/error.hpp"

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

// Note [Products by weight class]: sum w z z' over 0/1 rows whose weight is a function of their
// number of ones k is sum_k w_k N_k, where N_k[i][j] counts the rows of k ones that have both
// features i and j: integers, exact in any order. The rows are bucketed by k, and each bucket's
// counts are made by adding the row, expanded to 0/1 lanes, to the count row of each of its ones
// (for LIME's 64 features, a quarter of them ones, 16 adds of 64 byte lanes: one AVX-512 add
// each, where the scalar pairs were 136 dependent read-modify-writes of doubles a row), then
// folded into the doubles every 255 rows of a bucket and at its end. A bucket whose pairs cost
// less than its fold is added pair by pair.
namespace {

// A byte per bit: kSpread[b] holds bit t of b in byte t.
constexpr std::array<std::uint64_t, 256> kSpread = [] {
  std::array<std::uint64_t, 256> t{};
  for (std::size_t b = 0; b < 256; ++b)
    for (std::size_t bit = 0; bit < 8; ++bit) t[b] |= static_cast<std::uint64_t>((b >> bit) & 1) << (8 * bit);
  return t;
}();

// One bucket's products, weight w: ata[i * m + j] += w for every row and pair of its ones i <= j,
// wx[i] += w for each one. The row's bits become 0/1 bytes, added to a byte counter per pair (a
// 64-lane block is one AVX-512 add), which are folded into the doubles every 255 rows, before
// they can overflow. bytes: stride x stride zeros, left zero.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void add_bucket(const std::uint64_t* bits, std::size_t words, const std::uint32_t* rows, std::size_t count,
                std::size_t m, double w, std::uint8_t* __restrict lanes, std::uint8_t* __restrict bytes,
                double* __restrict ata, double* __restrict wx) {
  const std::size_t stride = 64 * words;
  for (std::size_t done = 0; done < count;) {
    const std::size_t chunk = std::min<std::size_t>(255, count - done);
    for (std::size_t r = done; r < done + chunk; ++r) {
      const std::uint64_t* row = bits + static_cast<std::size_t>(rows[r]) * words;
      for (std::size_t b = 0; b < stride / 8; ++b) {
        const std::uint64_t spread = kSpread[(row[b / 8] >> (8 * (b % 8))) & 0xFF];
        __builtin_memcpy(lanes + 8 * b, &spread, sizeof spread);
      }
      for (std::size_t word = 0; word < words; ++word)
        for (std::uint64_t b = row[word]; b != 0; b &= b - 1) {
          const std::size_t i = 64 * word + static_cast<std::size_t>(std::countr_zero(b));
          std::uint8_t* out = bytes + i * stride;
          for (std::size_t block = 64 * word; block < stride; block += 64)
            for (std::size_t l = 0; l < 64; ++l)
              out[block + l] = static_cast<std::uint8_t>(out[block + l] + lanes[block + l]);
        }
    }
    for (std::size_t i = 0; i < m; ++i) {
      std::uint8_t* c = bytes + i * stride;
      double* out = ata + i * m;
      wx[i] += w * c[i];
      for (std::size_t j = i; j < m; ++j) out[j] += w * c[j];
      for (std::size_t j = 0; j < stride; ++j) c[j] = 0;
    }
    done += chunk;
  }
}

}  // namespace

BinaryRidge::BinaryRidge(const BinaryRows& data, std::size_t features, std::span<const double> weight_by_ones)
    : data_(data),
      m_(features),
      weight_by_ones_(weight_by_ones),
      aty_(data.words * 64, 0.0),  // padded to whole words (add_at_ones)
      ones_outputs_(features) {
  if (weight_by_ones.size() != features + 1)
    throw Error("BinaryRidge: weight_by_ones needs features + 1 values");
}

namespace {

// sum += wy at every feature whose bit is set in the row: 64 lanes a word, masked adds (the same
// sums, in the same row order, as adding wy at each one).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
void add_at_ones(const std::uint64_t* row, std::size_t words, double wy, double* __restrict sum) {
  for (std::size_t word = 0; word < words; ++word) {
    const std::uint64_t bits = row[word];
    double* out = sum + 64 * word;
    for (std::size_t l = 0; l < 64; ++l) out[l] += ((bits >> l) & 1) != 0 ? wy : 0.0;
  }
}

}  // namespace

void BinaryRidge::add_outputs(std::span<const double> outputs, std::size_t begin, std::size_t end) {
  if (begin == 0 && end > 0) y0_ = outputs[0];
  for (std::size_t s = begin; s < end; ++s) {
    const std::span<const std::uint64_t> row = data_.row(s);
    std::size_t count = 0;
    for (const std::uint64_t word : row) count += count_ones(word);
    const double w = weight_by_ones_[count];
    const double wy = w * outputs[s];
    wy_ += wy;
    const double dy = outputs[s] - y0_;
    wdy_ += w * dy;
    wdy2_ += w * dy * dy;
    add_at_ones(row.data(), row.size(), wy, aty_.data());
  }
}

// Note [R^2 from the sums]: with the centred Xc' W Xc = C and Xc' W yc = c, the ridge's beta
// solves (C + alpha I) beta = c, so the weighted residual sum of squares is
//   yc' W yc - 2 beta' c + beta' C beta = tss - beta' c - alpha beta' beta,
// and R^2 = 1 - rss / tss = (beta' c + alpha beta' beta) / tss: m^2 work instead of a pass over
// every row after the solve (the only part of LIME's own work that must wait for the model).
// tss = sum w (y - y0)^2 - (sum w (y - y0))^2 / W, shifted by y0 = the first output so that a
// large mean does not cancel the spread's digits. sklearn's score agrees to 1e-7 (the tests).
void BinaryRidge::add_products() {
  if (products_done_) return;
  products_done_ = true;
  wx_.assign(m_, 0.0);
  ata_.assign(m_ * m_, 0.0);
  // The rows bucketed by their number of ones (Note [Products by weight class]).
  const std::size_t n = data_.rows();
  std::vector<std::uint32_t> ones(n), first(m_ + 2, 0), order(n);
  for (std::size_t s = 0; s < n; ++s) {
    std::size_t k = 0;
    for (const std::uint64_t word : data_.row(s)) k += count_ones(word);
    ones[s] = static_cast<std::uint32_t>(k);
    ++first[k + 1];
  }
  for (std::size_t k = 0; k <= m_; ++k) first[k + 1] += first[k];
  {
    std::vector<std::uint32_t> next(first.begin(), first.end() - 1);
    for (std::size_t s = 0; s < n; ++s) order[next[ones[s]]++] = static_cast<std::uint32_t>(s);
  }
  const std::size_t stride = 64 * data_.words;
  std::vector<std::uint32_t> row_ones(m_);
  std::vector<std::uint8_t> lanes(stride), bytes(stride * stride, 0);
  for (std::size_t k = 0; k <= m_; ++k) {
    const std::size_t rows = first[k + 1] - first[k];
    if (rows == 0) continue;
    const double w = weight_by_ones_[k];
    wsum_ += w * static_cast<double>(rows);
    const std::uint32_t* bucket = order.data() + first[k];
    if (rows * k * (k + 1) / 2 < m_ * stride) {  // fewer pairs than the bytes to fold
      for (std::size_t r = 0; r < rows; ++r) {
        const std::size_t count = ones_in(data_.row(bucket[r]), row_ones.data());
        for (std::size_t a = 0; a < count; ++a) {
          const std::size_t i = row_ones[a];
          wx_[i] += w;
          double* out = ata_.data() + i * m_;
          for (std::size_t b = a; b < count; ++b) out[row_ones[b]] += w;
        }
      }
      continue;
    }
    add_bucket(data_.bits.data(), data_.words, bucket, rows, m_, w, lanes.data(), bytes.data(), ata_.data(),
               wx_.data());
  }
}

RidgeFit BinaryRidge::fit(double alpha) {
  add_products();
  Sums sums(m_);
  sums.wy = wy_;
  sums.aty.assign(aty_.begin(), aty_.begin() + static_cast<std::ptrdiff_t>(m_));
  sums.wsum = wsum_;
  sums.wx = wx_;
  sums.ata = ata_;
  const double wsum = wsum_;
  std::vector<double> c;
  RidgeFit fit = solve_centred(std::move(sums), alpha, &c);
  const double tss = wdy2_ - wdy_ * wdy_ / wsum;
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
