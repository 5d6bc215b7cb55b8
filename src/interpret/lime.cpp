#include "tfdebug/interpret/lime.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "batching.hpp"
#include "lime_bins.hpp"
#include "pipelined_batches.hpp"
#include "random.hpp"
#include "tfdebug/core/error.hpp"
#include "weighted_ridge.hpp"

namespace tfdebug::interpret {

LimeAttribution lime_tabular(ForwardModel& model, std::span<const float> x, std::int64_t target,
                             const LimeOptions& options) {
  detail::check_example(model, x, target);
  const auto m = static_cast<std::int64_t>(x.size());
  const std::int64_t rows = detail::row_count(options.training, m, "the training data", true);
  if (options.samples < 2) throw Error("samples must be at least 2, got " + std::to_string(options.samples));
  if (!(options.alpha >= 0)) throw Error("alpha must be >= 0");
  const auto feature = [&](std::int64_t j) {
    std::vector<double> column(static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r)
      column[static_cast<std::size_t>(r)] = options.training[static_cast<std::size_t>(r * m + j)];
    return column;
  };
  std::vector<double> mean(static_cast<std::size_t>(m)), scale(static_cast<std::size_t>(m));
  for (std::int64_t j = 0; j < m && !options.discretize; ++j) {
    const std::vector<double> column = feature(j);
    double mu = 0;
    for (const double v : column) mu += v;
    mu /= static_cast<double>(rows);
    double var = 0;
    for (const double v : column) var += (v - mu) * (v - mu);
    mean[static_cast<std::size_t>(j)] = mu;
    const double sd = std::sqrt(var / static_cast<double>(rows));
    scale[static_cast<std::size_t>(j)] = sd > 0 ? sd : 1;  // sklearn's StandardScaler: 1 for a constant
  }

  // The kernel on the distance to sample 0 in the interpretable space.
  const double width =
      options.kernel_width > 0 ? options.kernel_width : 0.75 * std::sqrt(static_cast<double>(m));
  const auto kernel = [&](double d2) { return std::exp(-d2 / (2 * width * width)); };

  // Sample s (from stream s; sample 0 is x): its interpretable row and its model input, made in
  // order, a batch at a time; its kernel weight as it is made. With options.pipeline the samples
  // and the sums of the rows are made on a second thread while the model runs (Note [Points
  // beside the model], pipelined_batches.hpp); only the sums with the outputs and the solve wait.
  const auto n = static_cast<std::size_t>(options.samples);
  std::vector<double> outputs(n), weights(n);
  detail::PipelinedBatches batches(model, options.max_batch);
  const auto output = [&](std::int64_t s, std::span<const float> out) {
    outputs[static_cast<std::size_t>(s)] = out[static_cast<std::size_t>(target)];
  };
  const auto nothing = [](std::int64_t, std::int64_t) {};
  detail::RidgeFit fit;
  std::vector<double> data;
  if (options.discretize) {
    // The interpretable rows are 0/1 (1: the sample's bin is x's), kept as bits (5,000 rows of
    // 64 features: 40 KB, where the rows as feature indices took 1.3 MB, whose allocation cost
    // more than the ridge); sample 0 is all ones, so a row's squared distance is its number of
    // zeros: m + 1 kernel values.
    std::vector<double> by_zeros(static_cast<std::size_t>(m) + 1);
    for (std::size_t d = 0; d < by_zeros.size(); ++d) by_zeros[d] = kernel(static_cast<double>(d));
    const auto mm = static_cast<std::size_t>(m);
    const detail::QuartileBins bins(options.training, static_cast<std::size_t>(rows), mm,
                                    options.pipeline && options.samples > options.max_batch);
    std::vector<std::int32_t> x_bin(mm);
    for (std::size_t j = 0; j < mm; ++j) x_bin[j] = bins.bin_of(j, x[j]);
    const std::size_t words = (mm + 63) / 64;
    std::vector<std::uint64_t> bits(n * words);
    const detail::BinaryRows ones{bits, words};
    detail::BinaryRidge ridge(ones, mm, weights);
    batches.forward(
        options.samples, options.pipeline,
        [&](std::int64_t s, std::span<float> row) {
          const std::span<std::uint64_t> out(bits.data() + static_cast<std::size_t>(s) * words, words);
          std::size_t count = mm;
          if (s == 0) {
            std::copy(x.begin(), x.end(), row.begin());
            for (std::size_t j = 0; j < mm; ++j) out[j / 64] |= std::uint64_t{1} << (j % 64);
          } else {
            count = bins.draw(options.seed, static_cast<std::uint64_t>(s), x_bin, row, out);
          }
          weights[static_cast<std::size_t>(s)] = by_zeros[mm - count];
        },
        [&](std::int64_t begin, std::int64_t end) {
          ridge.add_rows(static_cast<std::size_t>(begin), static_cast<std::size_t>(end));
        },
        output,
        [&](std::int64_t begin, std::int64_t end) {
          ridge.add_outputs(outputs, static_cast<std::size_t>(begin), static_cast<std::size_t>(end));
        });
    fit = ridge.fit(options.alpha);
    if (options.keep_neighbourhood) {
      data.assign(n * mm, 0.0);
      for (std::size_t s = 0; s < n; ++s)
        for (std::size_t j = 0; j < mm; ++j)
          data[s * mm + j] = static_cast<double>((bits[s * words + j / 64] >> (j % 64)) & 1);
    }
  } else {
    // Each feature N(0, 1) * its training std + its training mean; interpretable: standardised.
    data.resize(n * static_cast<std::size_t>(m));
    batches.forward(
        options.samples, options.pipeline,
        [&](std::int64_t s, std::span<float> row) {
          double* z = data.data() + static_cast<std::size_t>(s * m);
          detail::Stream stream(options.seed, static_cast<std::uint64_t>(s));
          for (std::int64_t j = 0; j < m; ++j) {
            const auto jj = static_cast<std::size_t>(j);
            const double v = s == 0 ? x[jj] : stream.normal() * scale[jj] + mean[jj];
            row[jj] = s == 0 ? x[jj] : static_cast<float>(v);
            z[j] = (v - mean[jj]) / scale[jj];
          }
        },
        [&](std::int64_t begin, std::int64_t end) {  // the kernel weights (row 0 is in the first batch)
          for (auto s = static_cast<std::size_t>(begin); s < static_cast<std::size_t>(end); ++s) {
            double d2 = 0;
            for (std::int64_t j = 0; j < m; ++j) {
              const double d = data[s * static_cast<std::size_t>(m) + static_cast<std::size_t>(j)] -
                               data[static_cast<std::size_t>(j)];
              d2 += d * d;
            }
            weights[s] = kernel(d2);
          }
        },
        output, nothing);
    fit = detail::weighted_ridge(data, static_cast<std::size_t>(m), outputs, weights, options.alpha);
  }

  LimeAttribution a;
  a.method = "lime";
  a.shape = model.input_shape();
  a.values = fit.coefficients;
  a.intercept = fit.intercept;
  a.r2 = fit.r2;
  a.local_prediction = fit.local_prediction;
  a.output = outputs[0];
  a.evaluations = batches.evaluations();
  if (options.keep_neighbourhood) {
    a.data = std::move(data);
    a.weights = std::move(weights);
    a.outputs = std::move(outputs);
  }
  return a;
}

}  // namespace tfdebug::interpret
