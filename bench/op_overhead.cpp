// What tfdebug::torch adds to one LibTorch op in tier diagnose: single ops on small tensors (the
// optimizer's per-parameter ops are most of a training step's op count) with tfdebug off, attached
// to a sink that drops what it gets (the interception and the adapter alone), and attached to a
// Session (everything). The ratios to off in the same process are what docs/performance.md quotes.
//   OPENBLAS_NUM_THREADS=1 build/release/bench/op_overhead
#include <benchmark/benchmark.h>
#include <torch/torch.h>

#include <memory>
#include <optional>

#include "tfdebug/session/session.hpp"
#include "tfdebug/torch/attach.hpp"

namespace {

class NullSink : public tfdebug::ObservationSink {
 public:
  void begin_step(std::int64_t) override {}
  tfdebug::Verdict observe(const tfdebug::Observation&) override { return std::nullopt; }
  void end_step(std::int64_t, std::optional<double>) override {}
  tfdebug::Tier tier() const noexcept override { return tfdebug::Tier::diagnose; }
  bool should_stop() const noexcept override { return false; }
};

enum class With { off, null_sink, session };

struct Model : torch::nn::Module {
  Model() { weight = register_parameter("weight", torch::randn({512})); }
  torch::Tensor weight;
};

// Runs `op` inside one long step (step markers every 1024 iterations, as a training loop's
// hundreds of ops per step would).
template <class Op>
void run(benchmark::State& state, With with, Op op) {
  torch::manual_seed(0);
  auto model = std::make_shared<Model>();
  std::optional<tfdebug::Session> session;
  NullSink null_sink;
  std::optional<tfdebug::torch::Attachment> debug;
  if (with == With::session) {
    tfdebug::RunConfig config;
    config.tier = tfdebug::Tier::diagnose;
    session.emplace(config);
    debug.emplace(tfdebug::torch::attach(*session, *model));
  } else if (with == With::null_sink) {
    debug.emplace(tfdebug::torch::attach(null_sink, *model));
  }
  torch::NoGradGuard no_grad;
  auto a = torch::rand({512});
  auto b = torch::rand({512});
  std::int64_t step = 0;
  std::int64_t i = 0;
  if (debug) debug->step_begin(step);
  for (auto _ : state) {
    op(model->weight, a, b);
    if (++i % 1024 == 0 && debug) {
      debug->step_end(step, std::nullopt);
      debug->step_begin(++step);
    }
  }
  if (debug) debug->step_end(step, std::nullopt);
}

void mul_inplace(benchmark::State& state) {
  run(state, With(state.range(0)), [](torch::Tensor&, torch::Tensor& a, torch::Tensor&) { a.mul_(-1.0); });
}
void add_out_of_place(benchmark::State& state) {
  run(state, With(state.range(0)),
      [](torch::Tensor&, torch::Tensor& a, torch::Tensor& b) { benchmark::DoNotOptimize(torch::add(a, b)); });
}
void addcdiv_parameter(benchmark::State& state) {
  run(state, With(state.range(0)),
      [](torch::Tensor& w, torch::Tensor& a, torch::Tensor& b) { w.addcdiv_(a, b.add(1.0), -1e-9); });
}
void select_view(benchmark::State& state) {
  run(state, With(state.range(0)),
      [](torch::Tensor&, torch::Tensor& a, torch::Tensor&) { benchmark::DoNotOptimize(a.select(0, 3)); });
}

void modes(benchmark::internal::Benchmark* b) {
  b->ArgName("off_null_session")->Arg(0)->Arg(1)->Arg(2);
}

}  // namespace

BENCHMARK(mul_inplace)->Apply(modes);
BENCHMARK(add_out_of_place)->Apply(modes);
BENCHMARK(addcdiv_parameter)->Apply(modes);
BENCHMARK(select_view)->Apply(modes);
BENCHMARK_MAIN();
