// libFuzzer: the static pickle scanner (include/tfdebug/io/pickle_scan.hpp). It never throws and
// never builds values: whatever the bytes, it must return, report at most one global per distinct
// name, stop no later than the input's end, and keep its printable names free of control bytes.
#include <cstdint>
#include <cstdlib>
#include <span>

#include "tfdebug/io/pickle_scan.hpp"

namespace {

void check(const tfdebug::io::PickleScan& scan, std::size_t size) {
  if (scan.end > size) std::abort();
  for (const tfdebug::io::PickleGlobal& g : scan.globals) {
    for (const char c : g.module + g.name) {
      if (static_cast<unsigned char>(c) < 0x20) std::abort();
    }
  }
  for (const tfdebug::io::PickleScan& n : scan.nested) check(n, size);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = std::span(reinterpret_cast<const std::byte*>(data), size);
  const tfdebug::io::PickleScan scan = tfdebug::io::scan_pickle("fuzz.pkl", bytes);
  check(scan, size);
  (void)scan.worst();
  for (const tfdebug::io::PickleGlobal& g : scan.globals) (void)tfdebug::io::global_message(g);
  return 0;
}
