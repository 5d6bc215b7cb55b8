// The cost of tfdebug::interpret's methods over the physical limit: the same number of model
// evaluations done by a bare LibTorch loop in the same process (the same batches, the same
// forward and backward passes, nothing else). Prints, per method, the median time of each and
// the median of the paired ratios over the rounds (the machine's speed drifts between rounds);
// then the median of the paired ratios of the process's CPU time (every thread's: LIME's pipeline
// uses two);
// then the peak memory of Integrated Gradients with 20,000 steps, bounded by max_batch.
//
//   OPENBLAS_NUM_THREADS=1 interpret_bench [--rounds N] [--only METHOD]
//
// --only METHOD: only that row (its name as printed, e.g. lime or "lime (wider MLP)"), or
// "memory" for the memory run; repeat it for several.
//
// The model: an MLP of the digits' shape (64-128-64-10, tanh), random weights; for the memory
// run, 12,288 inputs (a 3x64x64 image flattened).
#include <ATen/Parallel.h>
#include <sys/resource.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tfdebug/interpret/gradient_attribution.hpp"
#include "tfdebug/interpret/lime.hpp"
#include "tfdebug/interpret/shapley.hpp"
#include "tfdebug/torch/interpret_model.hpp"

namespace {

using Clock = std::chrono::steady_clock;
namespace ti = tfdebug::interpret;

// The process's CPU time, every thread's (LIME draws its samples on a second thread).
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Wall and CPU seconds of f().
std::pair<double, double> seconds_and_cpu(const std::function<void()>& f) {
  const double cpu = cpu_seconds();
  const auto start = Clock::now();
  f();
  return {std::chrono::duration<double>(Clock::now() - start).count(), cpu_seconds() - cpu};
}

double seconds(const std::function<void()>& f) {
  return seconds_and_cpu(f).first;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

torch::nn::Sequential mlp(std::int64_t inputs, std::int64_t width = 128) {
  torch::nn::Sequential net(torch::nn::Linear(inputs, width), torch::nn::Tanh(), torch::nn::Linear(width, 64),
                            torch::nn::Tanh(), torch::nn::Linear(64, 10));
  net->eval();
  return net;
}

// Gradients of output `target` at the rows of `points` [n, d], in batches of `batch`.
void bare_gradients(torch::nn::Sequential& net, const at::Tensor& points, std::int64_t target,
                    std::int64_t batch) {
  for (std::int64_t start = 0; start < points.size(0); start += batch) {
    at::Tensor x =
        points.slice(0, start, std::min(points.size(0), start + batch)).clone().set_requires_grad(true);
    net->forward(x).select(1, target).sum().backward();
    volatile float sink = x.grad().data_ptr<float>()[0];
    (void)sink;
  }
}

void bare_forward(torch::nn::Sequential& net, const at::Tensor& points, std::int64_t batch) {
  at::NoGradGuard no_grad;
  for (std::int64_t start = 0; start < points.size(0); start += batch) {
    const at::Tensor y = net->forward(points.slice(0, start, std::min(points.size(0), start + batch)));
    volatile float sink = y.data_ptr<float>()[0];
    (void)sink;
  }
}

struct Row {
  const char* method;
  std::vector<double> ours, bare, ratio, cpu_ratio;
};

void report(const Row& r) {
  if (r.ratio.empty()) return;
  std::printf("%-24s %10.3f ms %10.3f ms %8.3fx %8.3fx\n", r.method, 1e3 * median(r.ours),
              1e3 * median(r.bare), median(r.ratio), median(r.cpu_ratio));
}

long peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 15;
  std::vector<std::string> only;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--only") == 0) only.emplace_back(argv[i + 1]);
  }
  const auto wanted = [&](const char* method) {
    return only.empty() || std::find(only.begin(), only.end(), method) != only.end();
  };
  at::set_num_threads(1);
  torch::manual_seed(0);
  torch::nn::Sequential net = mlp(64);
  tfdebug::torch::TorchModel model([&](const at::Tensor& b) { return net->forward(b); }, {64});
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(0, 16);
  std::vector<float> x(64);
  for (float& v : x) v = uniform(rng);
  const at::Tensor xt = at::from_blob(x.data(), {1, 64}).clone();
  const std::int64_t target = 3;

  // Integrated Gradients: 50 nodes in one batch of 50, then f(x) and f(0).
  Row ig{"integrated-gradients", {}, {}, {}, {}};
  ti::IntegratedGradientsOptions igo;
  igo.max_batch = 50;
  const ti::Rule rule = ti::quadrature(ti::Quadrature::gauss_legendre, 50);
  const at::Tensor alphas =
      at::from_blob(const_cast<double*>(rule.nodes.data()), {50, 1}, at::kDouble).to(at::kFloat);
  // SmoothGrad: 50 noisy copies in one batch, then f(x).
  Row sg{"smoothgrad", {}, {}, {}, {}};
  ti::SmoothGradOptions sgo;
  sgo.samples = 50;
  sgo.stdev = 0.5;
  sgo.max_batch = 50;
  // KernelSHAP: 64 features, shap's auto budget (2 x 64 + 2048 = 2176 coalitions) over 10
  // background rows, 256 rows a call: 21,780 forward rows, then the 63 x 63 least squares.
  Row ks{"kernel-shap", {}, {}, {}, {}};
  ti::ShapleyOptions kso;
  for (int i = 0; i < 10 * 64; ++i) kso.background.push_back(uniform(rng));
  kso.max_batch = 256;
  const at::Tensor background = at::from_blob(kso.background.data(), {10, 64}).clone();
  const std::int64_t coalitions = 2 * 64 + 2048 + 2;
  const at::Tensor masks = at::rand({coalitions, 1, 64}) < 0.5;

