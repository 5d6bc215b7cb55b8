#include "tfdebug/interpret/lime.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "batching.hpp"
#include "lime_bins.hpp"
#include "pipelined_batches.hpp"
#include "random.hpp"
#include "tfdebug/core/error.hpp"
#include "weighted_ridge.hpp"

namespace tfdebug::interpret {
namespace {

// Note [The bins of the last training data]: the quartile bins are a function of the training
// data alone, and a user explains row after row against the same data (upstream makes them once,
// in LimeTabularExplainer's constructor). Each thread keeps the last training data it binned (a
// copy, up to kMemoValues values) with its bins, and reuses them when the same values come again,
// compared bit for bit: for 200 rows of 64 features a 51 KB memcmp instead of ~0.3 ms of
// selections. The bins are the same either way, so the explanation is too.
constexpr std::size_t kMemoValues = std::size_t{1} << 22;  // 16 MB of floats

// Shared, so that a call made from inside the model (another explanation on this thread) cannot
// take the bins from under the call that is using them.
std::shared_ptr<const detail::QuartileBins> bins_of(std::span<const float> training, std::size_t rows,
                                                    std::size_t features, bool concurrent) {
  struct Memo {
    std::vector<float> training;
    std::size_t features = 0;
    std::shared_ptr<const detail::QuartileBins> bins;
  };
  thread_local Memo memo;
  const bool same = memo.bins != nullptr && memo.features == features &&
                    memo.training.size() == training.size() &&
                    std::memcmp(memo.training.data(), training.data(), training.size_bytes()) == 0;
  if (same) return memo.bins;
  memo.bins.reset();
  memo.training.clear();
  memo.bins = std::make_shared<const detail::QuartileBins>(training, rows, features, concurrent);
  memo.features = features;
  if (training.size() <= kMemoValues)
    memo.training.assign(training.begin(), training.end());
  else
    memo.features = 0;  // too large to keep a copy of: never matched
  return memo.bins;
}

}  // namespace

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
  // are made on a second thread while the model runs, and the products of the rows once the last
  // is made (Note [Points beside the model], pipelined_batches.hpp); only the sums with the
  // outputs and the solve wait for the model.
  const auto n = static_cast<std::size_t>(options.samples);
  // A second thread only where there is a second hardware thread to run it.
  const bool pipeline = options.pipeline && std::thread::hardware_concurrency() > 1;
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
    std::vector<double> by_ones(static_cast<std::size_t>(m) + 1);
    for (std::size_t k = 0; k < by_ones.size(); ++k)
      by_ones[k] = kernel(static_cast<double>(m) - static_cast<double>(k));
    const auto mm = static_cast<std::size_t>(m);
    const std::shared_ptr<const detail::QuartileBins> shared_bins =
        bins_of(options.training, static_cast<std::size_t>(rows), mm,
                pipeline && options.samples > options.max_batch);
    const detail::QuartileBins& bins = *shared_bins;
    std::vector<std::int32_t> x_bin(mm);
    for (std::size_t j = 0; j < mm; ++j) x_bin[j] = bins.bin_of(j, x[j]);
    const std::size_t words = (mm + 63) / 64;
    std::vector<std::uint64_t> bits(n * words);
    const detail::BinaryRows ones{bits, words};
    detail::BinaryRidge ridge(ones, mm, by_ones);
    batches.forward(
        options.samples, pipeline,
        [&](std::int64_t begin, std::int64_t end, std::span<float> points) {
          auto b = static_cast<std::size_t>(begin);
          const auto e = static_cast<std::size_t>(end);
          if (b == 0) {  // sample 0 is x: every bin is x's
            std::copy(x.begin(), x.end(), points.begin());
            for (std::size_t j = 0; j < mm; ++j) bits[j / 64] |= std::uint64_t{1} << (j % 64);
            ++b;
          }
          bins.draw(options.seed, b, e - b, x_bin, points.subspan((b - static_cast<std::size_t>(begin)) * mm),
                    std::span<std::uint64_t>(bits).subspan(b * words, (e - b) * words));
          for (std::size_t s = static_cast<std::size_t>(begin); s < e; ++s) {
            std::size_t count = 0;
            for (std::size_t w = 0; w < words; ++w) count += detail::count_ones(bits[s * words + w]);
            weights[s] = by_ones[count];
          }
        },
        [&](std::int64_t, std::int64_t end) {
          if (static_cast<std::size_t>(end) == n) ridge.add_products();  // every row is drawn
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
        options.samples, pipeline,
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
