// libFuzzer: the GGUF reader on arbitrary bytes. It must either throw tfdebug::Error or return
// tensors that lie inside the input, proven by a stats pass over every one of them under ASan
// (quantised tensors through the chunked decoder).
#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "readers.hpp"
#include "tfdebug/core/error.hpp"
#include "tfdebug/core/stats.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::vector<tfdebug::io::NamedTensor> tensors;
  std::map<std::string, std::string> metadata;
  try {
    tfdebug::io::detail::read_gguf("fuzz.gguf", std::span(reinterpret_cast<const std::byte*>(data), size),
                                   tensors, metadata);
  } catch (const tfdebug::Error&) {
    return 0;
  }
  for (const auto& t : tensors) {
    if (t.quantized) {
      (void)tfdebug::compute_stats(*t.quantized);
    } else {
      (void)tfdebug::compute_stats(t.view);
    }
  }
  return 0;
}
