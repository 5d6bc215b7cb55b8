// libFuzzer: the metrics.jsonl reader (tfdebug::read_metrics_jsonl, what `tfdebug report`
// rebuilds every export from) on arbitrary bytes. It must throw tfdebug::Error, whose message is
// one line, or call back once per complete line and say so: steps equals the callbacks, first and
// last step are the first and the last callback's, and cut_off says whether the input ends in
// part of a line.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "input_file.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/export/metrics_files.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static tfdebug_fuzz::InputFile input("metrics.jsonl");
  const auto& path = input.write(data, size);
  std::int64_t calls = 0;
  std::int64_t first = 0;
  std::int64_t last = 0;
  try {
    const tfdebug::MetricsFileRead read =
        tfdebug::read_metrics_jsonl(path, [&](const tfdebug::StepMetrics& m) {
          if (calls++ == 0) first = m.step;
          last = m.step;
        });
    if (read.steps != calls || read.first_step != first || read.last_step != last) std::abort();
    if (read.cut_off != (size > 0 && data[size - 1] != '\n')) std::abort();
  } catch (const tfdebug::Error& e) {
    if (std::string(e.what()).find('\n') != std::string::npos) std::abort();
  }
  return 0;
}
