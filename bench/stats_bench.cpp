// The stats kernel against a plain vectorised read-sum of the same buffer, single thread.
//
//   bench/run.sh            prints the table recorded in docs/performance.md (adds numpy)
//   build/release/bench/stats_bench --benchmark_filter=f32
//
// Data: files written by bench/make_data.py (TFDEBUG_BENCH_DATA=dir) so that numpy reads the
// very same bytes; without it the buffers are filled here with the same distribution.
#include <benchmark/benchmark.h>
#include <hwy/aligned_allocator.h>
#include <hwy/highway.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <string>

#include "tfdebug/core/stats.hpp"

namespace {

namespace hn = hwy::HWY_NAMESPACE;
using tfdebug::DType;

struct Buffer {
  hwy::AlignedFreeUniquePtr<std::uint8_t[]> bytes;
  std::size_t size = 0;
};

// Normal(0, 1) values in `dtype`, 256 MiB or 256 KiB.
const Buffer& buffer(DType dtype, std::size_t size) {
  static std::map<std::pair<int, std::size_t>, Buffer> cache;
  auto& b = cache[{static_cast<int>(dtype), size}];
  if (b.size != 0) return b;
  b.bytes = hwy::AllocateAligned<std::uint8_t>(size);
  b.size = size;
  const char* dir = std::getenv("TFDEBUG_BENCH_DATA");
  const std::string name = std::string(tfdebug::dtype_name(dtype)) + "_" + std::to_string(size) + ".bin";
  if (dir != nullptr) {
    std::ifstream in(std::string(dir) + "/" + name, std::ios::binary);
    if (in.read(reinterpret_cast<char*>(b.bytes.get()), static_cast<std::streamsize>(size))) return b;
  }
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const std::size_t n = size / tfdebug::dtype_size(dtype);
  for (std::size_t i = 0; i < n; ++i) {
    const float x = normal(rng);
    std::uint32_t bits;
    std::memcpy(&bits, &x, 4);
    if (dtype == DType::f32) {
      std::memcpy(b.bytes.get() + 4 * i, &x, 4);
    } else if (dtype == DType::bf16) {
      const auto h = static_cast<std::uint16_t>(bits >> 16);
      std::memcpy(b.bytes.get() + 2 * i, &h, 2);
    } else {  // f16 via the hardware-independent rounding of Highway's demotion
      const hn::ScalableTag<float> df;
      const hn::Rebind<hwy::float16_t, decltype(df)> dh;
      const auto v = hn::DemoteTo(dh, hn::Set(df, x));
      hwy::float16_t h;
      hn::StoreU(v, dh, &h);
      std::memcpy(b.bytes.get() + 2 * i, &h, 2);
    }
  }
  return b;
}

// A vectorised sum of the buffer as 64-bit integers: how fast this core reads memory.
std::uint64_t read_sum(const std::uint8_t* p, std::size_t size) {
  const hn::ScalableTag<std::uint64_t> d;
  const std::size_t lanes = hn::Lanes(d);
  auto a = hn::Zero(d), b = hn::Zero(d), c = hn::Zero(d), e = hn::Zero(d);
  const auto* q = reinterpret_cast<const std::uint64_t*>(p);
  const std::size_t n = size / 8;
  std::size_t i = 0;
  for (; i + 4 * lanes <= n; i += 4 * lanes) {
    a = hn::Add(a, hn::LoadU(d, q + i));
    b = hn::Add(b, hn::LoadU(d, q + i + lanes));
    c = hn::Add(c, hn::LoadU(d, q + i + 2 * lanes));
    e = hn::Add(e, hn::LoadU(d, q + i + 3 * lanes));
  }
  const auto sum = hn::Add(hn::Add(a, b), hn::Add(c, e));
  std::uint64_t total = hn::GetLane(hn::SumOfLanes(d, sum));
  for (; i < n; ++i) total += q[i];
  return total;
}

void BM_Stats(benchmark::State& state, DType dtype, std::size_t size) {
  const Buffer& b = buffer(dtype, size);
  const tfdebug::TensorView view(b.bytes.get(), dtype,
                                 {static_cast<std::int64_t>(size / tfdebug::dtype_size(dtype))});
  tfdebug::StatsOptions options;
  options.threads = 1;
  for (auto _ : state) benchmark::DoNotOptimize(tfdebug::compute_stats(view, options));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
  state.SetLabel(tfdebug::best_simd_target());
}

void BM_ReadSum(benchmark::State& state, DType dtype, std::size_t size) {
  const Buffer& b = buffer(dtype, size);
  for (auto _ : state) benchmark::DoNotOptimize(read_sum(b.bytes.get(), b.size));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * size));
}

constexpr std::size_t kLarge = std::size_t{256} << 20;
constexpr std::size_t kSmall = std::size_t{256} << 10;

void register_all() {
  for (DType dtype : {DType::f32, DType::bf16, DType::f16}) {
    for (std::size_t size : {kSmall, kLarge}) {
      const std::string suffix =
          std::string(tfdebug::dtype_name(dtype)) + "/" + (size == kLarge ? "256MiB" : "256KiB");
      benchmark::RegisterBenchmark(("stats/" + suffix).c_str(), BM_Stats, dtype, size);
      benchmark::RegisterBenchmark(("readsum/" + suffix).c_str(), BM_ReadSum, dtype, size);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
