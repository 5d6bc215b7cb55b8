// README.md's "Debug a LibTorch training loop", as a whole program: an MLP trained with SGD and
// momentum whose forward takes log(h - shift); from step 30 the shift makes the argument negative.
// tfdebug, attached in its default tier (watch), replays that step in diagnose and names the op
// that produced the first NaN: aten::log, at the top level of the model, forward, step 30.
//
//   attach_training [RUN_DIR]     # exit 1: an error-level finding was made
#include <ATen/Parallel.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>

#include <cstdio>
#include <memory>
#include <string>

#include <tfdebug/session/console_sink.hpp>
#include <tfdebug/session/session.hpp>
#include <tfdebug/torch/attach.hpp>

struct Mlp : torch::nn::Module {
  Mlp()
      : fc1(register_module("fc1", torch::nn::Linear(16, 64))),
        fc2(register_module("fc2", torch::nn::Linear(64, 4))) {}
  at::Tensor forward(const at::Tensor& x, double shift) {
    return fc2(at::log(at::relu(fc1(x)) + 1.0 - shift));  // shift >= 1 reaches log(negative)
  }
  torch::nn::Linear fc1, fc2;
};

int main(int argc, char** argv) {
  at::set_num_threads(1);
  torch::manual_seed(1);
  auto model = std::make_shared<Mlp>();
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05).momentum(0.9));
  const std::int64_t steps = 40;

  tfdebug::RunConfig config;
  if (argc > 1) config.run_dir = argv[1];  // report.json, flight_recorder.json
  tfdebug::Session session(config);
  session.add_sink(std::make_shared<tfdebug::ConsoleSink>());
  auto debug = tfdebug::torch::attach(session, *model);  // no change to the model
  for (std::int64_t step = 0; step < steps; ++step) {
    auto inputs = torch::randn({32, 16});                  // drawn outside the step: the
    auto targets = torch::randint(0, 4, {32}, at::kLong);  // replay trains on the same batch
    debug.step(step, [&] {
      auto logits = model->forward(inputs, step >= 30 ? 5.0 : 0.0);
      auto loss = torch::nn::functional::cross_entropy(logits, targets);
      optimizer.zero_grad();
      loss.backward();
      optimizer.step();
      return loss;
    });
  }
  const tfdebug::RunSummary summary = session.finish();
  std::printf("replays: %lld\n", static_cast<long long>(debug.counters().replays));
  for (const tfdebug::Finding& f : summary.findings) {
    if (f.rule == "nonfinite") {
      std::printf("first NaN: %s in '%s', %s, step %lld\n", f.op.c_str(), f.module.c_str(),
                  std::string(tfdebug::phase_name(f.phase)).c_str(), static_cast<long long>(f.step));
      return 1;
    }
  }
  return 0;
}
