// libFuzzer: the report.json reader (tfdebug::read_run_report, what `tfdebug report` reads first)
// on arbitrary bytes. It must throw tfdebug::Error, whose message is one line, or return a report
// whose text all came from the input: its version, findings' messages and modules are copies of
// JSON strings, never longer together than the bytes they were read from.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "input_file.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/session/run_report.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static tfdebug_fuzz::InputFile input("report.json");
  const auto& path = input.write(data, size);
  try {
    const tfdebug::RunReport report = tfdebug::read_run_report(path);
    std::size_t chars = report.version.size();
    for (const tfdebug::Finding& f : report.summary.findings) chars += f.message.size() + f.module.size();
    if (chars > size) std::abort();  // every string read came from the input
  } catch (const tfdebug::Error& e) {
    if (std::string(e.what()).find('\n') != std::string::npos) std::abort();
  }
  return 0;
}
