// Cost of Session::observe per call, against compute_stats alone on the same tensor (the floor:
// observe runs the stats kernel plus the rules). Small tensors show the per-call overhead (lock,
// rule look-ups, flight-recorder record); large ones show that the scan dominates.
#include <benchmark/benchmark.h>

#include <optional>
#include <random>
#include <string_view>
#include <vector>

#include "tfdebug/core/stats.hpp"
#include "tfdebug/session/session.hpp"
#include "tfdebug/session/spectral.hpp"

namespace {

std::vector<float> data(std::int64_t n) {
  std::mt19937 rng(1);
  std::normal_distribution<float> d(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = d(rng);
  return v;
}

void stats_only(benchmark::State& state) {
  const std::int64_t units = 64;
  const std::vector<float> v = data(state.range(0));
  const tfdebug::TensorView view(v.data(), tfdebug::DType::f32, {state.range(0) / units, units});
  for (auto _ : state) benchmark::DoNotOptimize(tfdebug::compute_stats(view));
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}

// `step` 0: a full-statistics step; 1: the one-pass summary (Note [Light outputs]).
void observe(benchmark::State& state, tfdebug::Phase phase, std::string_view op,
             std::optional<bool> inputs_finite, std::int64_t step = 0) {
  const std::int64_t units = 64;
  const std::vector<float> v = data(state.range(0));
  const tfdebug::TensorView view(v.data(), tfdebug::DType::f32, {state.range(0) / units, units});
  tfdebug::Session session;
  session.begin_step(step);
  for (auto _ : state)
    session.observe({step, phase, tfdebug::Role::output, "blocks.1.mlp", op, view, inputs_finite});
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}

// An op output in backward (no dead-unit or saturation rule): stats + nonfinite.
void observe_op_output(benchmark::State& state) {
  observe(state, tfdebug::Phase::backward, "aten::mm", true);
}

// A forward activation: stats + per-unit activity (column_nonzero) for dead units + nonfinite.
void observe_forward_activation(benchmark::State& state) {
  observe(state, tfdebug::Phase::forward, "relu", std::nullopt);
}

// The same op output on a step between full-statistics steps: compute_extremes + nonfinite.
void observe_op_output_summary(benchmark::State& state) {
  observe(state, tfdebug::Phase::backward, "aten::mm", true, 1);
}

// compute_extremes alone.
void extremes_only(benchmark::State& state) {
  const std::int64_t units = 64;
  const std::vector<float> v = data(state.range(0));
  const tfdebug::TensorView view(v.data(), tfdebug::DType::f32, {state.range(0) / units, units});
  for (auto _ : state) benchmark::DoNotOptimize(tfdebug::compute_extremes(view));
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}

// What a step marker hands the Session per parameter: its value, its gradient, its update, as a
// [n / 64, 64] weight (full statistics and the parameter rules; a spectral measurement only on
// its first sight, before the timed loop).
void observe_parameter_roles(benchmark::State& state) {
  const std::vector<float> v = data(state.range(0));
  std::vector<float> u = v;
  for (float& x : u) x *= 1e-3f;  // a typical update/weight ratio: no finding
  const tfdebug::TensorView view(v.data(), tfdebug::DType::f32, {state.range(0) / 64, 64});
  const tfdebug::TensorView update(u.data(), tfdebug::DType::f32, {state.range(0) / 64, 64});
  tfdebug::Session session;
  std::int64_t step = 0;
  auto one_step = [&] {
    session.begin_step(step);
    session.observe({step, tfdebug::Phase::forward, tfdebug::Role::parameter, "blocks.0.mlp.fc1",
                     "blocks.0.mlp.fc1.weight", view, std::nullopt});
    session.observe({step, tfdebug::Phase::backward, tfdebug::Role::gradient, "blocks.0.mlp.fc1",
                     "blocks.0.mlp.fc1.weight", view, std::nullopt});
    session.observe({step, tfdebug::Phase::optimizer, tfdebug::Role::update, "blocks.0.mlp.fc1",
                     "blocks.0.mlp.fc1.weight", update, std::nullopt});
    session.end_step(step, 1.0);
    ++step;
  };
  one_step();
  for (auto _ : state) one_step();
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4 * 3);
}

// compute_range alone (no zero test): what the light path takes of an output no unit rule reads.
void range_only(benchmark::State& state) {
  const std::vector<float> v = data(state.range(0));
  const tfdebug::TensorView view(v.data(), tfdebug::DType::f32, {state.range(0)});
  for (auto _ : state) benchmark::DoNotOptimize(tfdebug::compute_range(view));
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}

// compute_range_zeros alone, on a ReLU's output (about half the values +0): what a forward output
// takes while a sink wants per-step metrics (their count of zeros).
std::vector<float> relu_data(std::int64_t n);
void range_zeros_only(benchmark::State& state) {
  const std::vector<float> v = relu_data(state.range(0));
  const tfdebug::TensorView view(v.data(), tfdebug::DType::f32, {state.range(0)});
  for (auto _ : state) benchmark::DoNotOptimize(tfdebug::compute_range_zeros(view));
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}

// all_finite alone: the scan of an input an in-place op is about to overwrite.
void all_finite_only(benchmark::State& state) {
  const std::vector<float> v = data(state.range(0));
  const tfdebug::TensorView view(v.data(), tfdebug::DType::f32, {state.range(0)});
  for (auto _ : state) benchmark::DoNotOptimize(tfdebug::all_finite(view));
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}

// A ReLU's output (about half the values +0): its per-unit activity takes a second pass.
std::vector<float> relu_data(std::int64_t n) {
  std::vector<float> v = data(n);
  for (float& x : v) x = x > 0 ? x : 0.0f;
  return v;
}

// A ReLU output on a step between full-statistics steps: compute_extremes, then the unit pass.
void observe_relu_output_summary(benchmark::State& state) {
  const std::int64_t units = 64;
  const std::vector<float> v = relu_data(state.range(0));
  const tfdebug::TensorView view(v.data(), tfdebug::DType::f32, {state.range(0) / units, units});
  tfdebug::Session session;
  session.begin_step(1);
  for (auto _ : state)
    session.observe({1, tfdebug::Phase::forward, tfdebug::Role::output, "blocks.1.mlp", "aten::relu", view,
                     std::nullopt});
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}

// The unit pass alone: column_nonzero against row_summaries (which the Session used before),
// on a ReLU's [n / 64, 64] output.
void column_nonzero_only(benchmark::State& state) {
  const std::int64_t units = 64;
  const std::vector<float> v = relu_data(state.range(0));
  const tfdebug::TensorView view(v.data(), tfdebug::DType::f32, {state.range(0) / units, units});
  std::vector<std::uint8_t> active(units);
  for (auto _ : state) {
    tfdebug::column_nonzero(view, active.data());
    benchmark::DoNotOptimize(active.data());
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}
void row_summaries_only(benchmark::State& state) {
  const std::int64_t units = 64;
  const std::int64_t rows = state.range(0) / units;
  const std::vector<float> v = relu_data(state.range(0));
  const tfdebug::TensorView view(v.data(), tfdebug::DType::f32, {rows, units});
  std::vector<double> row_abs_max(static_cast<std::size_t>(rows));
  std::vector<std::uint8_t> row_zero(static_cast<std::size_t>(rows));
  std::vector<std::uint8_t> active(units);
  for (auto _ : state) {
    tfdebug::row_summaries(view, row_abs_max.data(), row_zero.data(), active.data());
    benchmark::DoNotOptimize(active.data());
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}

}  // namespace

// The spectral rule's measurement of a [n, n] f32 weight at its defaults (30 iterations at most,
// tolerance 1e-4): cold (the fixed start vector) and warm (from the last estimate's vector, as the
// rule measures the same matrix every 200 steps).
void spectral_estimate(benchmark::State& state, bool warm) {
  const std::int64_t n = state.range(0);
  const std::vector<float> w = data(n * n);
  const tfdebug::TensorView view(w.data(), tfdebug::DType::f32, {n, n});
  tfdebug::SpectralOptions options;
  options.max_iterations = 30;
  options.tolerance = 1e-4;
  if (warm) options.start = tfdebug::estimate_spectral_norm(view, options).right_vector;
  for (auto _ : state) benchmark::DoNotOptimize(tfdebug::estimate_spectral_norm(view, options));
  state.SetBytesProcessed(state.iterations() * n * n * 4);
}
void spectral_cold(benchmark::State& state) {
  spectral_estimate(state, false);
}
void spectral_warm(benchmark::State& state) {
  spectral_estimate(state, true);
}

BENCHMARK(spectral_cold)->Arg(128)->Arg(512);
BENCHMARK(spectral_warm)->Arg(128)->Arg(512);
BENCHMARK(extremes_only)->Arg(1 << 8)->Arg(1 << 14)->Arg(1 << 20);
BENCHMARK(observe_parameter_roles)->Arg(64)->Arg(1 << 9)->Arg(1 << 12);
BENCHMARK(range_only)->Arg(1 << 8)->Arg(1 << 14)->Arg(1 << 20);
BENCHMARK(range_zeros_only)->Arg(1 << 8)->Arg(1 << 14)->Arg(1 << 20);
BENCHMARK(all_finite_only)->Arg(1 << 8)->Arg(1 << 14)->Arg(1 << 20);
BENCHMARK(observe_op_output_summary)->Arg(1 << 8)->Arg(1 << 14)->Arg(1 << 20);
BENCHMARK(stats_only)->Arg(64)->Arg(1 << 11)->Arg(1 << 8)->Arg(1 << 14)->Arg(1 << 20);
BENCHMARK(observe_op_output)->Arg(1 << 8)->Arg(1 << 14)->Arg(1 << 20);
BENCHMARK(observe_forward_activation)->Arg(1 << 8)->Arg(1 << 14)->Arg(1 << 20);
BENCHMARK(observe_relu_output_summary)->Arg(1 << 8)->Arg(1 << 14)->Arg(1 << 20);
BENCHMARK(column_nonzero_only)->Arg(1 << 8)->Arg(1 << 14)->Arg(1 << 20);
BENCHMARK(row_summaries_only)->Arg(1 << 8)->Arg(1 << 14)->Arg(1 << 20);
BENCHMARK_MAIN();
