// tfdebug::torch::Profiler on the demo model: FLOPs of the linear layers against hand-computed
// values, modules and phases of ops, the memory report, and the trace's nesting.
#include "tfdebug/torch/profiler.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "demo_model.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/profile/flops.hpp"

namespace tfdebug::torch {
namespace {

bool is_matrix_product(const std::string& op) {
  return op == "aten::mm" || op == "aten::addmm" || op == "aten::bmm" || op == "aten::matmul" ||
         op == "aten::linear" || op == "aten::baddbmm";
}

struct Profiled {
  profile::OpProfile profile;
  demo::DemoConfig config;
};

const Profiled& profiled() {
  static const Profiled* result = [] {
    auto* r = new Profiled();
    r->config.steps = 5;
    demo::DemoTrainer trainer(r->config);
    trainer.train_step();  // warm-up: Adam's state is allocated in the first step
    Profiler profiler(trainer.model());
    for (std::int64_t step = 1; step <= 3; ++step) {
      profiler.step_begin(step);
      trainer.train_step();
      profiler.step_end(step);
    }
    r->profile = profiler.stop();
    return r;
  }();
  return *result;
}

// Matrix-product FLOPs per step of `module` in `phase`.
double matmul_flops(const profile::OpProfile& p, const std::string& module, const std::string& phase) {
  double sum = 0;
  for (const auto& row : p.ops)
    if (row.module == module && row.phase == phase && is_matrix_product(row.op)) sum += row.flops;
  return sum / 3;
}

TEST(Profiler, LinearLayerFlopsMatchHandComputedValues) {
  const auto& p = profiled().profile;
  // 32 sequences of 16 tokens = 512 rows; d_model 32, d_ff 64, vocab 16.
  // q, k, v, o: 2 * 512 * 32 * 32 = 1048576; fc1 and fc2: 2 * 512 * 32 * 64 = 2097152;
  // head: 2 * 512 * 32 * 16 = 524288.
  for (const char* block : {"blocks.0", "blocks.1"}) {
    for (const char* proj : {".attn.q", ".attn.k", ".attn.v", ".attn.o"})
      EXPECT_EQ(matmul_flops(p, std::string(block) + proj, "forward"), 1048576.0) << block << proj;
    EXPECT_EQ(matmul_flops(p, std::string(block) + ".mlp.fc1", "forward"), 2097152.0);
    EXPECT_EQ(matmul_flops(p, std::string(block) + ".mlp.fc2", "forward"), 2097152.0);
  }
  EXPECT_EQ(matmul_flops(p, "head", "forward"), 524288.0);
  // The attention's own products run in blocks.N.attn: scores [32,4,16,8] x [32,4,8,16] and the
  // mix [32,4,16,16] x [32,4,16,8], each 2 * 128 * 16 * 16 * 8 = 524288.
  EXPECT_EQ(matmul_flops(p, "blocks.0.attn", "forward"), 2 * 524288.0);
  // Backward: the input gradient and the weight gradient, each as many FLOPs as the forward.
  EXPECT_EQ(matmul_flops(p, "blocks.0.mlp.fc1", "backward"), 2 * 2097152.0);
  EXPECT_EQ(matmul_flops(p, "head", "backward"), 2 * 524288.0);
}

TEST(Profiler, EveryStepEveryPhaseIsSeen) {
  const auto& p = profiled().profile;
  EXPECT_EQ(p.step_ns.size(), 3u);
  std::set<std::string> phases;
  for (const auto& row : p.ops) phases.insert(row.phase);
  EXPECT_EQ(phases, (std::set<std::string>{"forward", "backward", "optimizer"}));
  // Adam updates each of the model's 38 parameter tensors (2 embeddings, 16 per block, ln_f and
  // head 2 each) with one addcdiv_ per step.
  std::uint64_t addcdiv = 0;
  for (const auto& row : p.ops)
    if (row.op == "aten::addcdiv_" && row.phase == "optimizer") addcdiv += row.calls;
  EXPECT_EQ(addcdiv, 3u * 38u);
  // Self times add up to no more than inclusive times, per row.
  for (const auto& row : p.ops) EXPECT_LE(row.self_ns, row.total_ns) << row.op;
  // Per-op series: one value per step.
  for (const auto& s : p.series) EXPECT_EQ(s.step_self_ns.size(), 3u) << s.op;
}

TEST(Profiler, ModulesIncludeTheirSubmodules) {
  const auto& p = profiled().profile;
  std::map<std::string, profile::ModuleStats> modules;
  for (const auto& m : p.modules) modules[m.module] = m;
  ASSERT_TRUE(modules.count("blocks.0.mlp") && modules.count("blocks.0.mlp.fc1") &&
              modules.count("blocks.0.mlp.fc2"));
  const auto& mlp = modules["blocks.0.mlp"];
  EXPECT_EQ(mlp.total_ns,
            mlp.self_ns + modules["blocks.0.mlp.fc1"].total_ns + modules["blocks.0.mlp.fc2"].total_ns);
  EXPECT_EQ(modules[""].total_flops, p.total_flops());
}

TEST(Profiler, UncountedOpsAreListedNotZero) {
  const auto& p = profiled().profile;
  for (const auto& u : p.uncounted) {
    EXPECT_FALSE(profile::has_flops_formula(u.op)) << u.op;
    EXPECT_GT(u.calls, 0u);
  }
}

TEST(Profiler, MemoryPeakAndTimeline) {
  const auto& m = profiled().profile.memory;
  ASSERT_TRUE(m.reported) << "c10's CPU allocator did not report to the profiler";
  EXPECT_GT(m.peak_bytes, 0);
  EXPECT_GT(m.allocations, 0u);
  EXPECT_GE(m.peak_step, 1);
  EXPECT_FALSE(m.peak_op.empty());
  EXPECT_FALSE(m.timeline.empty());
  EXPECT_EQ(m.rss_bytes.size(), 3u);
  for (auto rss : m.rss_bytes) EXPECT_GT(rss, 0);
  // Every allocation of a step is freed by its end once Adam's state exists: nothing alive.
  std::int64_t alive = 0;
  for (const auto& a : m.alive_at_step_end) alive += a.bytes;
  EXPECT_EQ(alive, 0);
}

TEST(Profiler, TraceNestsStepsPhasesModulesAndOps) {
  const auto& p = profiled().profile;
  ASSERT_FALSE(p.trace.threads.empty());
  const auto summary = profile::summarize(p.trace);
  std::map<std::string, profile::FrameTotal> frames;
  for (const auto& f : summary.frames) frames[f.name] = f;
  EXPECT_EQ(frames["step"].calls, 3u);
  EXPECT_GT(frames["aten::mm"].calls, 0u);
  EXPECT_GT(frames["blocks.0.mlp.fc1"].calls, 0u);
  EXPECT_EQ(frames["forward"].calls, 3u);
  EXPECT_EQ(p.trace_evicted, 0u);
}

TEST(Profiler, OneAtATime) {
  demo::DemoConfig config;
  demo::DemoTrainer trainer(config);
  Profiler first(trainer.model());
  EXPECT_THROW(Profiler second(trainer.model()), Error);
  (void)first.stop();
  EXPECT_THROW((void)first.stop(), Error);
}

}  // namespace
}  // namespace tfdebug::torch
