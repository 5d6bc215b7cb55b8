// A parameter no loss depends on (rule unused_parameters, docs/rules.md): a layer built in the
// constructor and never called in the forward is reported in both tiers, once 100 steps with a
// backward went by without its gradient; a frozen layer, a sparse embedding (whose gradients the
// adapter does not hand to the rules) and a task head used once in 20 steps are not.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/nn/functional/loss.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/sgd.h>

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "findings_text.hpp"
#include "tfdebug/session/session.hpp"
#include "tfdebug/torch/attach.hpp"

namespace {

using tfdebug::Finding;
using tfdebug::Tier;

struct Net : ::torch::nn::Module {
  Net()
      : embed(register_module("embed",
                              ::torch::nn::Embedding(::torch::nn::EmbeddingOptions(12, 8).sparse(true)))),
        fc(register_module("fc", ::torch::nn::Linear(8, 16))),
        spare(register_module("spare", ::torch::nn::Linear(16, 16))),  // never called
        frozen(register_module("frozen", ::torch::nn::Linear(16, 16))),
        head(register_module("head", ::torch::nn::Linear(16, 3))),
        rare(register_module("rare", ::torch::nn::Linear(16, 3))) {
    for (auto& p : frozen->parameters()) p.set_requires_grad(false);
  }
  at::Tensor forward(const at::Tensor& tokens, bool rare_task) {
    const auto h = ::torch::relu(frozen->forward(::torch::relu(fc->forward(embed->forward(tokens)))));
    return rare_task ? rare->forward(h) : head->forward(h);
  }
  ::torch::nn::Embedding embed;
  ::torch::nn::Linear fc, spare, frozen, head, rare;
};

class UnusedParameters : public ::testing::TestWithParam<Tier> {};

TEST_P(UnusedParameters, ALayerNeverCalledIsReportedAndNoOtherIs) {
  at::set_num_threads(1);
  ::torch::manual_seed(1);
  Net net;
  std::vector<at::Tensor> dense, sparse;
  for (const auto& p : net.named_parameters())
    (p.key() == "embed.weight" ? sparse : dense).push_back(p.value());
  ::torch::optim::SGD opt(dense, ::torch::optim::SGDOptions(0.05).momentum(0.9));
  ::torch::optim::SGD sparse_opt(sparse, 0.05);
  tfdebug::RunConfig run;
  run.tier = GetParam();
  tfdebug::Session session(run);
  {
    auto debug = tfdebug::torch::attach(session, net);
    for (std::int64_t step = 0; step < 130; ++step) {
      debug.step(step, [&] {
        opt.zero_grad();
        sparse_opt.zero_grad();
        const auto tokens = ::torch::randint(12, {32});
        const auto loss =
            ::torch::nn::functional::cross_entropy(net.forward(tokens, step % 20 == 7), tokens.remainder(3));
        loss.backward();
        opt.step();
        sparse_opt.step();
        return loss.item<double>();
      });
    }
  }
  const auto findings = session.finish().findings;
  std::set<std::string> unused;
  for (const Finding& f : findings) {
    if (f.rule != "unused_parameters") continue;
    unused.insert(f.op);
    EXPECT_EQ(f.module, "spare") << f.message;
    EXPECT_EQ(f.step, 99) << f.message;  // the 100th step with a backward, from step 0
    EXPECT_EQ(f.evidence_value("since_step"), 0) << f.message;
  }
  EXPECT_EQ(unused, (std::set<std::string>{"spare.weight", "spare.bias"}))
      << tfdebug::testing::findings_text(findings);
}

INSTANTIATE_TEST_SUITE_P(Tiers, UnusedParameters, ::testing::Values(Tier::watch, Tier::diagnose),
                         [](const ::testing::TestParamInfo<Tier>& param) {
                           return param.param == Tier::watch ? "watch" : "diagnose";
                         });

}  // namespace