  // Per method: a warm-up, then `rounds` pairs of `calls` calls each, the order alternating so
  // that neither side always runs first.
  const auto measure = [&](Row& row, int calls, const std::function<void()>& ours,
                           const std::function<void()>& bare) {
    if (!wanted(row.method)) return;
    for (int w = 0; w < 3; ++w) {
      ours();
      bare();
    }
    for (int r = 0; r < rounds; ++r) {
      std::pair<double, double> a, b;  // wall and CPU seconds of a call
      const auto time_ours = [&] {
        a = seconds_and_cpu([&] {
          for (int c = 0; c < calls; ++c) ours();
        });
      };
      const auto time_bare = [&] {
        b = seconds_and_cpu([&] {
          for (int c = 0; c < calls; ++c) bare();
        });
      };
      if (r % 2 == 0) {
        time_ours();
        time_bare();
      } else {
        time_bare();
        time_ours();
      }
      row.ours.push_back(a.first / calls);
      row.bare.push_back(b.first / calls);
      row.ratio.push_back(a.first / b.first);
      row.cpu_ratio.push_back(a.second / b.second);
    }
  };
  measure(
      ig, 20, [&] { (void)ti::integrated_gradients(model, x, target, igo); },
      [&] {
        bare_gradients(net, alphas * xt, target, 50);
        bare_forward(net, at::cat({xt, at::zeros_like(xt)}), 50);
      });
  measure(
      sg, 20, [&] { (void)ti::smoothgrad(model, x, target, sgo); },
      [&] {
        bare_gradients(net, xt + 0.5 * at::randn({50, 64}), target, 50);
        bare_forward(net, xt, 1);
      });
  measure(
      ks, 2, [&] { (void)ti::kernel_shap(model, x, target, kso); },
      [&] {
        // The same rows: each coalition's mask over every background row.
        const at::Tensor rows = at::where(masks, xt.unsqueeze(0), background.unsqueeze(0)).reshape({-1, 64});
        bare_forward(net, rows, 256);
      });
  // LIME: 5,000 samples around x from 200 training rows' quartile bins, 256 rows a call, then
  // the kernel weights and the 64 x 64 weighted ridge; the defaults: the samples drawn on a second
  // thread while the model runs (LimeOptions::pipeline), the bins of the training data made on
  // the first call and kept (Note [The bins of the last training data]).
  Row li{"lime", {}, {}, {}, {}};
  ti::LimeOptions lo;
  for (int i = 0; i < 200 * 64; ++i) lo.training.push_back(uniform(rng));
  lo.max_batch = 256;
  const at::Tensor lime_rows = at::rand({5000, 64}) * 16;
  measure(
      li, 2, [&] { (void)ti::lime_tabular(model, x, target, lo); },
      [&] { bare_forward(net, lime_rows, 256); });
  // The same on the calling thread alone (pipeline = false).
  Row l1{"lime (one thread)", {}, {}, {}, {}};
  ti::LimeOptions serial = lo;
  serial.pipeline = false;
  measure(
      l1, 2, [&] { (void)ti::lime_tabular(model, x, target, serial); },
      [&] { bare_forward(net, lime_rows, 256); });
  // The same with other training data on every call (two sets, alternating): the bins are made
  // on every call.
  Row lb{"lime (bins every call)", {}, {}, {}, {}};
  ti::LimeOptions other = lo;
  other.training[0] += 1;
  bool flip = false;
  measure(
      lb, 2,
      [&] {
        flip = !flip;
        (void)ti::lime_tabular(model, x, target, flip ? other : lo);
      },
      [&] { bare_forward(net, lime_rows, 256); });
  // The same on a model that costs more per row (a 64-2048-64-10 MLP, ~0.27 MFLOP a row): LIME's
  // own sampling and fit are a fixed cost per sample.
  Row lw{"lime (wider MLP)", {}, {}, {}, {}};
  torch::nn::Sequential wide = mlp(64, 2048);
  tfdebug::torch::TorchModel wide_model([&](const at::Tensor& b) { return wide->forward(b); }, {64});
  measure(
      lw, 2, [&] { (void)ti::lime_tabular(wide_model, x, target, lo); },
      [&] { bare_forward(wide, lime_rows, 256); });

  std::printf("%-24s %13s %13s %9s %9s   (%d rounds, medians; ratios: per-round ours / bare)\n", "method",
              "tfdebug", "bare loop", "ratio", "CPU", rounds);
  report(ig);
  report(sg);
  report(ks);
  report(li);
  report(l1);
  report(lb);
  report(lw);

  if (!only.empty() && !wanted("memory")) return 0;
  // Memory: IG with 20,000 steps of a 12,288-value input would hold 983 MB of points at once
  // (Captum's internal_batch_size=None); in batches of 64 it holds 64.
  torch::nn::Sequential big = mlp(12288);
  tfdebug::torch::TorchModel image([&](const at::Tensor& b) { return big->forward(b); }, {12288});
  std::vector<float> picture(12288, 0.5f);
  const long before = peak_rss_mb();
  ti::IntegratedGradientsOptions many;
  many.steps = 20000;
  many.max_batch = 64;
  const double t = seconds([&] { (void)ti::integrated_gradients(image, picture, 0, many); });
  std::printf(
      "\nintegrated-gradients, 20,000 steps x 12,288 values, max_batch 64: %.2f s, peak RSS %ld MB "
      "(%ld MB before; all points at once: 983 MB)\n",
      t, peak_rss_mb(), before);
  return 0;
}
