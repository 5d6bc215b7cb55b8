// The Debugger (tfdebug::ide) on the LibTorch adapter, with a small model of the test's own: a
// two-layer net whose log(h + shift) goes out of its domain at step 3. Breakpoints stop the step
// in forward, backward and the optimizer, with the op's inputs, the parameters and their
// gradients readable through the stop; stepping moves op by op, module by module, step by step.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <deque>
#include <string>
#include <vector>

#include "tfdebug/ide/debugger.hpp"
#include "tfdebug/session/session.hpp"
#include "tfdebug/torch/attach.hpp"

namespace {

struct NetImpl : ::torch::nn::Module {
  NetImpl() {
    enc = register_module("enc", ::torch::nn::Linear(4, 8));
    dec = register_module("dec", ::torch::nn::Linear(8, 2));
  }
  ::torch::Tensor forward(const ::torch::Tensor& x, double shift) {
    return dec(::torch::log(::torch::relu(enc(x)) + shift));
  }
  ::torch::nn::Linear enc{nullptr}, dec{nullptr};
};
TORCH_MODULE(Net);

using namespace tfdebug;
using tfdebug::ide::Resume;

struct Seen {
  std::string text;  // "step phase module op | reason"
};

class Trainer {
 public:
  explicit Trainer(ide::Debugger::Handler handler, bool optimizer_ops = false) {
    at::set_num_threads(1);
    ::torch::manual_seed(7);
    RunConfig run;
    run.tier = Tier::diagnose;
    session_ = std::make_unique<Session>(run);
    debugger_ = std::make_shared<ide::Debugger>(std::move(handler));
    session_->add_sink(debugger_);
    optimizer_ops_ = optimizer_ops;
  }
  ide::Debugger& debugger() { return *debugger_; }
  void run(std::int64_t steps) {
    ::torch::optim::SGD optimizer(net_->parameters(), 0.01);
    tfdebug::torch::AttachOptions options;
    options.optimizer_ops = optimizer_ops_;
    auto debug = tfdebug::torch::attach(*session_, *net_, options);
    const auto x = ::torch::rand({3, 4});
    const auto y = ::torch::zeros({3, 2});
    for (std::int64_t step = 0; step < steps && !debugger_->aborted(); ++step) {
      debug.step_begin(step);
      optimizer.zero_grad();
      auto loss = ::torch::mse_loss(net_->forward(x, step == 3 ? -100.0 : 1.0), y);
      loss.backward();
      optimizer.step();
      debug.step_end(step, loss.item<double>());
    }
  }
  Net net_;
  std::unique_ptr<Session> session_;
  std::shared_ptr<ide::Debugger> debugger_;
  bool optimizer_ops_ = false;
};

std::string place(const ide::Stop& s) {
  return std::to_string(s.step()) + " " + std::string(phase_name(s.phase())) + " " + s.module() + " " +
         s.op();
}

TEST(TorchDebugger, NanStopsAtTheLogWithItsNegativeInputTheParametersAndTheirGradients) {
  std::vector<std::string> stops;
  double input_min = 0;
  std::int64_t output_nan = 0;
  std::vector<std::int64_t> weight_shape;
  bool gradient = false, names_complete = false;
  Trainer trainer([&](const ide::Stop& s) {
    stops.push_back(place(s) + " | " + s.reason().kind);
    input_min = compute_stats(*s.tensor("input0")).min;
    output_nan = compute_stats(*s.tensor("output")).nan;
    const auto w = s.tensor("enc.weight");
    if (w) weight_shape.assign(w->shape().begin(), w->shape().end());
    gradient = s.tensor("dec.weight.grad").has_value();
    const auto names = s.tensor_names();
    names_complete = std::find(names.begin(), names.end(), "dec.bias.grad") != names.end();
    return Resume::continue_run;
  });
  trainer.debugger().add(ide::parse_breakpoint("nan"));
  trainer.run(5);
  // log(relu(.) - 100) is NaN everywhere at step 3; nothing later is a producer of a NaN (the ops
  // after it have NaN inputs).
  ASSERT_EQ(stops.size(), 1u) << ::testing::PrintToString(stops);
  // log reads no parameter and runs in Net::forward itself: the top level (module "").
  EXPECT_EQ(stops[0], "3 forward  aten::log | nan");
  EXPECT_LE(input_min, -99.0);
  EXPECT_EQ(output_nan, 3 * 8);
  EXPECT_EQ(weight_shape, (std::vector<std::int64_t>{8, 4}));
  EXPECT_TRUE(gradient);  // from step 2's backward
  EXPECT_TRUE(names_complete);
}

TEST(TorchDebugger, ModuleBreakpointsInBackwardAndSteppingByModuleAndStep) {
  std::vector<std::string> stops;
  std::deque<Resume> answers = {Resume::next_op, Resume::next_module, Resume::next_module,
                                Resume::finish_step, Resume::abort};
  Trainer trainer([&](const ide::Stop& s) {
    stops.push_back(place(s) + " | " + s.reason().text);
    const Resume r = answers.front();
    answers.pop_front();
    return r;
  });
  trainer.debugger().add(ide::parse_breakpoint("module dec backward once"));
  trainer.run(3);
  ASSERT_EQ(stops.size(), 5u) << ::testing::PrintToString(stops);
  // Backward enters dec first (the loss's gradient flows through dec before enc).
  EXPECT_EQ(stops[0].rfind("0 backward dec ", 0), 0u) << stops[0];
  EXPECT_NE(stops[0].find("entered dec (backward)"), std::string::npos) << stops[0];
  EXPECT_EQ(stops[1].rfind("0 backward ", 0), 0u) << stops[1];
  EXPECT_NE(stops[1].find("| next op"), std::string::npos) << stops[1];
  // The next modules of backward ops after dec's: log's and relu's backward (the top level), enc.
  EXPECT_EQ(stops[2].rfind("0 backward  ", 0), 0u) << stops[2];
  EXPECT_NE(stops[2].find("next module: (top level)"), std::string::npos) << stops[2];
  EXPECT_EQ(stops[3].rfind("0 backward enc ", 0), 0u) << stops[3];
  EXPECT_NE(stops[3].find("next module: enc"), std::string::npos) << stops[3];
  // To the end of the step: the first op of step 1.
  EXPECT_EQ(stops[4].rfind("1 forward enc ", 0), 0u) << stops[4];
  EXPECT_NE(stops[4].find("step 0 ended"), std::string::npos) << stops[4];
  EXPECT_TRUE(trainer.debugger().aborted());
}

TEST(TorchDebugger, OptimizerOpsAndStatisticConditionsStop) {
  std::vector<std::string> stops;
  Trainer trainer(
      [&](const ide::Stop& s) {
        stops.push_back(place(s) + " | " + s.reason().text);
        return Resume::continue_run;
      },
      /*optimizer_ops=*/true);
  trainer.debugger().add(ide::parse_breakpoint("phase optimizer"));
  trainer.debugger().add(ide::parse_breakpoint("op aten::add* forward if abs_max > 50"));
  trainer.run(3);
  // One stop at each step's first optimizer op; relu(.) + 1 stays below 50 (no add stop).
  ASSERT_EQ(stops.size(), 3u) << ::testing::PrintToString(stops);
  for (std::int64_t step = 0; step < 3; ++step) {
    EXPECT_EQ(stops[std::size_t(step)].rfind(std::to_string(step) + " optimizer ", 0), 0u)
        << stops[std::size_t(step)];
  }
  EXPECT_EQ(trainer.debugger().breakpoints()[1].hits, 0);
}

}  // namespace
