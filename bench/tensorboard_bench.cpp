// The TensorBoard writer's goals (docs/performance.md): add_scalar's median cost on the calling
// thread (<= 200 ns) and sustained throughput to a file (>= 1 M scalars/s, the writer thread
// encoding, framing and writing every record). Usage: tensorboard_bench [DIR]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "tfdebug/export/tensorboard.hpp"

int main(int argc, char** argv) {
  using Clock = std::chrono::steady_clock;
  const std::string dir =
      argc > 1 ? argv[1] : (std::filesystem::temp_directory_path() / "tfdebug_tb_bench").string();
  std::filesystem::remove_all(dir);
  constexpr int kBatch = 64;       // calls timed together (a clock read costs ~20 ns)
  constexpr int kBatches = 40000;  // 2.56 M scalars
  const char* const tags[] = {"loss", "grad_norm/blocks.0.attn.q", "update_ratio/blocks.1.mlp.fc1", "lr"};
  std::vector<double> per_call(kBatches);
  const auto start = Clock::now();
  {
    tfdebug::TensorBoardWriter tb(dir);
    std::int64_t step = 0;
    for (int b = 0; b < kBatches; ++b) {
      const auto t0 = Clock::now();
      for (int i = 0; i < kBatch; ++i, ++step)
        tb.add_scalar(tags[step & 3], 0.5 * static_cast<double>(i), step);
      per_call[static_cast<std::size_t>(b)] =
          std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / kBatch;
    }
  }  // close(): every record written
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::sort(per_call.begin(), per_call.end());
  const double scalars = double(kBatch) * kBatches;
  std::uintmax_t bytes = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir)) bytes += f.file_size();
  std::printf("add_scalar on the calling thread: median %.0f ns, p90 %.0f ns, p99 %.0f ns per call\n",
              per_call[per_call.size() / 2], per_call[per_call.size() * 9 / 10],
              per_call[per_call.size() * 99 / 100]);
  std::printf("sustained: %.0f scalars in %.3f s to close() = %.2f M scalars/s (%.1f MB written)\n", scalars,
              seconds, scalars / seconds / 1e6, static_cast<double>(bytes) / 1e6);
  std::filesystem::remove_all(dir);
}
