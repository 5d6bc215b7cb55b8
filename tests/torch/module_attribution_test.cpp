// One decision of an op's module (Note [Module of an op] in src/torch/module_attribution.hpp):
// on the demo model, every op the adapter observes is named with the module under which the op
// profiler, watching the same steps, files the same op. A finding and a profile row agree.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <string>
#include <tuple>

#include "demo_model.hpp"
#include "tfdebug/torch/attach.hpp"
#include "tfdebug/torch/profiler.hpp"

namespace {

using namespace tfdebug;
using Key = std::tuple<std::string, std::string, Phase>;  // op, module, phase

class Recorder : public ObservationSink {
 public:
  void begin_step(std::int64_t) override {}
  Verdict observe(const Observation& o) override {
    if (o.role != Role::output) return std::nullopt;
    const std::lock_guard lock(mutex);
    seen.emplace(std::string(o.op), std::string(o.module), o.phase);
    return std::nullopt;
  }
  void end_step(std::int64_t, std::optional<double>) override {}
  Tier tier() const noexcept override { return Tier::diagnose; }
  bool should_stop() const noexcept override { return false; }
  std::mutex mutex;
  std::set<Key> seen;
};

TEST(ModuleAttribution, TheAdapterAndTheProfilerNameTheSameModuleForEveryOp) {
  at::set_num_threads(1);
  demo::DemoTrainer trainer(demo::DemoConfig{});
  Recorder recorder;
  tfdebug::torch::ProfilerOptions options;
  options.memory = false;
  tfdebug::torch::Profiler profiler(trainer.model(), options);
  {
    auto debug = tfdebug::torch::attach(recorder, trainer.model());
    for (std::int64_t step = 0; step < 2; ++step) {
      profiler.step_begin(step);
      debug.step_begin(step);
      const double loss = trainer.train_step();
      debug.step_end(step, loss);
      profiler.step_end(step);
    }
  }
  const profile::OpProfile p = profiler.stop();
  std::set<Key> rows;
  for (const auto& row : p.ops) rows.emplace(row.op, row.module, row.phase);
  ASSERT_GT(recorder.seen.size(), 50u);
  for (const Key& k : recorder.seen) {
    if (std::get<2>(k) == Phase::optimizer) continue;  // not intercepted (Note [Optimizer])
    std::string elsewhere;
    for (const Key& r : rows)
      if (std::get<0>(r) == std::get<0>(k) && std::get<2>(r) == std::get<2>(k))
        elsewhere += " '" + std::get<1>(r) + "'";
    EXPECT_TRUE(rows.contains(k)) << std::get<0>(k) << " in '" << std::get<1>(k) << "' ("
                                  << phase_name(std::get<2>(k)) << "): the profiler files it under"
                                  << elsewhere;
  }
  // The attention scores and the mix (q k^T, then the weights times v) read no parameter: they run
  // in the attention module, not in attn.k or attn.v, the last layers read.
  EXPECT_TRUE(recorder.seen.contains(Key{"aten::matmul", "blocks.0.attn", Phase::forward}));
  EXPECT_TRUE(recorder.seen.contains(Key{"aten::softmax", "blocks.0.attn", Phase::forward}));
  EXPECT_FALSE(recorder.seen.contains(Key{"aten::softmax", "blocks.0.attn.k", Phase::forward}));
  // The MLP's activation runs in the MLP, whose fc1 it follows.
  EXPECT_TRUE(recorder.seen.contains(Key{"aten::gelu", "blocks.0.mlp", Phase::forward}) ||
              recorder.seen.contains(Key{"aten::relu", "blocks.0.mlp", Phase::forward}));
}

}  // namespace
