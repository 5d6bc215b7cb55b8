// libFuzzer: the ONNX reader on arbitrary bytes. It must either throw tfdebug::Error or return
// views that lie inside the input (or its own decoded copies), proven by a stats pass under ASan.
// Every external data file the input names is the input itself, so the offset and length checks
// are fuzzed too.
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "readers.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/stats.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  (void)tfdebug::io::detail::sniff(bytes);
  std::vector<tfdebug::io::NamedTensor> tensors;
  std::map<std::string, std::string> metadata;
  tfdebug::io::detail::OwnedBuffers owned;
  tfdebug::ModelGraph graph;
  const tfdebug::io::detail::ExternalData external = [&](const std::string&) { return bytes; };
  try {
    tfdebug::io::detail::read_onnx("fuzz.onnx", bytes, external, tensors, metadata, owned, graph);
  } catch (const tfdebug::Error&) {
    return 0;
  }
  for (const auto& t : tensors) (void)tfdebug::compute_stats(t.view);
  return 0;
}
