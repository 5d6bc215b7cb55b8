// Where does a training step spend its time? Zones around a toy step on the main thread and a
// data-loading thread, written as a Chrome trace that Perfetto UI, chrome://tracing and
// `tfdebug trace` open.
//
//   build/release/examples/profile_zones step.json
//   tfdebug trace step.json                           # summary
//   tfdebug trace step.json -o step.speedscope.json   # for speedscope
#include <tfdebug/export/chrome_trace.hpp>
#include <tfdebug/profile/collector.hpp>
#include <tfdebug/profile/zone.hpp>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

namespace {

// Stand-ins for real work: a matrix product and an elementwise pass over n x n floats.
float matmul(std::vector<float>& c, const std::vector<float>& a, const std::vector<float>& b, int n) {
  TFDEBUG_ZONE("matmul");
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j) c[i * n + j] += a[i * n + k] * b[k * n + j];
  return c[0];
}

float gelu(std::vector<float>& x) {
  TFDEBUG_ZONE("gelu");
  float sum = 0;
  for (float& v : x) {
    v = v > 0 ? v : 0.01f * v;
    sum += v;
  }
  return sum;
}

}  // namespace

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "profile_trace.json";
  constexpr int kN = 64;
  tfdebug::profile::start();
  tfdebug::profile::set_thread_name("train");
  std::atomic<bool> done{false};
  std::thread loader([&done] {
    tfdebug::profile::set_thread_name("data loader");
    std::vector<float> batch(kN * kN);
    for (int n = 0; n < 3 || !done.load(); ++n) {  // at least 3 batches, however fast the step
      TFDEBUG_ZONE("load batch");
      for (std::size_t i = 0; i < batch.size(); ++i) batch[i] = static_cast<float>(i % 7);
      std::this_thread::sleep_for(std::chrono::microseconds(300));
    }
  });
  std::vector<float> a(kN * kN, 0.5f), b(kN * kN, 0.25f), c(kN * kN, 0.0f);
  float checksum = 0;
  for (int step = 0; step < 5; ++step) {
    TFDEBUG_ZONE("step");
    {
      TFDEBUG_ZONE("forward");
      checksum += matmul(c, a, b, kN);
      checksum += gelu(c);
    }
    {
      TFDEBUG_ZONE("backward");
      checksum += matmul(c, b, a, kN);
      checksum += matmul(c, a, a, kN);
    }
    TFDEBUG_COUNTER("loss", 1.0 / (step + 1));
  }
  TFDEBUG_INSTANT("done");
  done.store(true);
  loader.join();
  const tfdebug::profile::Trace trace = tfdebug::profile::stop();
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  std::ofstream out(path);
  tfdebug::write_chrome_trace(trace, out);
  out.close();
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", path);
    return 1;
  }
  const tfdebug::profile::RecordingStats stats = tfdebug::profile::stats();
  std::printf("wrote %s: %llu events from %llu threads, %llu dropped (checksum %g)\n", path,
              static_cast<unsigned long long>(stats.collected),
              static_cast<unsigned long long>(stats.threads), static_cast<unsigned long long>(stats.dropped),
              static_cast<double>(checksum));
  return 0;
}
