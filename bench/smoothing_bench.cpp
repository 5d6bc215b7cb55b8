// The cost of tfdebug::robust's CERTIFY (randomized smoothing) over the physical limit: the same
// n0 + n forward passes done by a bare LibTorch loop in the same process — the same batches of
// noisy copies, argmax and counts, nothing else (its noise from at::randn). Prints the median
// time of each and the median of the paired ratios over interleaved rounds (the order alternating).
//
//   OPENBLAS_NUM_THREADS=1 smoothing_bench [--rounds N] [--n N]
//
// The model: an MLP of the digits' shape (64-128-64-10, tanh), random weights, one thread.
#include <ATen/Parallel.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/linear.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "tfdebug/robust/smoothing.hpp"
#include "tfdebug/torch/interpret_model.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double seconds(const std::function<void()>& f) {
  const auto start = Clock::now();
  f();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// n0 + n noisy copies of x in batches of `batch`: forward, argmax, counts.
std::int64_t bare_certify(torch::nn::Sequential& net, const at::Tensor& x, double sigma, std::int64_t n0,
                          std::int64_t n, std::int64_t batch) {
  at::NoGradGuard guard;
  std::int64_t top = 0;
  for (const std::int64_t total : {n0, n}) {
    at::Tensor counts = at::zeros({10}, at::kLong);
    for (std::int64_t start = 0; start < total; start += batch) {
      const std::int64_t rows = std::min(batch, total - start);
      const at::Tensor points = x.unsqueeze(0) + sigma * at::randn({rows, x.size(0)});
      counts += at::bincount(net->forward(points).argmax(1), {}, 10);
    }
    top = counts.argmax().item<std::int64_t>();
  }
  return top;
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 15;
  std::int64_t n = 100000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--n") == 0) n = std::atoll(argv[i + 1]);
  }
  at::set_num_threads(1);
  torch::manual_seed(0);
  torch::nn::Sequential net(torch::nn::Linear(64, 128), torch::nn::Tanh(), torch::nn::Linear(128, 64),
                            torch::nn::Tanh(), torch::nn::Linear(64, 10));
  net->eval();
  tfdebug::torch::TorchModel model([&](const at::Tensor& b) { return net->forward(b); }, {64});
  const at::Tensor x = at::rand({64});
  std::vector<float> xv(x.data_ptr<float>(), x.data_ptr<float>() + 64);
  tfdebug::robust::SmoothingOptions o;
  o.n = n;
  o.max_batch = 1000;
  std::vector<double> ours, bare, ratios;
  std::int64_t sink = 0;
  sink +=
      tfdebug::robust::certify(model, xv, o).count + bare_certify(net, x, o.sigma, o.n0, o.n, o.max_batch);
  for (int r = 0; r < rounds; ++r) {
    double a = 0, b = 0;
    const auto run_ours = [&] { a = seconds([&] { sink += tfdebug::robust::certify(model, xv, o).count; }); };
    const auto run_bare = [&] {
      b = seconds([&] { sink += bare_certify(net, x, o.sigma, o.n0, o.n, o.max_batch); });
    };
    if (r % 2 == 0) {
      run_ours();
      run_bare();
    } else {
      run_bare();
      run_ours();
    }
    ours.push_back(a);
    bare.push_back(b);
    ratios.push_back(a / b);
  }
  std::printf("certify, n0 %lld + n %lld forward rows of a 64-128-64-10 MLP in batches of %lld, %d rounds\n",
              static_cast<long long>(o.n0), static_cast<long long>(o.n), static_cast<long long>(o.max_batch),
              rounds);
  std::printf("%-10s %10.1f ms %10.1f ms %8.3fx (median of paired ratios; min %.3f, max %.3f)\n", "certify",
              1e3 * median(ours), 1e3 * median(bare), median(ratios),
              *std::min_element(ratios.begin(), ratios.end()),
              *std::max_element(ratios.begin(), ratios.end()));
  return sink == 42 ? 1 : 0;
}
