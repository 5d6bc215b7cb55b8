// libFuzzer: the PyTorch reader (ZIP locator + restricted unpickler + tensor views) on arbitrary
// bytes. It must throw tfdebug::Error or return views inside the input, proven by a stats pass
// under ASan.
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
  tfdebug::io::detail::OwnedBuffers owned;
  const std::span bytes(reinterpret_cast<const std::byte*>(data), size);
  (void)tfdebug::io::detail::is_pytorch_zip(bytes);
  try {
    tfdebug::io::detail::read_pytorch("fuzz.pt", bytes, tensors, metadata, owned);
  } catch (const tfdebug::Error&) {
    return 0;
  }
  for (const auto& t : tensors) (void)tfdebug::compute_stats(t.view);
  return 0;
}
