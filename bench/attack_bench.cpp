// The cost of tfdebug::robust's PGD over the physical limit: the same forward and backward passes
// done by a bare LibTorch loop in the same process (clean forward, 10 steps of forward +
// cross-entropy backward with the sign step and projection, final forward). Prints the median
// time of each and the median of the paired ratios over interleaved rounds (the machine's speed
// drifts between rounds).
//
//   OPENBLAS_NUM_THREADS=1 attack_bench [--rounds N]
//
// The model: an MLP of the digits' shape (64-128-64-10, tanh), random weights; 256 examples in
// [0, 1], one batch of 256 per call.
#include <ATen/Parallel.h>
#include <torch/nn/functional/loss.h>
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

#include "tfdebug/robust/gradient_attacks.hpp"
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

}  // namespace

int main(int argc, char** argv) {
  int rounds = 15;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--rounds") == 0) rounds = std::atoi(argv[i + 1]);
  at::set_num_threads(1);
  torch::manual_seed(0);
  torch::nn::Sequential net(torch::nn::Linear(64, 128), torch::nn::Tanh(), torch::nn::Linear(128, 64),
                            torch::nn::Tanh(), torch::nn::Linear(64, 10));
  net->eval();
  tfdebug::torch::TorchModel model([&](const at::Tensor& b) { return net->forward(b); }, {64});
  constexpr std::int64_t kN = 256, kSteps = 10;
  const at::Tensor xt = at::rand({kN, 64});
  const at::Tensor yt = at::randint(10, {kN}, at::kLong);
  const std::vector<float> x(xt.data_ptr<float>(), xt.data_ptr<float>() + kN * 64);
  const std::vector<std::int64_t> y(yt.data_ptr<std::int64_t>(), yt.data_ptr<std::int64_t>() + kN);
  const tfdebug::robust::AttackSettings settings{.clip_min = 0, .clip_max = 1, .max_batch = kN, .seed = 1};
  const tfdebug::robust::PgdOptions options{.eps = 0.1, .step_size = 0.02, .steps = kSteps};

  const auto ours = [&] { (void)tfdebug::robust::pgd(model, x, y, settings, options); };
  const auto bare = [&] {
    {
      at::NoGradGuard no_grad;
      volatile float sink = net->forward(xt).data_ptr<float>()[0];
      (void)sink;
    }
    at::Tensor adv = (xt + (at::rand_like(xt) * 2 - 1) * 0.1).clamp(0, 1);
    for (std::int64_t s = 0; s < kSteps; ++s) {
      adv = adv.detach().set_requires_grad(true);
      torch::nn::functional::cross_entropy(
          net->forward(adv), yt, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum))
          .backward();
      at::NoGradGuard no_grad;
      adv = (xt + (adv + 0.02 * adv.grad().sign() - xt).clamp(-0.1, 0.1)).clamp(0, 1);
    }
    at::NoGradGuard no_grad;
    volatile std::int64_t sink = net->forward(adv).argmax(1).data_ptr<std::int64_t>()[0];
    (void)sink;
  };
  for (int w = 0; w < 3; ++w) {
    ours();
    bare();
  }
  std::vector<double> a, b, ratio;
  constexpr int kCalls = 10;
  for (int r = 0; r < rounds; ++r) {
    double ta = 0, tb = 0;
    const auto time_ours = [&] {
      ta = seconds([&] {
             for (int c = 0; c < kCalls; ++c) ours();
           }) /
           kCalls;
    };
    const auto time_bare = [&] {
      tb = seconds([&] {
             for (int c = 0; c < kCalls; ++c) bare();
           }) /
           kCalls;
    };
    if (r % 2 == 0) {
      time_ours();
      time_bare();
    } else {
      time_bare();
      time_ours();
    }
    a.push_back(ta);
    b.push_back(tb);
    ratio.push_back(ta / tb);
  }
  std::printf("%-34s %13s %13s %9s   (%d rounds of %d calls, medians; ratio: per-round ours / bare)\n",
              "attack", "tfdebug", "bare loop", "ratio", rounds, kCalls);
  std::printf("%-34s %10.3f ms %10.3f ms %8.3fx\n", "pgd-linf, 256 x 64, 10 steps", 1e3 * median(a),
              1e3 * median(b), median(ratio));
  return 0;
}
